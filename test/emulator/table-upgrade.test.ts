/**
 * `npm start` on a DATA_DIR kept by an older version: its table lacks the indexes added since
 * (GSI3, a referrer's links) and has one dropped since (GSI4, the rankings before issue 27).
 * `ensureTable` adds what is missing, removes what is dropped and keeps every item, so the
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
  it('gets the indexes added since, loses those dropped since, and keeps its items', async () => {
    const current = createTableInput(name);
    const dropped = {
      IndexName: 'GSI4',
      KeySchema: [
        { AttributeName: 'GSI4PK', KeyType: 'HASH' as const },
        { AttributeName: 'GSI4SK', KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'KEYS_ONLY' as const },
    };
    const old = {
      ...current,
      GlobalSecondaryIndexes: [
        ...(current.GlobalSecondaryIndexes ?? []).filter((g) => g.IndexName !== 'GSI3'),
        dropped,
      ],
      AttributeDefinitions: [
        ...(current.AttributeDefinitions ?? []).filter((a) => !a.AttributeName?.startsWith('GSI3')),
        { AttributeName: 'GSI4PK', AttributeType: 'S' as const },
        { AttributeName: 'GSI4SK', AttributeType: 'S' as const },
      ],
    };
    await client.send(new CreateTableCommand(old));
    const doc = createDocumentClient(endpoint, undefined, 30_000);
    await doc.send(
      new PutCommand({ TableName: name, Item: { PK: 'LINK#KEEPME22', SK: 'LINK', total_clicks: 3 } }),
    );

    await ensureTable(endpoint, name);

    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    expect(Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName).sort()).toEqual(['GSI1', 'GSI2', 'GSI3']);
    const { Item } = await doc.send(
      new GetCommand({ TableName: name, Key: { PK: 'LINK#KEEPME22', SK: 'LINK' } }),
    );
    expect(Item?.total_clicks).toBe(3);
    // A second start finds nothing to add.
    await ensureTable(endpoint, name);
    doc.destroy();
  });
});
