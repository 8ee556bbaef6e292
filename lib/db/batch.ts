import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';

type Key = { PK: string; SK: string };

/**
 * Read a few items by key in one strongly consistent BatchGetItem (one round trip; a retry only
 * for keys DynamoDB reports unprocessed). Results come back in the order of the keys.
 */
export async function getItems(keyList: Key[]): Promise<Array<Record<string, unknown> | undefined>> {
  const found: Record<string, unknown>[] = [];
  let pending: Key[] = keyList;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
    );
    found.push(...(Responses?.[tableName] ?? []));
    pending = (UnprocessedKeys?.[tableName]?.Keys as Key[] | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 5) throw new Error('BatchGetItem left keys unprocessed');
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
  return keyList.map((k) => found.find((i) => i.PK === k.PK && i.SK === k.SK));
}

/** BatchWriteItem's maximum. */
export const WRITE_BATCH = 25;

type WriteRequest = { PutRequest: { Item: Record<string, unknown> } } | { DeleteRequest: { Key: Key } };

/**
 * Up to 25 puts or deletes in one BatchWriteItem, retrying what DynamoDB leaves unprocessed (with
 * backoff); throws when some stay unprocessed. Returns how many were written.
 */
export async function writeBatch(batch: readonly WriteRequest[]): Promise<number> {
  let pending = [...batch];
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await db.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: pending } }),
    );
    pending = (UnprocessedItems?.[tableName] as WriteRequest[] | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 8) throw new Error('BatchWriteItem kept items unprocessed');
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
  return batch.length;
}
