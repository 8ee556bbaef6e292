/**
 * The failure clock of a campaign's webhook URL and the automatic disable (contract, "Webhook
 * operations": a URL that has failed every attempt for 3 days is disabled).
 *
 * On the campaign item: `webhook_failing_url` and `webhook_failing_since`, the time of the first
 * failed attempt since the URL's last success. Delivery reads them with the URL (one GetItem it
 * makes anyway) and writes only when the outcome changes something: the first failure starts the
 * clock, the first success clears it, and a failure when the clock is old enough disables the
 * webhook. Each write is one conditional UpdateItem that names the URL, so a changed URL, a
 * deleted campaign or concurrent attempts make it a no-op (`lib/db/webhook-targets.ts`).
 */
import { clearFailureClock, disableFailingWebhook, startFailureClock } from '../db/webhook-targets.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { BusinessMetric, countEvent } from '../observability/metrics.ts';
import type { WebhookTarget } from './deliver.ts';

const logger = rootLogger.createChild();

/** The reason a disabled campaign carries. */
export function disabledReason(url: string, since: string, afterSeconds: number): string {
  const days = afterSeconds / 86_400;
  const span = days >= 1 ? `${Number(days.toFixed(1))} days` : `${afterSeconds} seconds`;
  return `Every delivery attempt to ${url} failed for ${span} (since ${since}). Fix the endpoint, then PATCH webhook_status to "enabled".`;
}

export function failureTracker(disableAfterSeconds: number) {
  return async (tenant: string, campaignId: string, target: WebhookTarget, failed: boolean, now: Date) => {
    const since = target.failingSince;
    if (!failed) {
      if (since !== undefined) await clearFailureClock(tenant, campaignId, target.url);
    } else if (since === undefined) {
      await startFailureClock(tenant, campaignId, target.url, now);
    } else if (now.getTime() - Date.parse(since) >= disableAfterSeconds * 1000 && !target.disabled) {
      const reason = disabledReason(target.url, since, disableAfterSeconds);
      if (await disableFailingWebhook(tenant, campaignId, target.url, since, reason)) {
        logger.warn('webhook disabled: every attempt failed', {
          campaign_id: campaignId,
          failing_since: since,
        });
        countEvent(BusinessMetric.WebhookEndpointsDisabled);
      }
    }
  };
}
