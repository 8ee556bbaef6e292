/**
 * Which table stream records the stream consumer handles. Three kinds (a record passes if
 * it matches either filter); both are plain data, shared by the CDK construct (the event source
 * mapping's filters, so other writes never even invoke the consumer) and by the code path
 * (`isEventRecord`, `isLinkActionRecord`), which the local stream poller runs because DynamoDB
 * Local has no filtering.
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
 * (`lib/analytics/rollups.ts`), which also read the event records above.
 */
export const BOT_VISIT_RECORD_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { type: { S: ['bot_visit'] } } },
} as const;

/** The event source mapping's filters, in the order the consumer handles them. */
export const STREAM_CONSUMER_FILTERS = [
  EVENT_RECORD_FILTER,
  LINK_ACTION_RECORD_FILTER,
  BOT_VISIT_RECORD_FILTER,
] as const;
