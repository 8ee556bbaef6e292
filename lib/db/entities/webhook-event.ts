/**
 * The events feed (endpoint 19) and the event lookup behind redelivery (endpoint 20).
 *
 *   feed item     PK `T#<tenant>#C#<campaign>`   SK `EV#<last sequence, 16 digits>`   TTL `expires_at`
 *   event lookup  PK `T#<tenant>#EVT#<event id>`   SK `EVENT`                    TTL `expires_at`
 *   redelivery    PK `T#<tenant>#C#<campaign>`   SK `RD#<event id>#<nonce>`      TTL `expires_at`
 *   redeliveries  PK `T#<tenant>#C#<campaign>`   SK `RDN#<event id>#<hour>`      TTL `expires_at`
 *   feed counter  PK `T#<tenant>#C#<campaign>`   SK `EVSEQ`                      no TTL
 *
 * Written by the table stream consumer (`lib/webhooks/feed.ts`) for every event it sees. A feed
 * item holds the consecutive events one feed transaction numbered (`first` to the sequence in its
 * key; `evz`: the events, deflated JSON), so a burst of events costs one item rather than one
 * each: a transaction's item costs 2 WRU per KB, and a hundred events of one campaign compress to
 * a few KB. The sequences of a campaign's feed are consecutive (each transaction moves the counter
 * by the number of events it writes), so the items that hold sequences `a` to `b` are those keyed
 * from `a` to `b` and the first one after `b` (see `listFeed`). An item written before packing
 * holds one event (`evt_*` attributes) at the sequence of its key. The feed item sits in its
 * campaign's partition, so the campaign's purge removes it and, by the event id
 * it holds, the lookup item (else both expire in 30 days); every reader checks the campaign first.
 *
 * The campaign's feed counter is moved in the same transaction as the feed items it numbers, on
 * the condition that it still holds the value the writer read: writers of one campaign (one stream
 * consumer per shard, and a campaign's events come from its partition and its 16 visit partitions,
 * so from several shards at once) are serialised by it, so sequences increase in the order the
 * feed items commit. A reader that sees an event has so seen every earlier one, and a cursor
 * holding the last sequence read yields only newer events. A campaign's first counter starts at
 * the clock in microseconds (ms × 1000), above the sequences written before the counter existed,
 * which were the writer's clock.
 *
 * Exactly once: the counter also holds, per stream shard, the last stream record whose event that
 * shard's consumer wrote (`shards`, moved in the same transaction). A shard's records come in
 * order, so a batch handed again (a Lambda retry, a restarted local poller) skips every record at
 * or before its shard's position, and the transaction's condition on the counter makes the check
 * and the write one. A position is kept 25 hours after its last write (the stream keeps records 24
 * hours: no record of an older shard can come again), so the counter stays small. The lookup item
 * is written before the transaction (idempotently, outside it: it holds the event, not its
 * sequence), so every event in the feed has its lookup.
 *
 * The event attributes are stored as `evt_*`, never `event_type`: an item carrying `event_type`
 * is an event to the stream consumer's filter, and these items must not be sent again. The one
 * exception is the redelivery item, which is exactly that: a request to send the event again.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import {
  type EventAttributes,
  isWebhookEventType,
  WEBHOOK_HISTORY_SECONDS,
  type WebhookEventType,
} from '../../domain/webhook-events.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

export const FEED_SK_PREFIX = 'EV#';
export const REDELIVERY_SK_PREFIX = 'RD#';
const REDELIVERY_COUNT_SK_PREFIX = 'RDN#';
/** A feed sequence: the campaign's feed counter, 16 digits. */
export const SEQUENCE_PATTERN = /^\d{16}$/;
const FEED_SEQUENCE_SK = 'EVSEQ';

/** The campaign's feed counter: the last sequence given to one of its feed items. */
export function feedSequenceKey(tenant: string, campaignId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: FEED_SEQUENCE_SK } as const;
}

/** Per stream shard: the last record written into the feed (`s`, its sequence number) and when (`at`, ms). */
export type ShardPositions = Record<string, { s: string; at: number }>;

/** A feed counter as stored: the last feed sequence given, and the shards' positions (see the header). */
export interface FeedCounter {
  sequence: number;
  shards: ShardPositions;
}

