/**
 * Table stream consumer, the first of its two readers (the other is `rollups-and-purges.ts`), for
 * what cannot wait: webhooks (another campaign's first attempt starts within 1 s of its event), so
 * its mapping has no batching window. Two kinds of records (the event source mapping's filters,
 * `STREAM_CONSUMER_FILTERS`, pass nothing else):
 *
 * - INSERTs of event-bearing items: each event goes into its campaign's events feed
 *   (`lib/webhooks/feed.ts`; not a redelivery request, which is no new event; exactly once,
 *   checkpointed per shard: hence the mapping's tumbling window, the one way Lambda tells a
 *   stream consumer which shard a batch comes from, and the `state` in the response that a
 *   tumbling window requires), and on the webhook queue when its campaign's webhook would send it
 *   (`lib/webhooks/subscribed.ts`);
 * - MODIFYs of a link carrying the action that write recorded (`POST /action/referred_user`, and
 *   `POST /action/referral_link` without a key): the action's event is fed and queued from this
 *   record, as the INSERT of the action item it becomes (`eventRecordsOf`), and that item is
 *   written, marked so that its own INSERT is counted by the rollups but fed no second time.
 *
 * Failures are reported per record (`ReportBatchItemFailures`), so Lambda retries from the first
 * of them and nothing committed is skipped. What such a retry repeats is harmless: action items
 * are written only if absent, and delivery is at-least-once with `webhook-id` as the receiver's
 * dedupe key.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createSqsClient } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { batchResponse } from '../../lib/queues/batch.ts';
import { recordFeedRecords } from '../../lib/webhooks/feed.ts';
import { eventRecordsOf } from '../../lib/webhooks/link-action-events.ts';
import { materializeStreamRecords } from '../../lib/webhooks/link-actions.ts';
import { enqueueStreamRecords } from '../../lib/webhooks/stream.ts';
import { recordsToSend } from '../../lib/webhooks/subscribed.ts';

const sqs = createSqsClient();
const queueUrl = config.webhookQueueUrl;

/** What Lambda hands a consumer whose mapping has a tumbling window: the shard, and a state. */
export type StreamConsumerEvent = DynamoDBStreamEvent & { shardId?: string; state?: Record<string, string> };

export const handler = async (
  event: StreamConsumerEvent,
): Promise<DynamoDBBatchResponse & { state: Record<string, string> }> => {
  // An action committed on its link is fed and sent from the link's record (`eventRecordsOf`).
  const eventRecords = eventRecordsOf(event.Records);
  const [actions, events, feed] = await Promise.all([
    materializeStreamRecords(event.Records),
    recordsToSend(eventRecords).then((records) => enqueueStreamRecords(records, sqs, queueUrl)),
    recordFeedRecords(eventRecords, event.shardId),
  ]);
  return {
    ...batchResponse([
      ...actions.failedSequenceNumbers,
      ...events.failedSequenceNumbers,
      ...feed.failedSequenceNumbers,
    ]),
    state: {},
  };
};
