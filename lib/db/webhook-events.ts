/** The events feed and the event lookup: reads and writes (items in `entities/webhook-event.ts`). */
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, campaignNotFound, truncate } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import type { EventAttributes } from '../domain/webhook-events.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { db, tableName } from './client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor } from './cursor.ts';
import { campaignPartition } from './entities/campaign.ts';
import {
  eventLookupKey,
  FEED_SK_PREFIX,
  type FeedEvent,
  feedEventOf,
  feedSequenceKey,
  firstFeedSequence,
  formatSequence,
  newEventItems,
  newRedeliveryItem,
  SEQUENCE_PATTERN,
  type StoredEvent,
  storedEventFromItem,
} from './entities/webhook-event.ts';
import { rememberAnswer } from './idempotency.ts';
import type { Page } from './links.ts';
import { transactWrite } from './transactions.ts';

export const eventNotFound = (id: string) =>
  new ApiError('event_not_found', `No event with id ${truncate(id)}.`);

/** Events per feed transaction: two items each and the counter, within the transaction's 100 items (about 1 MB at most of its 4 MB). */
export const FEED_EVENTS_PER_TRANSACTION = 49;

/**
 * The last feed sequence this container wrote or saw per campaign: the value a writer expects its
 * campaign's counter to hold. A wrong guess costs a retry, never a wrong sequence (the counter
 * item's old value comes back with the failed condition). Bounded: the oldest entry goes first.
 */
const knownSequences = new Map<string, number | undefined>();
const KNOWN_SEQUENCES_MAX = 10_000;
/** Tries of one transaction against writers of the same campaign (a pause between, up to 200 ms). */
const COUNTER_TRIES = 50;

/**
 * Write one campaign's consecutive events into its feed (at most `FEED_EVENTS_PER_TRANSACTION`),
 * each once: one transaction of the campaign's feed counter moved from the value expected to the
 * last sequence given, each event's feed item, and each event's lookup item on the condition that
 * it is new. A burst costs one round trip per 49 events rather than one each, and a reader sees
 * all of them or none, numbered in the order of commit (the module header of
 * `entities/webhook-event.ts`). When the counter held another value (another writer of the
 * campaign went first), the transaction is made again from the value it held; events whose
 * lookup exists were written before (a replayed stream batch) and are left out. Returns how many
 * were written.
 */
export async function recordFeedEvents(events: readonly EventAttributes[]): Promise<number> {
  const first = events[0];
  if (!first) return 0;
  if (events.some((e) => e.tenant !== first.tenant || e.campaign_id !== first.campaign_id))
    throw new Error('recordFeedEvents: events of one campaign only');
  const campaign = `${first.tenant}#${first.campaign_id}`;
  const counter = feedSequenceKey(first.tenant, first.campaign_id);
  let pending = [...events];
  for (let attempt = 0; pending.length > 0; attempt++) {
    if (attempt >= COUNTER_TRIES)
      throw new Error(`feed counter of ${campaign} kept moving: gave up after ${attempt} tries`);
    const expected = knownSequences.get(campaign);
    const start = expected ?? firstFeedSequence();
    const last = start + pending.length;
    const moveCounter = {
      Put: {
        TableName: tableName,
        Item: { ...counter, type: 'webhook_feed_sequence', sequence: last },
        ConditionExpression: expected === undefined ? 'attribute_not_exists(PK)' : '#s = :expected',
        ...(expected === undefined
          ? {}
          : {
              ExpressionAttributeNames: { '#s': 'sequence' },
              ExpressionAttributeValues: { ':expected': expected },
            }),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
      },
    };
    const puts = pending.flatMap((event, i) => {
      const items = newEventItems(event, formatSequence(start + 1 + i));
      return [
        {
          Put: { TableName: tableName, Item: items.lookup, ConditionExpression: 'attribute_not_exists(PK)' },
        },
        { Put: { TableName: tableName, Item: items.feed } },
      ];
    });
    const result = await transactWrite([moveCounter, ...puts]);
    if (result.ok) {
      remember(campaign, last);
      return pending.length;
    }
    if (result.failed.has(0)) {
      const held = result.old.get(0)?.sequence;
      remember(campaign, typeof held === 'number' ? held : undefined);
      // Another writer of the campaign went first: a jittered pause, so that writers of one
      // campaign (a shard each) take turns rather than colliding again at once.
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(200, 5 * 2 ** attempt)));
    }
    // A lookup that exists: that event is in the feed already.
    pending = pending.filter((_, i) => !result.failed.has(1 + 2 * i));
  }
  return 0;
}

function remember(campaign: string, sequence: number | undefined) {
  knownSequences.delete(campaign);
  knownSequences.set(campaign, sequence);
  if (knownSequences.size > KNOWN_SEQUENCES_MAX) knownSequences.delete(knownSequences.keys().next().value!);
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
export async function getStoredEvent(tenant: string, eventId: string): Promise<StoredEvent> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: eventLookupKey(tenant, eventId), ConsistentRead: true }),
  );
  if (!Item) throw eventNotFound(eventId);
  return storedEventFromItem(Item);
}

/**
 * Ask for a fresh delivery of `event`: one transaction of the redelivery item (which the stream
 * consumer puts on the first-attempt queue) and a check that the campaign still exists.
 */
export async function requestRedelivery(
  event: StoredEvent,
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
