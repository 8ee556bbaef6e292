import { PURGE_RECORD_FILTER } from '../db/purge-filter.ts';

/**
 * Which table stream records the two stream consumers handle (a record passes a mapping if it
 * matches any of its filters); plain data, shared by the CDK constructs (the event source
 * mappings' filters, so other writes never even invoke a consumer) and the local stream pollers,
 * which apply them as the mappings do (`lib/local/stream-filters.ts`: DynamoDB Local has no
 * filtering of its own). A mapping passes several kinds of records, which the consumers' code
 * tells apart within a batch (`isEventRecord`, `isLinkActionRecord`, `contributionOf`).
 *
 * Webhook events: INSERTs of items that carry `event_type` (see `lib/domain/webhook-events.ts`).
 */
export const EVENT_RECORD_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { event_type: { S: [{ exists: true }] } } },
} as const;

/**
 * Actions recorded on their link's item (`POST /action/referred_user`): MODIFYs of a link whose
 * new image carries `last_action` (see `lib/db/actions.ts`), which the consumer turns into the
 * action's own event-bearing item.
 */
export const LINK_ACTION_RECORD_FILTER = {
  eventName: ['MODIFY'],
  dynamodb: { NewImage: { last_action: { M: { id: { N: [{ exists: true }] } } } } },
} as const;

/**
 * Bot visits (`lib/db/entities/visit.ts`): no event, only counted by the rollups
 * (`lib/analytics/contributions.ts`), which also read the event records above (their INSERTs only).
 */
export const BOT_VISIT_RECORD_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: ['bot_visit'] } } },
} as const;

/**
 * A reward's change of state (`lib/db/entities/reward.ts`): a reward item is written whole, and
 * carries its new state's event attributes only in the write that changed its state, so a MODIFY
 * whose new image has `event_type` is an event (`isRewardEventRecord`); its INSERT (creation) is
 * an event record like any other (`EVENT_RECORD_FILTER`).
 */
export const REWARD_EVENT_RECORD_FILTER = {
  eventName: ['MODIFY'],
  dynamodb: { NewImage: { type: { S: ['reward'] }, event_type: { S: [{ exists: true }] } } },
} as const;

/** The webhook consumer's mapping's filters (`functions/stream/enqueue-webhook-events.ts`). */
export const STREAM_CONSUMER_FILTERS = [
  EVENT_RECORD_FILTER,
  LINK_ACTION_RECORD_FILTER,
  REWARD_EVENT_RECORD_FILTER,
] as const;

/**
 * The second reader's mapping's filters (`functions/stream/feed-and-rollups.ts`): the events for
 * the feed (event items, and link actions, whose events are fed from their link's record), what
 * the rollups count (event items, their INSERTs only, and bot visits) and the campaign REMOVEs
 * that start a purge.
 */
export const FEED_AND_ROLLUP_FILTERS = [
  EVENT_RECORD_FILTER,
  LINK_ACTION_RECORD_FILTER,
  REWARD_EVENT_RECORD_FILTER,
  BOT_VISIT_RECORD_FILTER,
  PURGE_RECORD_FILTER,
] as const;

/**
 * How each mapping batches, shared by the CDK constructs and the local stream pollers (deployed
 * figures: the test stacks shorten the counting consumer's windows). Webhooks cannot wait
 * (another campaign's first attempt starts within 1 s of its event): no window. The counting
 * consumer sums a batch's records per item and the feed packs a batch's events per campaign, so
 * they gather for 1 s (AWS's smallest window, whole seconds) and up to 1,000 records: a visit
 * shows in `total_clicks`, the campaign's series and the feed about 1 s later, within the
 * contract's 2 s. Its tumbling window carries the sums it writes within a minute (45 s, and a sum
 * is written once 30 s old: `lib/config.ts`, `analyticsFlushAgeMs`).
 */
export const WEBHOOK_STREAM_BATCHING = { batchSize: 100, windowSeconds: 0 } as const;
export const ROLLUP_STREAM_BATCHING = {
  batchSize: 1000,
  windowSeconds: 1,
  tumblingWindowSeconds: 45,
} as const;
