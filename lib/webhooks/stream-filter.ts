/**
 * Which table stream records are webhook events: INSERTs of items that carry `event_type` (see
 * `events.ts`). Plain data, shared by the CDK construct (the event source mapping's filter, so
 * other writes never even invoke the consumer) and by the code path (`isEventRecord`), which
 * the local stream poller runs because DynamoDB Local has no filtering.
 */
export const EVENT_RECORD_FILTER = {
  eventName: ['INSERT'],
  dynamodb: { NewImage: { event_type: { S: [{ exists: true }] } } },
} as const;
