/** Parked work's reads and writes (items in `entities/parked-work.ts`; why, `lib/stream/parked.ts`). */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type newParkedWorkItem, PARKED_PARTITION } from './entities/parked-work.ts';
import { db, tableName } from './table/client.ts';
import { queryAll } from './table/query.ts';

/** Park `item` unless the same work is parked already (a batch handed over again): false then. */
export async function putParkedWork(item: ReturnType<typeof newParkedWorkItem>): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** Every parked piece of work (the partition holds only what DynamoDB refused). */
export function listParkedWork(): Promise<Array<Record<string, unknown>>> {
  return queryAll({
    KeyConditionExpression: 'PK = :pk',
    ExpressionAttributeValues: { ':pk': PARKED_PARTITION },
  });
}

/** Work run again with success is no longer parked. */
export async function deleteParkedWork(sk: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: { PK: PARKED_PARTITION, SK: sk } }));
}

/** Work run again that failed again stays, with its new error (cut to 1,000 characters). */
export async function reparkWork(item: Record<string, unknown>, error: string): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { ...item, error: error.slice(0, 1000) } }));
}
