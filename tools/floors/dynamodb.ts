/**
 * The cold-start floor of a function that uses DynamoDB alone (every HTTP function): nothing but
 * the DynamoDB document client and one command (`floorOf` in `tools/bundles.ts` picks the floors).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const db = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const tableName = process.env.TABLE_NAME;

export async function handler(event: { id?: string }) {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: { PK: `ITEM#${event.id ?? ''}`, SK: 'ITEM' } }),
  );
  return Item ?? null;
}
