/**
 * Which table stream records start a campaign purge: REMOVEs of campaign items (`SK` `CAMPAIGN`).
 * Plain data with no imports, shared by the CDK construct (the event source mapping's filter, so
 * other writes never even invoke the consumer) and by `functions/stream/feed-and-rollups.ts`, which
 * re-exports it beside the code that relies on it.
 */
export const PURGE_RECORD_FILTER = {
  eventName: ['REMOVE'],
  dynamodb: { Keys: { SK: { S: ['CAMPAIGN'] } } },
} as const;
