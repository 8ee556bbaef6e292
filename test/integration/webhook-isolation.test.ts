/**
 * Webhook isolation (contract: "a receiver that is slow, times out or fails never delays another
 * campaign's deliveries"): campaigns whose receivers answer after 20 s, never answer (the 15 s
 * timeout), answer 500 or hang up, each with a backlog of pending events, and meanwhile a healthy
 * campaign's events through the API. Each healthy event's first attempt must reach its receiver
 * within 1 s of the API's 201, for as long as the bad receivers hold their attempts (the lanes of
 * lib/webhooks/lanes.ts).
 *
 * On a stack of its own (its own DynamoDB Local, queue and pollers, retries 1 s apart): the storm
 * of failing deliveries it sets off stays out of the shared stack's other webhook tests, and their
 * load (a 5,000-link purge) out of this measurement.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN, firstAttemptIds } from '../../lib/webhooks/lanes.ts';
import { eventually, mapLimit, waitUntil } from '../../tools/wait.ts';
import { type Responder, startWebhookReceiver, type WebhookReceiver } from '../../tools/webhook-receiver.ts';
import { apiAt, postAsClient } from '../support/api.ts';
import { inStartSlot } from '../support/start-slots.ts';
import { campaignItem, table } from '../support/table.ts';

const TENANT = { tenant: 'isolation', key: 'test-key-isolation-00000000000000001' };
const receivers: WebhookReceiver[] = [];
let stack: LocalStack;

beforeAll(async () => {
  // Hundreds of deliveries to the bad receivers are dead-lettered as expected: no warning lines.
  process.env.LOG_LEVEL = 'ERROR';
  stack = await inStartSlot(() =>
    startLocalStack({
      port: 0,
      dataDir: 'memory',
      devApiKeys: `${TENANT.tenant}:${TENANT.key}`,
      webhookRetryDelays: '1,1,1',
      throttles: false,
      stateFile: false,
    }),
  );
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await stack?.stop();
});

/** This file's stack, as its one tenant (the client is made once the stack is up). */
const call = (method: string, path: string, body?: unknown) =>
  apiAt(stack.baseUrl, TENANT.key)(method, path, { body });

async function campaignReceiving(respond?: Responder) {
  const rx = await startWebhookReceiver(respond);
  receivers.push(rx);
  const campaign = await call('POST', '/api/v1/campaign', { url: 'https://example.com', name: 'Isolation' });
  expect(campaign.status).toBe(201);
  const patched = await call('PATCH', `/api/v1/campaign?id=${campaign.body.id}`, { webhook_url: rx.url });
  expect(patched.status).toBe(200);
  return { rx, id: campaign.body.id as string };
}

/**
 * `count` pending events for a campaign, made by the real writer (actions on a link of it,
 * endpoint 12) as fast as a client can send them; their event ids. Each is sent with an
 * Idempotency-Key and sent again after a 503 or a 409 in progress, as the contract tells clients
 * to: a busy machine's DynamoDB Local refuses some of a burst of transactions on one link.
 */
async function backlog(campaignId: string, count: number): Promise<string[]> {
  const link = await call('POST', '/api/v1/referral_link', { campaign_id: campaignId });
  expect(link.status).toBe(201);
  const client = apiAt(stack.baseUrl, TENANT.key);
  return mapLimit(Array.from({ length: count }), 8, async (_, n) => {
    const body = { referral_code: link.body.referral_code, action_type: `backlog-${n}` };
    const action = await postAsClient(client, '/api/v1/action/referral_link', body, { withinMs: 30_000 });
    expect(action.status, action.text).toBe(201);
    return actionEventId(action.body.id, campaignId);
  });
}

/** How many first-attempt message groups a campaign's events fall in (at most one attempt each). */
const groupsOf = (campaignId: string, eventIds: string[]) =>
  new Set(eventIds.map((id) => firstAttemptIds({ campaign_id: campaignId, event_id: id }, '').MessageGroupId))
    .size;

let failingAnswers = 500;

/** The URL the campaign's slow-lane flag names, if any (not part of the API's campaign). */
async function slowLaneOf(campaignId: string): Promise<string | undefined> {
  const item = await campaignItem(TENANT.tenant, campaignId, table(stack));
  return item?.webhook_slow_lane_url as string | undefined;
}

/** When the event's first delivery arrived (its `receivedAt`). */
async function arrivalOf(rx: WebhookReceiver, eventId: string, timeoutMs: number): Promise<number> {
  const hit = await eventually(
    `${eventId} delivered`,
    () => rx.requests.find((r) => r.headers['webhook-id'] === eventId),
    timeoutMs,
    10,
  );
  return hit.receivedAt;
}

