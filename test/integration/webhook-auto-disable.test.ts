/**
 * Automatic disabling (contract, "Webhook operations": a URL that has failed every attempt for 3
 * days is disabled) on a stack of its own, where the 3 days are 3 seconds
 * (`WEBHOOK_DISABLE_AFTER_SECONDS=3`) and retries come every second: the same code path, without
 * waiting 3 days. Events keep reaching the feed while disabled; `webhook_status: "enabled"`
 * restarts deliveries and the failure clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { eventually, holdsFor } from '../../tools/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../tools/webhook-receiver.ts';
import { apiAt } from '../support/api.ts';
import { inStartSlot } from '../support/start-slots.ts';

const TENANT = { tenant: 'autodisable', key: 'test-key-autodisable-000000000000001' };
let stack: LocalStack;
let rx: WebhookReceiver;
let healthy = false;

beforeAll(async () => {
  process.env.LOG_LEVEL = 'ERROR';
  process.env.WEBHOOK_DISABLE_AFTER_SECONDS = '3';
  stack = await inStartSlot(() =>
    startLocalStack({
      port: 0,
      dataDir: 'memory',
      devApiKeys: `${TENANT.tenant}:${TENANT.key}`,
      webhookRetryDelays: '1,1,1,1,1,1,1,1',
      throttles: false,
      stateFile: false,
    }),
  );
  rx = await startWebhookReceiver(() => ({ status: healthy ? 200 : 500 }));
});

afterAll(async () => {
  delete process.env.WEBHOOK_DISABLE_AFTER_SECONDS;
  await rx?.close();
  await stack?.stop();
});

const call = (method: string, path: string, body?: unknown) =>
  apiAt(stack.baseUrl, TENANT.key)(method, path, { body });

describe('a webhook that fails every attempt for the disable period', () => {
  it('is disabled with a reason, keeps its events in the feed, and is enabled again by PATCH', async () => {
    const campaign = (await call('POST', '/api/v1/campaign', { url: 'https://example.com', name: 'Failing' }))
      .body;
    const url = `${rx.url}/always-500`;
    expect((await call('PATCH', `/api/v1/campaign?id=${campaign.id}`, { webhook_url: url })).status).toBe(
      200,
    );
    const link = (await call('POST', '/api/v1/referral_link', { campaign_id: campaign.id })).body;
    const act = async (type: string) => {
      const res = await call('POST', '/api/v1/action/referral_link', {
        referral_code: link.referral_code,
        action_type: type,
      });
      expect(res.status).toBe(201);
      return res.body as { id: number };
    };

    await act('first');
    const disabled = await eventually(
      'the webhook disabled',
      async () => {
        const res = await call('GET', `/api/v1/campaign?id=${campaign.id}`);
        return res.body.webhook_status === 'disabled' ? res.body : undefined;
      },
      20_000,
    );
    expect(disabled.webhook_disabled_reason).toMatch(
      /^Every delivery attempt to .*always-500 failed for 3 seconds/,
    );
    // At least 3 s of failures: the first attempt and the 1 s retries until one found the clock old enough.
    const attempts = rx.requests.length;
    expect(attempts).toBeGreaterThanOrEqual(4);

    // Disabled: nothing is sent, the pending retries included; events still reach the feed.
    const during = await act('while disabled');
    await eventually('the event in the feed', async () => {
      const feed = await call('GET', `/api/v1/events/${campaign.id}`);
      return feed.body.some((e: { id: string }) => e.id === actionEventId(during.id, campaign.id))
        ? true
        : undefined;
    });
    await holdsFor(2_500, () => rx.requests.length > attempts);
    expect(rx.requests).toHaveLength(attempts);
    const log = await call('GET', `/api/v1/webhook_deliveries/${campaign.id}`);
    expect(log.body.length).toBe(attempts);
    expect(log.body.every((a: { status_code: number }) => a.status_code === 500)).toBe(true);

    // The endpoint is fixed and the webhook enabled: the next event is sent, and the clock restarts.
    healthy = true;
    const enabled = await call('PATCH', `/api/v1/campaign?id=${campaign.id}`, { webhook_status: 'enabled' });
    expect(enabled.body).toMatchObject({ webhook_status: 'enabled', webhook_disabled_reason: null });
    const after = await act('after');
    const delivered = await eventually('the delivery after enabling', async () =>
      rx.requests.find((r) => r.headers['webhook-id'] === actionEventId(after.id, campaign.id)),
    );
    expect(delivered).toBeDefined();
    const now = await call('GET', `/api/v1/campaign?id=${campaign.id}`);
    expect(now.body.webhook_status).toBe('enabled');
  });
});
