/**
 * SQS consumer of the webhook queue: signs and POSTs each event to its campaign's webhook URL.
 * Partial batch responses (`ReportBatchItemFailures`): failed messages stay on the queue with
 * their visibility timeout set to the next retry delay. See `lib/webhooks/deliver.ts`.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { config } from '../../lib/config.ts';
import { deliverWithMetrics } from '../../lib/http/metrics.ts';
import { deliverBatch } from '../../lib/webhooks/deliver.ts';
import { retryDelaysFrom } from '../../lib/webhooks/schedule.ts';
import { createSqsClient, requiredEnv } from '../../lib/webhooks/sqs.ts';
import { loadWebhookTarget } from '../../lib/webhooks/target.ts';

// Read once per cold start; a missing or malformed setting fails here, loudly.
const deps = {
  sqs: createSqsClient(),
  queueUrl: requiredEnv('WEBHOOK_QUEUE_URL'),
  dlqUrl: requiredEnv('WEBHOOK_DLQ_URL'),
  delays: retryDelaysFrom(process.env.WEBHOOK_RETRY_DELAYS),
  allowPrivate: config.allowPrivateWebhooks,
  loadTarget: loadWebhookTarget,
};

// Counts the batch's outcomes (delivered, retried, dead-lettered) as EMF metrics.
export const handler = async (event: SQSEvent): Promise<SQSBatchResponse> =>
  deliverWithMetrics(event.Records, deps, deliverBatch);
