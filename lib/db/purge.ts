import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { campaignExists } from './campaigns.ts';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { codeReservation } from './link-item.ts';

/** `T#<tenant>#C#<campaign>`: what a campaign's stream REMOVE record carries as its PK. */
export function parseCampaignPartition(pk: string): { tenant: string; campaignId: string } | undefined {
  const m = /^T#([A-Za-z0-9_.-]{1,64})#C#([0-9a-f-]{36})$/.exec(pk);
  return m ? { tenant: m[1]!, campaignId: m[2]! } : undefined;
}

type Key = { PK: string; SK: string };

const PAGE = 500;
const BATCH = 25; // BatchWriteItem's maximum
const PARALLEL_BATCHES = 4;
/**
 * Conditional writes of links in flight at once. A condition needs a single-item write (a batch
 * takes none); 32 stays under the SDK's 50 sockets, which it would otherwise queue and warn about.
 */
const PARALLEL_LINK_WRITES = 32;

async function deleteKeys(keyList: Key[]): Promise<void> {
  const chunks: Key[][] = [];
  for (let i = 0; i < keyList.length; i += BATCH) chunks.push(keyList.slice(i, i + BATCH));
  for (let i = 0; i < chunks.length; i += PARALLEL_BATCHES) {
    await Promise.all(chunks.slice(i, i + PARALLEL_BATCHES).map(deleteBatch));
  }
}

async function deleteBatch(batch: Key[]): Promise<void> {
  let pending = batch.map((Key) => ({ DeleteRequest: { Key } }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await db.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: pending } }),
    );
    pending = (UnprocessedItems?.[tableName] as typeof pending | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 8) throw new Error('BatchWriteItem kept items unprocessed');
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
}

/**
 * Replace one link of a deleted campaign by its code's reservation, only while the item at that
 * key is still that link (`id` is unique across the deployment; a reservation has none). An index
 * can show a link after it is gone, and its tenant may have issued the code again since: the
 * condition keeps a purge from ever overwriting that new link. False when there was nothing to do.
 */
export async function reserveCodeOf(tenant: string, link: { code: string; id: number }): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: codeReservation(tenant, link.code, new Date()),
        ConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': 'id' },
        ExpressionAttributeValues: { ':id': link.id },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** Run `fn` over `items`, at most `limit` at a time; the number of calls that returned true. */
async function countInParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<boolean>) {
  let next = 0;
  let count = 0;
  const worker = async () => {
    while (next < items.length) {
      if (await fn(items[next++] as T)) count++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return count;
}

/**
 * Remove what a deleted campaign left: its links (found through the campaign's GSI2 list), each
 * replaced by its code's reservation for the tenant (`reserveCodeOf`), and its referred users and
 * actions (its own partition, whose keys no other campaign can reuse, so plain batch deletes).
 * Works in pages until `deadline` (epoch ms) and reports whether it ran out of items, and how many
 * items it deleted or replaced. Refuses to touch a campaign that still exists, so a stray or
 * replayed message can do no harm. Every step is idempotent: a repeated pass is safe.
 */
export async function purgeCampaign(
  tenant: string,
  campaignId: string,
  deadline: number,
): Promise<{ deleted: number; done: boolean }> {
  if (await campaignExists(tenant, campaignId)) return { deleted: 0, done: true };
  let deleted = 0;

  // Paged with a cursor rather than always from the first page: an index entry can outlive its
  // link for a moment, and a replaced link that still showed would be read again and again. What
  // the index shows late is caught by the follow-up pass (`functions/queue/purge-campaign.ts`).
  let start: Record<string, unknown> | undefined;
  do {
    if (Date.now() > deadline) return { deleted, done: false };
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.campaignLinks(tenant, campaignId) },
        ProjectionExpression: 'referral_code, #id',
        ExpressionAttributeNames: { '#id': 'id' },
        Limit: PAGE,
        ExclusiveStartKey: start,
      }),
    );
    const links = (page.Items ?? []).map((i) => ({ code: String(i.referral_code), id: Number(i.id) }));
    deleted += await countInParallel(links, PARALLEL_LINK_WRITES, (link) => reserveCodeOf(tenant, link));
    start = page.LastEvaluatedKey;
  } while (start);

  for (;;) {
    if (Date.now() > deadline) return { deleted, done: false };
    // Always the first page, read consistently: what was deleted is gone from it, so no cursor.
    const { Items = [] } = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': keys.campaign(tenant, campaignId).PK },
        ProjectionExpression: 'PK, SK',
        ConsistentRead: true,
        Limit: PAGE,
      }),
    );
    if (Items.length === 0) break;
    await deleteKeys(Items.map((i) => ({ PK: String(i.PK), SK: String(i.SK) })));
    deleted += Items.length;
  }
  return { deleted, done: true };
}