/** How long a shard's position is kept after its last write: the stream's 24 h retention and an hour. */
export const SHARD_POSITION_KEEP_MS = 25 * 60 * 60 * 1000;

export function feedCounterItem(tenant: string, campaignId: string, counter: FeedCounter) {
  return { ...feedSequenceKey(tenant, campaignId), type: 'webhook_feed_sequence', ...counter };
}

/** The counter an item holds, or undefined when there is none. */
export function feedCounterOf(item: Record<string, unknown> | undefined): FeedCounter | undefined {
  if (!item || typeof item.sequence !== 'number') return undefined;
  const shards = typeof item.shards === 'object' && item.shards !== null ? item.shards : {};
  return { sequence: item.sequence, shards: shards as ShardPositions };
}

/**
 * The counter after writing up to `sequence`, with `shardId` at `streamSequence`: positions not
 * written for 25 hours are dropped (no record of theirs can come again).
 */
export function nextFeedCounter(
  before: FeedCounter | undefined,
  sequence: number,
  shardId: string,
  streamSequence: string,
  nowMs = Date.now(),
): FeedCounter {
  const shards: ShardPositions = {};
  for (const [id, position] of Object.entries(before?.shards ?? {}))
    if (nowMs - position.at < SHARD_POSITION_KEEP_MS) shards[id] = position;
  shards[shardId] = { s: streamSequence, at: nowMs };
  return { sequence, shards };
}

/** The last stream record of `shardId` whose event is in the feed: -1 when none. */
export function shardPosition(counter: FeedCounter | undefined, shardId: string): bigint {
  const s = counter?.shards[shardId]?.s;
  return s === undefined ? -1n : BigInt(s);
}

/** Where a campaign's first feed counter starts: the clock in microseconds (see the header). */
export const firstFeedSequence = (nowMs = Date.now()) => nowMs * 1000;

export const formatSequence = (n: number) => String(n).padStart(16, '0');

export function feedKey(tenant: string, campaignId: string, sequence: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: `${FEED_SK_PREFIX}${sequence}` } as const;
}

export function eventLookupKey(tenant: string, eventId: string) {
  return { PK: `T#${tenant}#EVT#${eventId}`, SK: 'EVENT' } as const;
}

/** An event as the feed answers it: exactly the webhook body, with `id` = `webhook-id`. */
export interface FeedEvent {
  id: string;
  type: WebhookEventType;
  timestamp: string;
  campaign_id: string;
  data: Record<string, unknown>;
}

/** A stored event: what the feed lists, with its place in the feed. */
export interface StoredEvent extends EventAttributes {
  sequence: string;
}

function eventFields(event: EventAttributes, nowSeconds: number) {
  return {
    tenant: event.tenant,
    campaign_id: event.campaign_id,
    evt_id: event.event_id,
    evt_type: event.event_type,
    evt_time: event.event_time,
    evt_json: event.event_json,
    expires_at: nowSeconds + WEBHOOK_HISTORY_SECONDS,
  };
}

export const FEED_PACK_TYPE = 'webhook_event_pack';
/**
 * The most event bytes (JSON, before deflating) one feed item holds: far under DynamoDB's 400 KB
 * item limit whatever the compression does, and 98 events of a transaction stay within its 4 MB.
 */
export const FEED_PACK_MAX_BYTES = 256 * 1024;

/** An event as a feed item packs it: `[id, type, time, json]` (tenant and campaign are the item's). */
type PackedEvent = [string, string, string, string];
const packed = (e: EventAttributes): PackedEvent => [e.event_id, e.event_type, e.event_time, e.event_json];
const packedBytes = (e: EventAttributes) => Buffer.byteLength(JSON.stringify(packed(e))) + 1;

/**
 * Consecutive events of one campaign, split into the runs one feed item each holds (in order, at
 * most `FEED_PACK_MAX_BYTES` each; one event alone may be more).
 */
export function feedPacks<T extends { event: EventAttributes }>(records: readonly T[]): T[][] {
  const packs: T[][] = [];
  let bytes = Infinity;
  for (const r of records) {
    const size = packedBytes(r.event);
    if (bytes + size > FEED_PACK_MAX_BYTES) {
      packs.push([]);
      bytes = 0;
    }
    packs.at(-1)!.push(r);
    bytes += size;
  }
  return packs;
}

