/**
 * A table of a test file's own in the run's DynamoDB Local, for migrations of an older table: made
 * with the stack's definition, given `items` as an older version wrote them, then prepared as the
 * local stack's start prepares a table kept from an earlier version (`prepareLocalTable`), and
 * deleted after the file.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { createTableInput } from '../../lib/local/dynamodb.ts';
import { prepareLocalTable } from '../../lib/local/stack.ts';
import { runStack } from './run-stack.ts';
import { type Table, table } from './table.ts';

export interface PreparedTable {
  readonly name: string;
  /** The table's client; set once the file's `beforeAll` has run. */
  t: Table;
  /** What the preparation reported, step by step. */
  readonly steps: string[];
}

export function preparedTableOfItsOwn(
  prefix: string,
  items: readonly Record<string, unknown>[],
): PreparedTable {
  const endpoint = runStack().dynamodbEndpoint;
  const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));
  const own: PreparedTable = { name: `${prefix}-${randomUUID().slice(0, 8)}`, t: undefined!, steps: [] };
  beforeAll(async () => {
    await client.send(new CreateTableCommand(createTableInput(own.name)));
    own.t = table({ dynamodbEndpoint: endpoint, tableName: own.name });
    for (const Item of items) await own.t.db.send(new PutCommand({ TableName: own.name, Item }));
    await prepareLocalTable(endpoint, own.name, (s) => own.steps.push(s));
  }, 120_000);
  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: own.name }));
    client.destroy();
  });
  return own;
}
