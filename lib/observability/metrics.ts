import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { logger } from './logger.ts';

/** CloudWatch namespace of the business metrics; the `service` and `stage` dimensions split them. */
export const METRICS_NAMESPACE = 'ReferralApi';

/**
 * The business events, one count each. `ActionsRecorded` counts actions posted through the API
 * (endpoints 5 and 12); visits through `/r/{code}` are also actions but count as `VisitsRecorded`.
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
} as const;
export type BusinessMetric = (typeof BusinessMetric)[keyof typeof BusinessMetric];

/**
 * Powertools Metrics: embedded metric format, i.e. one JSON line on stdout per invocation that
 * CloudWatch Logs turns into metrics, with no API call and no added latency. Its own warnings go
 * through the service logger so they are JSON too.
 */
export const metrics = new Metrics({
  namespace: METRICS_NAMESPACE,
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'referral-api',
  defaultDimensions: { stage: process.env.STAGE ?? 'local' },
  logger,
});

/**
 * Metrics are emitted only in a deployed stage. The local stack (STAGE=local), the tests and the
 * scripts (STAGE unset) run the same handlers in one process whose stdout is a terminal or a test
 * report, where EMF lines would only be noise. Read per call: the local stack sets STAGE after
 * some modules are loaded. `POWERTOOLS_METRICS_DISABLED=true` also turns them off (Powertools).
 */
export function metricsEnabled(): boolean {
  const stage = process.env.STAGE;
  return stage !== undefined && stage !== '' && stage !== 'local';
}

/** Count `value` business events of one kind in this invocation (published at its end). */
export function countEvent(name: BusinessMetric, value = 1): void {
  if (value <= 0 || !metricsEnabled()) return;
  metrics.addMetric(name, MetricUnit.Count, value);
}

/**
 * Writes the invocation's metrics, if it recorded any. Not Powertools' `logMetrics` middleware:
 * that one warns "No application metrics to publish" on every invocation without a business
 * event (every GET), which would put a useless warning line in most log streams.
 */
export function publishMetrics(): void {
  if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
}

/** Middy middleware: publish after the handler, whether it answered or threw. */
export function metricsMiddleware<E, R, Err extends Error, C extends Context>(): MiddlewareObj<E, R, Err, C> {
  return { after: publishMetrics, onError: publishMetrics };
}