describe('webhook isolation', () => {
  it("starts a healthy campaign's first attempts within 1 s while other receivers are slow, silent or failing", async () => {
    const slow = await campaignReceiving(() => ({ status: 200, delayMs: 20_000 }));
    const silent = await campaignReceiving(() => 'silence');
    const failing = await campaignReceiving(() => ({ status: failingAnswers }));
    const hangUp = await campaignReceiving(() => 'hang-up');
    const healthy = await campaignReceiving();
    const link = await call('POST', '/api/v1/referral_link', { campaign_id: healthy.id });
    expect(link.status).toBe(201);

    const pending = 40;
    const [slowEvents, silentEvents, failingEvents, hangUpEvents] = (await Promise.all(
      [slow, silent, failing, hangUp].map((c) => backlog(c.id, pending)),
    )) as [string[], string[], string[], string[]];
    await Promise.all([slow, silent, failing, hangUp].map((c) => c.rx.waitFor(1)));
    const badSince = Date.now();
    // The bad receivers are busy before the healthy campaign's first event, and the pipeline has
    // read their backlogs (160 events at once: a burst of volume, whoever it is for): the slow and
    // silent receivers hold an attempt in every group their events fall in, and the failing ones
    // have been sent every one of theirs.
    const seen = (rx: WebhookReceiver) => new Set(rx.requests.map((r) => r.headers['webhook-id']));
    await eventually(
      'the bad receivers busy with their backlogs',
      () =>
        slow.rx.requests.length >= groupsOf(slow.id, slowEvents) &&
        silent.rx.requests.length >= groupsOf(silent.id, silentEvents) &&
        failingEvents.every((id) => seen(failing.rx).has(id)) &&
        hangUpEvents.every((id) => seen(hangUp.rx).has(id))
          ? true
          : undefined,
      15_000,
      20,
    );

    // Events through the API across the whole time the slow attempts hold (15 s timeout and more).
    const latencies: number[] = [];
    let lastSent = 0;
    while (Date.now() - badSince < 19_000) {
      lastSent = Date.now();
      const created = await call('POST', '/api/v1/action/referral_link', {
        referral_code: link.body.referral_code,
        action_type: 'purchase',
      });
      expect(created.status).toBe(201);
      latencies.push(
        (await arrivalOf(
          healthy.rx,
          actionEventId(created.body.id, created.body.referral_link.campaign_id),
          10_000,
        )) - created.at,
      );
      // Pacing, not waiting for anything: one healthy event a second across the whole window.
      await new Promise((r) => setTimeout(r, 1_000));
    }

    // They covered the time the slow and silent receivers held their first attempts.
    expect(lastSent - badSince).toBeGreaterThan(15_000);
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(1_000);
    // One campaign holds at most its groups' worth of first attempts: before the first timeout,
    // the slow and silent receivers saw no more than that, whatever their backlog.
    // Counted from each receiver's own first attempt: the backlog is written through the API over
    // a few seconds, so a campaign's first attempts start while it is still being written, and a
    // held attempt ends (times out) 15 s after it started.
    const early = (rx: WebhookReceiver) => {
      const first = rx.requests[0]?.receivedAt ?? 0;
      return rx.requests.filter((r) => r.receivedAt < first + 13_000).length;
    };
    const seenBy = (rx: WebhookReceiver) =>
      rx.requests.map((r) => `${r.headers['webhook-id']} +${r.receivedAt - badSince} ms`).join(', ');
    expect(early(slow.rx), seenBy(slow.rx)).toBeLessThanOrEqual(FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN);
    expect(early(silent.rx), seenBy(silent.rx)).toBeLessThanOrEqual(FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN);
    // ... while the failing ones were tried (and retried) throughout.
    expect(failing.rx.requests.length).toBeGreaterThan(pending);
    expect(hangUp.rx.requests.length).toBeGreaterThan(pending);

    // The bad endpoints are in the slow lane, the healthy one is not; an endpoint that answers
    // in time again leaves it.
    for (const c of [slow, silent, failing, hangUp]) expect(await slowLaneOf(c.id)).toBe(c.rx.url);
    expect(await slowLaneOf(healthy.id)).toBeUndefined();
    failingAnswers = 204;
    await backlog(failing.id, 1);
    await waitUntil(async () => (await slowLaneOf(failing.id)) === undefined, 10_000);
    expect(await slowLaneOf(failing.id)).toBeUndefined();
  }, 60_000);
});
