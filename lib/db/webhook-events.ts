/** The events feed and the event lookup: reads and writes (items in `entities/webhook-event.ts`). */
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, campaignNotFound, truncate } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import type { EventAttributes } from '../domain/webhook-events.ts';
import { WRITE_BATCH, writeBatch } from './batch.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { db, tableName } from './client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor } from './cursor.ts';
import { campaignPartition } from './entities/campaign.ts';
import {
  eventFromItem,
  eventLookupKey,
  FEED_SK_PREFIX,
  type FeedCounter,
  type FeedEvent,
  feedCounterItem,
  feedCounterOf,
  feedEventOf,
  feedSequenceKey,
  firstFeedSequence,
  formatSequence,
  newEventLookupItem,
  newFeedItem,
  newRedeliveryItem,
  nextFeedCounter,
  SEQUENCE_PATTERN,
  shardPosition,
  storedEventFromItem,
} from './entities/webhook-event.ts';
import { rememberAnswer } from './idempotency.ts';
import type { Page } from './links.ts';
import { transactWrite } from './transactions.ts';

export const eventNotFound = (id: string) =>
  new ApiError('event_not_found', `No event with id ${truncate(id)}.`);

/** Events per feed transaction: a feed item each, the counter and the campaign's check, within the transaction's 100 items (about 1 MB at most of its 4 MB). */
export const FEED_EVENTS_PER_TRANSACTION = 98;

/** An event as the stream consumer hands it to the feed: with its stream record's sequence number. */
export interface FeedRecord {
  streamSequence: string;
  event: EventAttributes;
}

/**
 * The feed counter this container last wrote or saw per campaign (null: none exists): what a
 * writer expects the counter to hold. A wrong guess costs a retry, never a wrong sequence or a
 * second write (the counter comes back whole with the failed condition). Bounded: the oldest
 * entry goes first.
 */
const knownCounters = new Map<string, FeedCounter | null>();
const KNOWN_COUNTERS_MAX = 10_000;
/** Tries of one transaction against writers of the same campaign (a pause between, up to 200 ms). */
const COUNTER_TRIES = 50;

async function readCounter(tenant: string, campaignId: string): Promise<FeedCounter | null> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: feedSequenceKey(tenant, campaignId), ConsistentRead: true }),
  );
  return feedCounterOf(Item) ?? null;
}

/**
 * Write one campaign's consecutive events of one stream shard, in stream order, into its feed (at
 * most `FEED_EVENTS_PER_TRANSACTION`), each once: first their lookup items (idempotent puts, in
 * batches), then one transaction of the campaign's feed counter, moved from the value expected to
 * the last sequence given and with the shard's position at the last record, a check that the
 * campaign still exists, and each event's feed item. A burst costs one transaction per 98 events
 * rather than one each, and a reader sees all of them or none, numbered in the order of commit
 * (the header of `entities/webhook-event.ts`). Records at or before the shard's position were
 * written before (a replayed stream batch) and are left out. When the counter held another value
 * (another writer of the campaign went first), the transaction is made again from the counter it
 * held. Events of a deleted campaign are not written (a visit's event can reach the stream after
 * the delete, from another partition): nothing lands in a partition the purge has passed, the
 * lookups apart, which expire. Returns how many events were written.
 */
