/**
 * Table stream consumer: puts every committed event-bearing item on the webhook queue. The event
 * source mapping's filter (`EVENT_RECORD_FILTER`) passes only INSERTs of items with `event_type`;
 * failed sends are reported per record (`ReportBatchItemFailures`), so Lambda retries from the
 * first of them and no committed event is skipped. Duplicates from such retries are fine:
 * delivery is at-least-once and `webhook-id` is the receiver's dedupe key.
 */
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createSqsClient, requiredEnv } from '../../lib/webhooks/sqs.ts';
import { enqueueStreamRecords } from '../../lib/webhooks/stream.ts';

const sqs = createSqsClient();
const queueUrl = requiredEnv('WEBHOOK_QUEUE_URL');

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const { failedSequenceNumbers } = await enqueueStreamRecords(event.Records, sqs, queueUrl);
  return { batchItemFailures: failedSequenceNumbers.map((itemIdentifier) => ({ itemIdentifier })) };
};
