/**
 * BatchWriteItem with its unprocessed items retried, on any client and table: no configuration
 * read here, so operators' scripts and the local stack's start use it as the functions do.
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** BatchWriteItem's maximum. */
export const WRITE_BATCH = 25;

type Key = { PK: string; SK: string };
export type WriteRequest =
  | { PutRequest: { Item: Record<string, unknown> } }
  | { DeleteRequest: { Key: Key } };

/**
 * Up to 25 puts or deletes in one BatchWriteItem, retrying what DynamoDB leaves unprocessed (with
 * backoff); throws when some stay unprocessed. Returns how many were written.
 */
export async function writeBatchOn(
  on: { db: DynamoDBDocumentClient; tableName: string },
  batch: readonly WriteRequest[],
): Promise<number> {
  let pending = [...batch];
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await on.db.send(
      new BatchWriteCommand({ RequestItems: { [on.tableName]: pending } }),
    );
    pending = (UnprocessedItems?.[on.tableName] as WriteRequest[] | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 8) throw new Error('BatchWriteItem kept items unprocessed');
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
  return batch.length;
}
