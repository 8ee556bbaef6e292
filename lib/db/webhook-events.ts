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
  newEventItems,
  newRedeliveryItem,
  nextSequence,
  SEQUENCE_PATTERN,
  type StoredEvent,
  storedEventFromItem,
} from './entities/webhook-event.ts';
import { rememberAnswer } from './idempotency.ts';
import type { Page } from './links.ts';
import { transactWrite } from './transactions.ts';

export const eventNotFound = (id: string) =>
  new ApiError('event_not_found', `No event with id ${truncate(id)}.`);

/**
 * Write an event into its campaign's feed, once: one transaction of the feed item and the lookup
 * item, on the condition that the lookup item is new. `false` when the event was written before
 * (a stream batch replayed).
 */
export async function recordFeedEvent(event: EventAttributes): Promise<boolean> {
  return (await recordFeedEvents([event])) === 1;
}

/** Events per feed transaction: two items each, the transaction's 100 items (about 1 MB at most of its 4 MB). */
export const FEED_EVENTS_PER_TRANSACTION = 50;

/**
 * Write a campaign's consecutive events into its feed in one transaction (at most
 * `FEED_EVENTS_PER_TRANSACTION`), so a burst costs one round trip per 50 events rather than one
 * each, and a reader sees all of them or none. When any was written before (a replayed stream
 * batch), the transaction writes nothing and the events are written one by one, each once.
 * Returns how many were written.
 */
export async function recordFeedEvents(events: readonly EventAttributes[]): Promise<number> {
  if (events.length === 0) return 0;
  const puts = (event: EventAttributes) => {
    const items = newEventItems(event, nextSequence());
    return [
      { Put: { TableName: tableName, Item: items.lookup, ConditionExpression: 'attribute_not_exists(PK)' } },
      { Put: { TableName: tableName, Item: items.feed } },
    ];
  };
  const result = await transactWrite(events.flatMap(puts));
  if (result.ok) return events.length;
  if (events.length === 1) return 0;
  let written = 0;
  for (const event of events) written += (await transactWrite(puts(event))).ok ? 1 : 0;
  return written;
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
