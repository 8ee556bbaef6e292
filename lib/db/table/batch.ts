import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { type WriteRequest, writeBatchOn } from './batch-write.ts';
import { db, tableName } from './client.ts';

export { WRITE_BATCH } from './batch-write.ts';

type Key = { PK: string; SK: string };
/** One string per item key, for maps keyed by item (the parts joined by a NUL, which no key holds). */
export const keyString = (k: Key) => `${k.PK}\u0000${k.SK}`;

/** BatchGetItem takes 100 keys per call. */
const KEYS_PER_BATCH_GET = 100;

/**
 * Read items by key, strongly consistent unless `consistent: false`: one BatchGetItem per 100 keys,
 * all at once (one round trip; a retry only for keys DynamoDB reports unprocessed). Results come
 * back in the order of the keys.
 */
export async function getItems(
  keyList: Key[],
  options: { consistent?: boolean; attributes?: readonly string[] } = {},
): Promise<Array<Record<string, unknown> | undefined>> {
  const chunks: Key[][] = [];
  for (let i = 0; i < keyList.length; i += KEYS_PER_BATCH_GET)
    chunks.push(keyList.slice(i, i + KEYS_PER_BATCH_GET));
  const found = new Map<string, Record<string, unknown>>();
  // The keys are always read, so that answers can be matched to keys.
  const projection = options.attributes && {
    ProjectionExpression: ['PK', 'SK', ...options.attributes].map((_, i) => `#p${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(
      ['PK', 'SK', ...options.attributes].map((a, i) => [`#p${i}`, a]),
    ),
  };
  for (const chunk of await Promise.all(
    chunks.map((c) => getBatch(c, options.consistent ?? true, projection)),
  ))
    for (const item of chunk) found.set(keyString(item as Key), item);
  // By key, not a search per key: a list page asks for up to 1,000.
  return keyList.map((k) => found.get(keyString(k)));
}

async function getBatch(
  keyList: Key[],
  consistent: boolean,
  projection?: { ProjectionExpression: string; ExpressionAttributeNames: Record<string, string> },
): Promise<Record<string, unknown>[]> {
  const found: Record<string, unknown>[] = [];
  let pending: Key[] = keyList;
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { Responses, UnprocessedKeys } = await db.send(
      new BatchGetCommand({
        RequestItems: { [tableName]: { Keys: pending, ConsistentRead: consistent, ...projection } },
      }),
    );
    found.push(...(Responses?.[tableName] ?? []));
    pending = (UnprocessedKeys?.[tableName]?.Keys as Key[] | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 5) throw new Error('BatchGetItem left keys unprocessed');
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
  return found;
}

/**
 * Up to 25 puts or deletes in one BatchWriteItem on the functions' table, retrying what DynamoDB
 * leaves unprocessed; see `writeBatchOn`.
 */
export const writeBatch = (batch: readonly WriteRequest[]) => writeBatchOn({ db, tableName }, batch);
