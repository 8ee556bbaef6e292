import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { hasLookupItem } from '../domain/webhook-events.ts';
import { campaignExists } from './campaigns.ts';
import { campaignPartition } from './entities/campaign.ts';
import { decoder } from './entities/decode.ts';
import { CAMPAIGN_LINKS_INDEX, campaignLinksPartition, codeReservation } from './entities/link.ts';
import { visitPartitions } from './entities/visit.ts';
import { ATTEMPT_STATUSES, attemptLogPartition } from './entities/webhook-attempt.ts';
import {
  eventIdsOfFeedItem,
  eventLookupKey,
  FEED_IDS_PROJECTION,
  FEED_SK_PREFIX,
} from './entities/webhook-event.ts';
import { WRITE_BATCH, writeBatch } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { transactWrite } from './table/transactions.ts';

export { parseCampaignPartition } from './entities/campaign.ts';

const linkField = decoder('link');
const recordField = decoder('campaign record');

type Key = { PK: string; SK: string };

const PAGE = 500;
const PARALLEL_BATCHES = 4;
/**
 * Links replaced per transaction (TransactWriteItems takes at most 100 items) and transactions in
 * flight at once. A condition needs a single-item write or a transaction (a batch takes none); one
 * transaction of 100 conditional Puts is one round trip instead of 100, at twice the write units
 * per item in AWS (a purge is rare; a 100,000-link campaign costs about $0.25 of writes).
 */
const LINKS_PER_TRANSACTION = 100;
const PARALLEL_TRANSACTIONS = 4;

/** Delete up to 25 keys in one BatchWriteItem (retrying what it leaves unprocessed); how many. */
const deleteBatch = (batch: Key[]) => writeBatch(batch.map((Key) => ({ DeleteRequest: { Key } })));

/**
 * The write that replaces one link of a deleted campaign by its code's reservation, only while the
 * item at that key is still that link (`id` is unique across the deployment; a reservation has
 * none). An index can show a link after it is gone, and its tenant may have issued the code again
 * since: the condition keeps a purge from ever overwriting that new link.
 */
function reserveCodeOf(tenant: string, link: { code: string; id: number }, at: Date) {
  return {
    Put: {
      TableName: tableName,
      Item: codeReservation(tenant, link.code, at),
      ConditionExpression: '#id = :id',
      ExpressionAttributeNames: { '#id': 'id' },
      ExpressionAttributeValues: { ':id': link.id },
    },
  };
}

/**
 * Replace links by their reservations in one transaction; the number replaced. A link whose
 * condition fails (already replaced, or its code re-issued) is left out and the rest go again:
 * a cancelled transaction writes nothing.
 */
export async function reserveCodes(
  tenant: string,
  links: Array<{ code: string; id: number }>,
): Promise<number> {
  const at = new Date();
  let pending = links;
  while (pending.length > 0) {
    const result = await transactWrite(pending.map((link) => reserveCodeOf(tenant, link, at)));
    if (result.ok) return pending.length;
    pending = pending.filter((_, i) => !result.failed.has(i));
  }
  return 0;
}

/** Split `items` into chunks of `size` and run `fn` over them, at most `limit` at a time; the sum. */
async function sumInParallel<T>(
  items: T[],
  size: number,
  limit: number,
  fn: (chunk: T[]) => Promise<number>,
) {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  let next = 0;
  let sum = 0;
  const worker = async () => {
    while (next < chunks.length) sum += await fn(chunks[next++] as T[]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, chunks.length) }, worker));
  return sum;
}

/**
 * Remove what a deleted campaign left: its links (found through the campaign's GSI2 list), each
 * replaced by its code's reservation for the tenant (`reserveCodeOf`), and its referred users,
 * actions, conversions (with their pointers, external ids and refunds) and the lookup items of
 * their events (its own partition, whose keys no other campaign can reuse, so plain batch deletes).
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
        IndexName: CAMPAIGN_LINKS_INDEX.indexName,
        KeyConditionExpression: `${CAMPAIGN_LINKS_INDEX.partitionKey} = :pk`,
        ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, campaignId) },
        ProjectionExpression: 'referral_code, #id',
        ExpressionAttributeNames: { '#id': 'id' },
        Limit: PAGE,
        ExclusiveStartKey: start,
      }),
    );
    const links = (page.Items ?? []).map((i) => ({
      code: linkField.string(i, 'referral_code'),
      id: linkField.number(i, 'id'),
    }));
    deleted += await sumInParallel(links, LINKS_PER_TRANSACTION, PARALLEL_TRANSACTIONS, (chunk) =>
      reserveCodes(tenant, chunk),
    );
    start = page.LastEvaluatedKey;
  } while (start);

  // The campaign's own partition (referred users, actions, its events feed, its analytics), its
  // visits' partitions, then its delivery
  // log's partitions (the whole log and one per status). A feed item takes its event's lookup item
  // (another partition, keyed by event id) with it, so a deleted campaign's event bodies do not
  // wait for their 30-day expiry.
  const partitions = [
    campaignPartition(tenant, campaignId),
    ...visitPartitions(tenant, campaignId),
    attemptLogPartition(tenant, campaignId),
    ...ATTEMPT_STATUSES.map((status) => attemptLogPartition(tenant, campaignId, status)),
  ];
  for (const partition of partitions) {
    for (;;) {
      if (Date.now() > deadline) return { deleted, done: false };
      // Always the first page, read consistently: what was deleted is gone from it, so no cursor.
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk',
          ExpressionAttributeValues: { ':pk': partition },
          ProjectionExpression: `PK, SK, ${FEED_IDS_PROJECTION.expression}`,
          ExpressionAttributeNames: FEED_IDS_PROJECTION.names,
          ConsistentRead: true,
          Limit: PAGE,
        }),
      );
      if (Items.length === 0) break;
      const keyList = Items.flatMap((i) => {
        const key = { PK: recordField.string(i, 'PK'), SK: recordField.string(i, 'SK') };
        const eventIds = key.SK.startsWith(FEED_SK_PREFIX) ? eventIdsOfFeedItem(i).filter(hasLookupItem) : [];
        return [...eventIds.map((id) => eventLookupKey(tenant, id)), key];
      });
      deleted += await sumInParallel(keyList, WRITE_BATCH, PARALLEL_BATCHES, deleteBatch);
    }
  }
  return { deleted, done: true };
}
