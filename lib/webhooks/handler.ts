/**
 * The Lambda handler of a delivery lane: one SQS batch in (one message, as the event source
 * mappings are configured), partial batch response out, the outcomes counted as business metrics.
 */
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsClient } from '../aws/clients.ts';
import { config } from '../config.ts';
import { recordAttempt } from '../db/webhook-attempts.ts';
import { loadWebhookTarget, setSlowLane } from '../db/webhook-targets.ts';
import { publishMetrics } from '../observability/metrics.ts';
import { type DeliveryDeps, deliverFirstAttempts, deliverRetries } from './deliver.ts';
import { failureTracker } from './failures.ts';
import { countDeliveries } from './metrics.ts';
import { retryDelaysFrom } from './schedule.ts';

type Lane = 'first-attempt' | 'retry';

/** The lanes' settings, read once per cold start; a missing or malformed one fails loudly there. */
export function deliveryDepsFromEnv(): DeliveryDeps {
  return {
    sqs: createSqsClient(),
    retryQueueUrl: config.webhookRetryQueueUrl,
    dlqUrl: config.webhookDlqUrl,
    delays: retryDelaysFrom(config.webhookRetryDelays),
    allowPrivate: config.allowPrivateWebhooks,
    loadTarget: loadWebhookTarget,
    setSlowLane,
    recordAttempt,
    trackOutcome: failureTracker(config.webhookDisableAfterSeconds),
  };
}

export function deliveryHandler(lane: Lane, deps: DeliveryDeps) {
  const deliver = lane === 'first-attempt' ? deliverFirstAttempts : deliverRetries;
  return async (event: SQSEvent): Promise<SQSBatchResponse> => {
    try {
      const { batchItemFailures, counts } = await deliver(event.Records, deps);
      countDeliveries(counts);
      return { batchItemFailures };
    } finally {
      publishMetrics();
    }
  };
}