/**
 * The feed item of consecutive events of one campaign, numbered from `firstSequence`: keyed by the
 * last sequence, the events deflated (a burst of one campaign's events repeats most of its bytes).
 */
export function newFeedPackItem(
  events: readonly EventAttributes[],
  firstSequence: number,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  const first = events[0];
  if (!first) throw new Error('newFeedPackItem: no events');
  return {
    ...feedKey(first.tenant, first.campaign_id, formatSequence(firstSequence + events.length - 1)),
    type: FEED_PACK_TYPE,
    tenant: first.tenant,
    campaign_id: first.campaign_id,
    first: firstSequence,
    evz: deflateRawSync(JSON.stringify(events.map(packed))),
    expires_at: nowSeconds + WEBHOOK_HISTORY_SECONDS,
  };
}

/** The feed item of one event, at `sequence` in its campaign's feed (as written before packing). */
export function newFeedItem(
  event: EventAttributes,
  sequence: string,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  return {
    ...feedKey(event.tenant, event.campaign_id, sequence),
    type: 'webhook_event',
    ...eventFields(event, nowSeconds),
  };
}

/** The lookup item of one event (by its id): the same whenever it is written again. */
export function newEventLookupItem(event: EventAttributes, nowSeconds = Math.floor(Date.now() / 1000)) {
  return {
    ...eventLookupKey(event.tenant, event.event_id),
    type: 'webhook_event_lookup',
    ...eventFields(event, nowSeconds),
  };
}

/**
 * A request to deliver `event` again: an item with the event attributes themselves, so the stream
 * consumer puts it on the first-attempt queue like any new event; kept a day (the stream holds
 * records for 24 h).
 */
export function newRedeliveryItem(
  event: EventAttributes,
  nonce: string,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  return {
    PK: campaignPartition(event.tenant, event.campaign_id),
    SK: `${REDELIVERY_SK_PREFIX}${event.event_id}#${nonce}`,
    type: 'webhook_redelivery',
    event_id: event.event_id,
    event_type: event.event_type,
    event_time: event.event_time,
    event_json: event.event_json,
    tenant: event.tenant,
    campaign_id: event.campaign_id,
    redelivery: nonce,
    expires_at: nowSeconds + 24 * 60 * 60,
  };
}

/**
 * Redelivery requests of one event per clock hour, at most this many (docs/decisions.md,
 * "Redelivery is capped per event"): each request of a failing receiver's event starts a whole
 * retry schedule of its own, so an uncapped endpoint multiplies POSTs at the receiver.
 */
export const REDELIVERIES_PER_HOUR = 5;
const HOUR_SECONDS = 3600;

/** The hour (epoch seconds of its start) a request at `nowSeconds` counts in, and its end. */
export function redeliveryWindow(nowSeconds: number) {
  const start = nowSeconds - (nowSeconds % HOUR_SECONDS);
  return { start, end: start + HOUR_SECONDS };
}

/**
 * The transaction item that counts one redelivery request of `event` in its hour, failing (so
 * nothing of the request is written) once the hour holds `REDELIVERIES_PER_HOUR`. In the campaign's
 * partition, so the campaign's purge takes it; gone an hour after its hour ends.
 */
export function countRedelivery(tableName: string, event: EventAttributes, nowSeconds: number) {
  const window = redeliveryWindow(nowSeconds);
  return {
    Update: {
      TableName: tableName,
      Key: {
        PK: campaignPartition(event.tenant, event.campaign_id),
        SK: `${REDELIVERY_COUNT_SK_PREFIX}${event.event_id}#${window.start}`,
      },
      UpdateExpression: 'ADD requests :one SET #type = :type, expires_at = :expires',
      ConditionExpression: 'attribute_not_exists(requests) OR requests < :cap',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: {
        ':one': 1,
        ':type': 'webhook_redelivery_count',
        ':expires': window.end + HOUR_SECONDS,
        ':cap': REDELIVERIES_PER_HOUR,
      },
    },
  };
}

const field = decoder('webhook event');
const isEventType = (t: unknown): t is WebhookEventType => isWebhookEventType(t);

