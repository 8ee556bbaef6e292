import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { config } from '../config.ts';

/** CloudWatch namespace of the business metrics; the `service` and `stage` dimensions split them. */
export const METRICS_NAMESPACE = 'ReferralApi';

/**
 * The business events, one count each. `ActionsRecorded` counts actions posted through the API
 * (endpoints 5 and 12); visits through `/r/{code}` are also actions but count as `VisitsRecorded`.
 * Both are counted by the stream's counting consumer, once per batch (`lib/analytics/fast.ts`),
 * not by the requests: an EMF line per request was about a tenth of a visit's cost.
 * Webhook outcomes are per message of a delivery batch: succeeded (delivered, or ended by the
 * receiver's 410), failed (waiting for a retry), dead-lettered (attempts exhausted).
 */
export const BusinessMetric = {
  LinksCreated: 'LinksCreated',
  VisitsRecorded: 'VisitsRecorded',
  SignupsRecorded: 'SignupsRecorded',
  ActionsRecorded: 'ActionsRecorded',
  WebhookDeliveriesSucceeded: 'WebhookDeliveriesSucceeded',
  WebhookDeliveriesFailed: 'WebhookDeliveriesFailed',
  WebhookDeliveriesDeadLettered: 'WebhookDeliveriesDeadLettered',
  /** A campaign's webhook disabled after failing every attempt for 3 days (`lib/webhooks/failures.ts`). */
  WebhookEndpointsDisabled: 'WebhookEndpointsDisabled',
  /**
   * Work of the stream's counting consumer that DynamoDB refuses as it is, set aside so that it
   * holds nothing back (`lib/analytics/parked.ts`): each piece needs an operator, and is alarmed.
   */
  CountingWorkParked: 'CountingWorkParked',
} as const;
export type BusinessMetric = (typeof BusinessMetric)[keyof typeof BusinessMetric];

/**
 * The invocation's counts in CloudWatch's embedded metric format (EMF): one JSON line on stdout per
 * invocation that CloudWatch Logs turns into metrics, with no API call and no added latency. Written
 * here in a few lines rather than with Powertools Metrics, which is 10 KiB of every counting
 * function's bundle for what this needs: counts in one namespace with the `service` and `stage`
 * dimensions. The document is the one Powertools wrote: a metric counted twice in an invocation
 * has both values, `[1, 1]`, as CloudWatch sums them.
 */
/** The EMF document of some counts (one log line): also what the bench's cost model sizes. */
export function emfDocument(counts: Record<string, number | number[]>, now = Date.now()) {
  return {
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: METRICS_NAMESPACE,
          Dimensions: [['service', 'stage']],
          Metrics: Object.keys(counts).map((Name) => ({ Name, Unit: 'Count' })),
        },
      ],
    },
    service: config.serviceName,
    stage: config.stage,
    ...counts,
  };
}

export const metrics = {
  stored: new Map<BusinessMetric, number[]>(),
  addMetric(name: BusinessMetric, value: number): void {
    const values = this.stored.get(name);
    if (values) values.push(value);
    else this.stored.set(name, [value]);
  },
  hasStoredMetrics(): boolean {
    return this.stored.size > 0;
  },
  clearMetrics(): void {
    this.stored.clear();
  },
  /** Write the stored counts as one EMF document and forget them. */
  publishStoredMetrics(): void {
    const document = emfDocument(
      Object.fromEntries(
        [...this.stored].map(([name, values]) => [name, values.length === 1 ? values[0]! : values]),
      ),
    );
    this.clearMetrics();
    process.stdout.write(`${JSON.stringify(document)}\n`);
  },
};

/**
 * Metrics are emitted only in a deployed stage. The local stack (STAGE=local), the tests and the
 * scripts (STAGE unset) run the same handlers in one process whose stdout is a terminal or a test
 * report, where EMF lines would only be noise. Read per call: the local stack sets STAGE after
 * some modules are loaded. `POWERTOOLS_METRICS_DISABLED=true` also turns them off, as it did when
 * Powertools Metrics wrote them.
 */
export function metricsEnabled(): boolean {
  const stage = config.stageSet;
  if (config.metricsDisabled) return false;
  return stage !== undefined && stage !== '' && stage !== 'local';
}

/** Count `value` business events of one kind in this invocation (published at its end). */
export function countEvent(name: BusinessMetric, value = 1): void {
  if (value <= 0 || !metricsEnabled()) return;
  metrics.addMetric(name, value);
}

/**
 * Writes the invocation's metrics, if it recorded any: an invocation without a business event (every
 * GET) writes nothing, not even a warning.
 */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}

/** Middy middleware: publish after the handler, whether it answered or threw. */
export function metricsMiddleware<E, R, Err extends Error, C extends Context>(): MiddlewareObj<E, R, Err, C> {
  return { after: publishMetrics, onError: publishMetrics };
}
