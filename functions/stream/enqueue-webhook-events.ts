/**
 * Table stream consumer, the first of its two readers (the other, `feed-and-rollups.ts`, writes
 * the events feed and the analytics a second later, in bigger batches), for what cannot wait:
 * webhooks (another campaign's first attempt starts within 1 s of its event), so its mapping has
 * no batching window. Two kinds of records (the event source mapping's filters,
 * `STREAM_CONSUMER_FILTERS`, pass nothing else):
 *
 * - INSERTs of event-bearing items: each event goes on the webhook queue when its campaign's
 *   webhook would send it (`lib/webhooks/subscribed.ts`; a redelivery request too);
 * - MODIFYs of a link carrying the action that write recorded (`POST /action/referred_user`, and
 *   `POST /action/referral_link` without a key): the action's event is queued from this record, as
 *   the INSERT of the action item it becomes (`eventRecordsOf`), and that item is written, marked so
 *   that its own INSERT is counted by the rollups but sent and fed no second time.
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
import { eventRecordsOf } from '../../lib/webhooks/link-action-events.ts';
import { materializeStreamRecords } from '../../lib/webhooks/link-actions.ts';
import { enqueueStreamRecords } from '../../lib/webhooks/stream.ts';
import { recordsToSend } from '../../lib/webhooks/subscribed.ts';

const sqs = createSqsClient();
const queueUrl = config.webhookQueueUrl;

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  // An action committed on its link is sent from the link's record (`eventRecordsOf`).
  const eventRecords = eventRecordsOf(event.Records);
  const [actions, events] = await Promise.all([
    materializeStreamRecords(event.Records),
    recordsToSend(eventRecords).then((records) => enqueueStreamRecords(records, sqs, queueUrl)),
  ]);
  return batchResponse([...actions.failedSequenceNumbers, ...events.failedSequenceNumbers]);
};
