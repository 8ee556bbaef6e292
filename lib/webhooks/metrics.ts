import { BusinessMetric, countEvent } from '../observability/metrics.ts';
import type { DeliveryCounts } from './deliver.ts';

/**
 * A delivery invocation's outcomes as business metrics. Succeeded: delivered, stopped by the
 * receiver's 410, or dropped because the campaign is gone. Failed: the attempt failed and the
 * event waits for the next one. Events moved to the retry lane without an attempt are no outcome
 * yet.
 */
export function countDeliveries(counts: DeliveryCounts): void {
  countEvent(BusinessMetric.WebhookDeliveriesSucceeded, counts.delivered + counts.dropped);
  countEvent(BusinessMetric.WebhookDeliveriesFailed, counts.failed);
  countEvent(BusinessMetric.WebhookDeliveriesDeadLettered, counts.deadLettered);
}
