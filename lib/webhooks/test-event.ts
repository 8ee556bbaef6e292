/**
 * `POST /api/v1/campaign/webhook_test`: one signed `webhook.test` event, sent now from the API
 * function itself, under the rules of every delivery (address checks after DNS, 15 s timeout, no
 * redirects followed), with the outcome as the answer. Not retried and not in the feed; logged in
 * the delivery log like any attempt. It is sent whatever `webhook_status` and `webhook_events`
 * say: checking a disabled endpoint before enabling it again is what it is for.
 *
 * With an `Idempotency-Key` the key is claimed before the POST (`claimKey`: the POST is outside
 * the table, so its answer cannot be stored atomically with it), and the answer replaces the claim
 * in the write of the attempt's log: a retry gets the first answer and sends nothing, a retry while
 * the first still runs is 409. The claim costs one write more than a test without a key.
 */
import { randomBytes } from 'node:crypto';
import { claimKey, rememberClaimedAnswer } from '../db/idempotency.ts';
import { recordAttempt } from '../db/webhook-attempts.ts';
import { webhookTargetToTest } from '../db/webhook-targets.ts';
import type { WebhookUrlPolicy } from '../domain/campaign-rules.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { TEST_EVENT_TYPE } from '../domain/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { attemptDelivery } from './attempt.ts';
import type { SignableMessage } from './message.ts';

const logger = rootLogger.createChild();

export interface TestOutcome {
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export async function sendTestEvent(
  tenant: string,
  campaignId: string,
  policy: WebhookUrlPolicy,
  now = new Date(),
  idempotency?: IdempotentRequest,
): Promise<TestOutcome> {
  const target = await webhookTargetToTest(tenant, campaignId, now);
  if (idempotency) await claimKey(idempotency);
  const eventId = `evt_test_${now.getTime()}${randomBytes(3).readUIntBE(0, 3) % 1000}`;
  const message = {
    event_id: eventId,
    event_type: TEST_EVENT_TYPE,
    event_time: now.toISOString(),
    campaign_id: campaignId.toLowerCase(),
    event_json: JSON.stringify({ message: 'This is a test event sent from the referral API.' }),
  } satisfies SignableMessage;
  const started = performance.now();
  const result = await attemptDelivery(message, target, { allowPrivate: policy.allowPrivate, now });
  const duration_ms = Math.round(performance.now() - started);
  const outcome: TestOutcome = {
    delivered: result.outcome === 'delivered',
    status_code: result.outcome === 'gone' ? 410 : (result.status ?? null),
    duration_ms,
    error: result.outcome === 'failed' ? result.error : result.outcome === 'gone' ? 'HTTP 410' : null,
  };
  try {
    await recordAttempt(
      tenant,
      campaignId,
      {
        id: `att_${now.getTime()}_${eventId}_1`,
        event_id: eventId,
        event_type: TEST_EVENT_TYPE,
        attempt: 1,
        status: outcome.delivered ? 'succeeded' : 'failed',
        attempted_at: now.toISOString(),
        url: target.url,
        status_code: outcome.status_code,
        error: outcome.error,
        duration_ms,
        next_attempt_at: null,
      },
      idempotency && rememberClaimedAnswer(idempotency, 200, outcome),
    );
  } catch (err) {
    // Without the log, the answer is not stored either: the claim expires and a retry runs again.
    logger.warn('webhook test attempt not logged', {
      campaign_id: campaignId,
      error: (err as Error).message,
    });
  }
  return outcome;
}
