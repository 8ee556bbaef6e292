/**
 * `npm start` on a DATA_DIR kept by an older version: its table lacks the indexes added since
 * (GSI4, the analytics rankings). `ensureTable` adds what is missing and keeps every item, so the
 * upgrade needs no manual step. Runs against the run's DynamoDB Local, on a table of its own.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDocumentClient, dynamoClientConfig } from '../../lib/aws/clients.ts';
import { createTableInput, ensureTable } from '../../lib/local/dynamodb.ts';

const endpoint = inject('dynamodbEndpoint');
const name = `upgrade-${randomUUID()}`;
const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));

afterAll(async () => {
  await client.send(new DeleteTableCommand({ TableName: name })).catch(() => undefined);
  client.destroy();
});

describe('a table of an older version', () => {
  it('gets the indexes added since, and keeps its items', async () => {
    const current = createTableInput(name);
    const old = {
      ...current,
      GlobalSecondaryIndexes: current.GlobalSecondaryIndexes?.filter((g) => g.IndexName !== 'GSI4'),
      AttributeDefinitions: current.AttributeDefinitions?.filter((a) => !a.AttributeName?.startsWith('GSI4')),
    };
    await client.send(new CreateTableCommand(old));
    const doc = createDocumentClient(endpoint, undefined, 30_000);
    await doc.send(
      new PutCommand({ TableName: name, Item: { PK: 'LINK#KEEPME22', SK: 'LINK', total_clicks: 3 } }),
    );

    await ensureTable(endpoint, name);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual([
      'GSI1',
      'GSI2',
      'GSI3',
      'GSI4',
    ]);
    const { Item } = await doc.send(
      new GetCommand({ TableName: name, Key: { PK: 'LINK#KEEPME22', SK: 'LINK' } }),
    );
    expect(Item?.total_clicks).toBe(3);
    // A second start finds nothing to add.
    await ensureTable(endpoint, name);
    doc.destroy();
  });
});
