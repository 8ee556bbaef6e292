/** The events feed and the event lookup: reads and writes (items in `entities/webhook-event.ts`). */
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, campaignNotFound, truncate } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import {
  type EventAttributes,
  hasLookupItem,
  parseActionEventId,
  WEBHOOK_HISTORY_SECONDS,
} from '../domain/webhook-events.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { actionKey } from './entities/action.ts';
import { campaignPartition } from './entities/campaign.ts';
import { visitKey } from './entities/visit.ts';
import {
  countRedelivery,
  eventFromActionItem,
  eventFromItem,
  eventLookupKey,
  FEED_SK_PREFIX,
  type FeedCounter,
  type FeedEvent,
  feedCounterItem,
  feedCounterOf,
  feedEventOf,
  feedPacks,
  feedSequenceKey,
  firstFeedSequence,
  formatSequence,
  lastSequenceOf,
  newEventLookupItem,
  newFeedPackItem,
  newRedeliveryItem,
  nextFeedCounter,
  REDELIVERIES_PER_HOUR,
  redeliveryWindow,
  SEQUENCE_PATTERN,
  type StoredEvent,
  shardPosition,
  storedEventsFromItem,
} from './entities/webhook-event.ts';
import { rememberAnswer } from './idempotency.ts';
import { getItems, WRITE_BATCH, writeBatch } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor, type Page } from './table/cursor.ts';
import { queryAll } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

export const eventNotFound = (id: string) =>
  new ApiError('event_not_found', `No event with id ${truncate(id)}.`);

/**
 * Events per feed transaction: with the counter and the campaign's check, within the
 * transaction's 100 items even when each event fills a feed item of its own.
 */
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
 * most `FEED_EVENTS_PER_TRANSACTION`), each once: first the lookup items of those that have one
 * (`hasLookupItem`: a referred user's; idempotent puts, in batches), then one transaction of the
 * campaign's feed counter, moved from the value expected to the last sequence given and with the
 * shard's position at the last record, a check that the campaign still exists, and the feed item
 * that holds the events (more than one only past 256 KB of events). A burst costs one transaction
 * and one item per 98 events rather than one each, and a reader sees all of them or none,
 * numbered in the order of commit (the header of `entities/webhook-event.ts`). Records at or
 * before the shard's position were written before (a replayed stream batch) and are left out.
 * When the counter held another value (another writer of the campaign went first), the
 * transaction is made again from the counter it held. Events of a deleted campaign are not
 * written (a visit's event can reach the stream after the delete, from another partition):
 * nothing lands in a partition the purge has passed, the lookups apart, which expire. Returns
 * how many events were written.
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
      const lookups = pending
        .filter((r) => hasLookupItem(r.event.event_id))
        .map((r) => ({ PutRequest: { Item: newEventLookupItem(r.event) } }));
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
    let sequence = start + 1;
    const puts = feedPacks(pending).map((pack) => {
      const Item = newFeedPackItem(
        pack.map((r) => r.event),
        sequence,
      );
      sequence += pack.length;
      return { Put: { TableName: tableName, Item } };
    });
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
/** Rounds of reads one page makes at most across gaps in the sequences (see `feedAfter`). */
const FEED_ROUNDS = 8;
/**
 * Past every sequence a feed gives (the clock in microseconds reaches it in the year 2255): a cursor
 * beyond it, which only a hand-made one can hold, reads nothing, and sums stay exact integers.
 */
const FEED_SEQUENCE_MAX = 9e15;

/** A campaign's feed items keyed (by last sequence) after `after`, up to `upTo`, in order. */
const feedItems = (pk: string, after: number, upTo: number) =>
  queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :after AND :end',
    // BETWEEN is inclusive: start one past `after`.
    ExpressionAttributeValues: {
      ':pk': pk,
      ':after': `${FEED_SK_PREFIX}${formatSequence(after)}~`,
      ':end': `${FEED_SK_PREFIX}${formatSequence(upTo)}`,
    },
    ConsistentRead: true,
  });

/** A campaign's first feed item keyed after `after`, if any. */
async function feedItemAfter(pk: string, after: number): Promise<Record<string, unknown> | undefined> {
  const { Items } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'PK = :pk AND SK BETWEEN :after AND :end',
      ExpressionAttributeValues: {
        ':pk': pk,
        ':after': `${FEED_SK_PREFIX}${formatSequence(after)}~`,
        ':end': `${FEED_SK_PREFIX}~`,
      },
      ConsistentRead: true,
      Limit: 1,
    }),
  );
  return Items?.[0];
}

/**
 * The first `want` events of a campaign's feed after sequence `after` (fewer at its end), and
 * whether it has more. A campaign's sequences are consecutive, so the events `after + 1` to
 * `after + want` are in the items keyed (by their last sequence) within that range and in the first
 * item past it: two Queries at once. Only a gap in the sequences (where the campaign's feed
 * counter started, or below it items written before the counter) asks for another round from the
 * last event read; after `FEED_ROUNDS` the page is shorter, with a cursor. A read from the start
 * (no cursor) does not know where the sequences begin: its first round reads the first item alone,
 * and the next goes on from it.
 */
