/**
 * Table stream consumer, for two kinds of records (the event source mapping's filters,
 * `STREAM_CONSUMER_FILTERS`, pass nothing else):
 *
 * - INSERTs of event-bearing items: each event goes on the webhook queue, and into its
 *   campaign's events feed (`lib/webhooks/feed.ts`; not a redelivery request, which is no new event);
 * - MODIFYs of a link carrying the action that write recorded (`POST /action/referred_user`):
 *   the action's own item is written, event included, and its INSERT comes back as the first kind.
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
import { materializeStreamRecords } from '../../lib/webhooks/link-actions.ts';
import { enqueueStreamRecords } from '../../lib/webhooks/stream.ts';

const sqs = createSqsClient();
const queueUrl = config.webhookQueueUrl;

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const [actions, events, feed] = await Promise.all([
    materializeStreamRecords(event.Records),
    enqueueStreamRecords(event.Records, sqs, queueUrl),
    recordFeedRecords(event.Records),
  ]);
  return batchResponse([
    ...actions.failedSequenceNumbers,
    ...events.failedSequenceNumbers,
    ...feed.failedSequenceNumbers,
  ]);
};