/** The event an item holds in its `<prefix>id`, `<prefix>type`, `<prefix>time` and `<prefix>json`. */
function eventNamed(item: StoredItem, prefix: 'evt_' | 'event_'): EventAttributes {
  const type = field.string(item, `${prefix}type`);
  if (!isEventType(type)) return field.fail(item, `${prefix}type`, 'an event type');
  return {
    event_id: field.string(item, `${prefix}id`),
    event_type: type,
    event_time: field.string(item, `${prefix}time`),
    event_json: field.string(item, `${prefix}json`),
    tenant: field.string(item, 'tenant'),
    campaign_id: field.string(item, 'campaign_id'),
  };
}

/**
 * The event an action item (or a visit item) carries in its event attributes: what a redelivery
 * of `evt_action_<id>_<campaign>` sends (the same attributes the stream handed the pipeline).
 */
export const eventFromActionItem = (item: StoredItem) => eventNamed(item, 'event_');

/** The event a lookup item, or a feed item written before packing, holds (`evt_*`: no `event_type`). */
export const eventFromItem = (item: StoredItem) => eventNamed(item, 'evt_');

/** The last sequence a feed item holds: its sort key's. */
export function lastSequenceOf(item: StoredItem): number {
  const sk = field.string(item, 'SK');
  const sequence = sk.slice(FEED_SK_PREFIX.length);
  if (!sk.startsWith(FEED_SK_PREFIX) || !SEQUENCE_PATTERN.test(sequence))
    field.fail(item, 'SK', 'a feed item key');
  return Number(sequence);
}

/** The events a feed item holds, in order, each with its sequence (a pack's, or the one of an older item). */
export function storedEventsFromItem(item: StoredItem): StoredEvent[] {
  const last = lastSequenceOf(item);
  if (item.type !== FEED_PACK_TYPE) return [{ ...eventFromItem(item), sequence: formatSequence(last) }];
  const tenant = field.string(item, 'tenant');
  const campaignId = field.string(item, 'campaign_id');
  const first = field.number(item, 'first');
  if (!Number.isSafeInteger(first) || first > last) field.fail(item, 'first', 'the first sequence');
  const events = packedEventsOf(item);
  if (events.length !== last - first + 1) field.fail(item, 'evz', `${last - first + 1} events`);
  return events.map((e, i) => {
    const [id, type, time, json] = Array.isArray(e) ? e : [];
    if (typeof id !== 'string' || !isEventType(type) || typeof time !== 'string' || typeof json !== 'string')
      return field.fail(item, 'evz', 'events of [id, type, time, json]');
    return {
      event_id: id,
      event_type: type,
      event_time: time,
      event_json: json,
      tenant,
      campaign_id: campaignId,
      sequence: formatSequence(first + i),
    };
  });
}

/** A packed feed item's events as stored (`evz`, inflated): an array, each entry still to check. */
function packedEventsOf(item: StoredItem): unknown[] {
  const bytes = item.evz instanceof Uint8Array ? item.evz : field.fail(item, 'evz', 'deflated events');
  const events: unknown = JSON.parse(inflateRawSync(bytes).toString('utf8'));
  return Array.isArray(events) ? events : field.fail(item, 'evz', 'an array of events');
}

/**
 * The ids of the events a feed item holds (read with `FEED_IDS_PROJECTION`): what the purge
 * deletes the lookups of.
 */
export function eventIdsOfFeedItem(item: StoredItem): string[] {
  if (item.type !== FEED_PACK_TYPE) return [field.string(item, 'evt_id')];
  return packedEventsOf(item).map((e) =>
    Array.isArray(e) && typeof e[0] === 'string' ? e[0] : field.fail(item, 'evz', 'events with ids'),
  );
}
/** What `eventIdsOfFeedItem` reads of an item, besides its key (`type` is a reserved word). */
export const FEED_IDS_PROJECTION = { expression: 'evt_id, evz, #type', names: { '#type': 'type' } };

/** The feed's answer for a stored event: the webhook body (data parsed from the stored text). */
export function feedEventOf(event: StoredEvent): FeedEvent {
  return {
    id: event.event_id,
    type: event.event_type,
    timestamp: event.event_time,
    campaign_id: event.campaign_id,
    data: JSON.parse(event.event_json) as Record<string, unknown>,
  };
}