async function feedAfter(pk: string, after: number, want: number) {
  const events: StoredEvent[] = [];
  let from = after;
  for (let round = 0; round < FEED_ROUNDS; round++) {
    const upTo = from + want - events.length;
    // From the start (no cursor) nothing lies in a range of small numbers: the first item alone.
    const [inRange, end] = await Promise.all([
      from === 0 ? [] : feedItems(pk, from, upTo),
      feedItemAfter(pk, from === 0 ? 0 : upTo),
    ]);
    for (const item of end ? [...inRange, end] : inRange)
      for (const event of storedEventsFromItem(item)) if (Number(event.sequence) > from) events.push(event);
    if (!end) return { events: events.slice(0, want), more: false };
    if (events.length >= want) return { events: events.slice(0, want), more: true };
    from = lastSequenceOf(end);
  }
  return { events, more: true };
}

/**
 * One page of a campaign's feed, oldest first: two Queries at once (the items that hold the next
 * limit + 1 events, `feedAfter`) beside the campaign check; from the start, the first item
 * before. Besides the usual next cursor, every page has a poll cursor, which a client keeps to
 * ask later for what came after: it holds the last sequence read, so it yields only newer events.
 */
export async function listFeed(
  tenant: string,
  campaignId: string,
  options: { limit: number; cursor?: string },
): Promise<FeedPage> {
  const scope = { kind: 'events' as const, tenant, campaignId };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, SEQUENCE_PATTERN) : FEED_START;
  const [page, exists] = await Promise.all([
    Number(after) > FEED_SEQUENCE_MAX
      ? { events: [], more: false }
      : feedAfter(campaignPartition(tenant, campaignId), Number(after), options.limit + 1),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const shown = page.events.slice(0, options.limit);
  const last = shown.at(-1);
  const more = page.more || page.events.length > options.limit;
  const position = last?.sequence ?? after;
  return {
    items: shown.map(feedEventOf),
    nextCursor: more && last ? encodeSortKeyCursor(scope, last.sequence) : undefined,
    pollCursor: encodeSortKeyCursor(scope, position),
  };
}

/**
 * An event of the tenant by id, with its campaign; 404 when unknown or past the 30 days the feed
 * keeps. An action's event (`evt_action_<id>_<campaign>`) is read from the action item itself: the
 * API's in the campaign's partition, a visit's in one of its visit partitions (one BatchGetItem of
 * both keys); any other (a referred user's, an action's of the older form) from its lookup item
 * (one GetItem).
 */
export async function getStoredEvent(tenant: string, eventId: string): Promise<EventAttributes> {
  const action = parseActionEventId(eventId);
  if (!action) {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: eventLookupKey(tenant, eventId), ConsistentRead: true }),
    );
    if (!Item) throw eventNotFound(eventId);
    return eventFromItem(Item);
  }
  const { actionId, campaignId } = action;
  const items = await getItems([
    actionKey(tenant, campaignId, actionId),
    visitKey(tenant, campaignId, actionId),
  ]);
  const item = items.find((i) => i?.event_id === eventId);
  if (!item) throw eventNotFound(eventId);
  const event = eventFromActionItem(item);
  if (Date.now() - Date.parse(event.event_time) > WEBHOOK_HISTORY_SECONDS * 1000)
    throw eventNotFound(eventId);
  return event;
}

/** 429: the event's redeliveries of this hour are used up; `seconds` until the next hour. */
export const redeliveryLimited = (eventId: string, seconds: number) =>
  new ApiError(
    'rate_limited',
    `Event ${truncate(eventId)} was redelivered ${REDELIVERIES_PER_HOUR} times this hour, the most an event may be; retry after ${seconds} second${seconds === 1 ? '' : 's'}.`,
    undefined,
    seconds,
  );

/**
 * Ask for a fresh delivery of `event`: one transaction of the redelivery item (which the stream
 * consumer puts on the first-attempt queue), a check that the campaign still exists, and the
 * event's count of redeliveries this hour, which refuses the request past `REDELIVERIES_PER_HOUR`
 * (429 with the seconds to the next hour): the cap and the write are one, so concurrent requests
 * cannot pass it together, and a refused request writes nothing.
 */
export async function requestRedelivery(
  event: EventAttributes,
  remember?: { request: IdempotentRequest; body: unknown },
): Promise<void> {
  const nonce = randomBytes(6).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const result = await transactWrite(
    [
      { Put: { TableName: tableName, Item: newRedeliveryItem(event, nonce) } },
      campaignStillExists(event.tenant, event.campaign_id),
      countRedelivery(tableName, event, now),
    ],
    remember && rememberAnswer(remember.request, 202, remember.body),
  );
  if (result.ok) return;
  if (result.failed.has(1)) throw eventNotFound(event.event_id);
  if (result.failed.has(2))
    throw redeliveryLimited(event.event_id, Math.max(1, redeliveryWindow(now).end - now));
  throw eventNotFound(event.event_id);
}
