/**
 * Tables of a test's own with a stream, for the local stream poller's tests: `item-<n>` items
 * (optionally with more attributes) written one at a time, and every table deleted after the file.
 */
import { randomUUID } from 'node:crypto';
import {
  type AttributeValue,
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll } from 'vitest';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';

export const itemKey = (n: number) => `item-${String(n).padStart(4, '0')}`;

/** The `PK` of a record's item. */
export const keyOf = (record: DynamoDBRecord) =>
  record.dynamodb?.NewImage?.PK?.S ?? record.dynamodb?.Keys?.PK?.S ?? '';

export function streamTables(endpoint: string) {
  const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));
  const tables: string[] = [];
  afterAll(async () => {
    for (const name of tables)
      await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
    client.destroy();
  });
  return {
    async create(): Promise<string> {
      const name = `poller-${randomUUID()}`;
      await client.send(
        new CreateTableCommand({
          TableName: name,
          KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
          StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
        }),
      );
      tables.push(name);
      return name;
    },
    put(table: string, n: number, attributes: Record<string, AttributeValue> = {}) {
      return client.send(
        new PutItemCommand({ TableName: table, Item: { PK: { S: itemKey(n) }, ...attributes } }),
      );
    },
  };
}