export async function recordFeedEvents(shardId: string, records: readonly FeedRecord[]): Promise<number> {
  const first = records[0]?.event;
  if (!first) return 0;
  const { tenant, campaign_id: campaignId } = first;
  if (records.some((r) => r.event.tenant !== tenant || r.event.campaign_id !== campaignId))
    throw new Error('recordFeedEvents: events of one campaign only');
  const campaign = `${tenant}#${campaignId}`;
  let counter = knownCounters.get(campaign);
  if (counter === undefined) counter = await readCounter(tenant, campaignId);
  let lookupsWritten = false;
  for (let attempt = 0; ; attempt++) {
    if (attempt >= COUNTER_TRIES)
      throw new Error(`feed counter of ${campaign} kept moving: gave up after ${attempt} tries`);
    const position = shardPosition(counter ?? undefined, shardId);
    const pending = records.filter((r) => BigInt(r.streamSequence) > position);
    if (pending.length === 0) {
      remember(campaign, counter);
      return 0;
    }
    if (!lookupsWritten) {
      const lookups = pending.map((r) => ({ PutRequest: { Item: newEventLookupItem(r.event) } }));
      const batches = [];
      for (let i = 0; i < lookups.length; i += WRITE_BATCH) batches.push(lookups.slice(i, i + WRITE_BATCH));
      await Promise.all(batches.map(writeBatch));
      lookupsWritten = true;
    }
    const start = counter?.sequence ?? firstFeedSequence();
    const next = nextFeedCounter(
      counter ?? undefined,
      start + pending.length,
      shardId,
      pending.at(-1)!.streamSequence,
    );
    const moveCounter = {
      Put: {
        TableName: tableName,
        Item: feedCounterItem(tenant, campaignId, next),
        ConditionExpression: counter ? '#s = :expected' : 'attribute_not_exists(PK)',
        ...(counter
          ? {
              ExpressionAttributeNames: { '#s': 'sequence' },
              ExpressionAttributeValues: { ':expected': counter.sequence },
            }
          : {}),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
    const puts = pending.map((r, i) => ({
      Put: { TableName: tableName, Item: newFeedItem(r.event, formatSequence(start + 1 + i)) },
    }));
    const result = await transactWrite([moveCounter, campaignStillExists(tenant, campaignId), ...puts]);
    if (result.ok) {
      remember(campaign, next);
      return pending.length;
    }
    if (result.failed.has(1)) {
      // The campaign is gone (campaign ids are never reused): its events go nowhere.
      knownCounters.delete(campaign);
      return 0;
    }
    // Only the counter's condition failed: another writer of the campaign went first. Go on from
    // what it holds, after a jittered pause, so that writers of one campaign (a shard each) take
    // turns rather than colliding again at once.
    counter = feedCounterOf(result.old.get(0)) ?? null;
    remember(campaign, counter);
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 5 * 2 ** attempt)));
  }
}

function remember(campaign: string, counter: FeedCounter | null) {
  knownCounters.delete(campaign);
  knownCounters.set(campaign, counter);
  if (knownCounters.size > KNOWN_COUNTERS_MAX) knownCounters.delete(knownCounters.keys().next().value!);
}

export interface FeedPage extends Page<FeedEvent> {
  /** Where a later poll continues: after this page's last event, or where this page started. */
  pollCursor: string;
}

/** The position before every event: where a feed read without a cursor starts. */
const FEED_START = '0'.repeat(16);

/**
 * One page of a campaign's feed, oldest first: one Query (limit + 1 items) beside the campaign
 * check. Besides the usual next cursor, every page has a poll cursor, which a client keeps to ask
 * later for what came after: it holds the last sequence read, so it yields only newer events.
 */
export async function listFeed(
  tenant: string,
  campaignId: string,
  options: { limit: number; cursor?: string },
): Promise<FeedPage> {
  const scope = { kind: 'events' as const, tenant, campaignId };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, SEQUENCE_PATTERN) : FEED_START;
  const [page, exists] = await Promise.all([
    db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :after AND :end',
        ExpressionAttributeValues: {
          ':pk': campaignPartition(tenant, campaignId),
          // BETWEEN is inclusive: start one past the cursor's sequence.
          ':after': `${FEED_SK_PREFIX}${after}~`,
          ':end': `${FEED_SK_PREFIX}~`,
        },
        ConsistentRead: true,
        Limit: options.limit + 1,
      }),
    ),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const stored = (page.Items ?? []).map(storedEventFromItem);
  const shown = stored.slice(0, options.limit);
  const last = shown.at(-1);
  const more = stored.length > options.limit || page.LastEvaluatedKey !== undefined;
  const position = last?.sequence ?? after;
  return {
    items: shown.map(feedEventOf),
    nextCursor: more && last ? encodeSortKeyCursor(scope, last.sequence) : undefined,
    pollCursor: encodeSortKeyCursor(scope, position),
  };
}

/** An event of the tenant by id (one GetItem), with its campaign; 404 when unknown or expired. */
export async function getStoredEvent(tenant: string, eventId: string): Promise<EventAttributes> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: eventLookupKey(tenant, eventId), ConsistentRead: true }),
  );
  if (!Item) throw eventNotFound(eventId);
  return eventFromItem(Item);
}

/**
 * Ask for a fresh delivery of `event`: one transaction of the redelivery item (which the stream
 * consumer puts on the first-attempt queue) and a check that the campaign still exists.
 */
export async function requestRedelivery(
  event: EventAttributes,
  remember?: { request: IdempotentRequest; body: unknown },
): Promise<void> {
  const nonce = randomBytes(6).toString('base64url');
  const result = await transactWrite(
    [
      { Put: { TableName: tableName, Item: newRedeliveryItem(event, nonce) } },
      campaignStillExists(event.tenant, event.campaign_id),
    ],
    remember && rememberAnswer(remember.request, 202, remember.body),
  );
  if (!result.ok) throw eventNotFound(event.event_id);
}
