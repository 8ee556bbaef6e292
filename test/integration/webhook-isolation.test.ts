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
import { randomInt } from 'node:crypto';
import { BatchWriteCommand, type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/db/client-config.ts';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { eventAttributes } from '../../lib/webhooks/events.ts';
import { FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN } from '../../lib/webhooks/lanes.ts';
import { type Responder, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const TENANT = { tenant: 'isolation', key: 'test-key-isolation-00000000000000001' };
const receivers: WebhookReceiver[] = [];
let stack: LocalStack;
let db: DynamoDBDocumentClient;

beforeAll(async () => {
  // Hundreds of deliveries to the bad receivers are dead-lettered as expected: no warning lines.
  process.env.LOG_LEVEL = 'ERROR';
  stack = await startLocalStack({
    port: 0,
    dataDir: 'memory',
    devApiKeys: `${TENANT.tenant}:${TENANT.key}`,
    webhookRetryDelays: '1,1,1',
    throttles: false,
  });
  db = createDocumentClient(stack.dynamodbEndpoint);
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  db?.destroy();
  await stack?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request to this file's stack; resolves when the response has arrived, with its time. */
async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { 'api-key': TENANT.key, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const at = Date.now();
  const text = await res.text();
  return { status: res.status, at, body: text ? JSON.parse(text) : undefined };
}

async function campaignReceiving(respond?: Responder) {
  const rx = await startWebhookReceiver(respond);
  receivers.push(rx);
  const campaign = await call('POST', '/api/v1/campaign', { url: 'https://example.com', name: 'Isolation' });
  expect(campaign.status).toBe(201);
  const patched = await call('PATCH', `/api/v1/campaign?id=${campaign.body.id}`, { webhook_url: rx.url });
  expect(patched.status).toBe(200);
  return { rx, id: campaign.body.id as string };
}

/** `count` pending events for a campaign, written at once as the writers write them. */
async function backlog(campaignId: string, count: number) {
  const items = Array.from({ length: count }, () => {
    const id = 9_000_000_000 + randomInt(1_000_000_000);
    return {
      PK: `T#${TENANT.tenant}#C#${campaignId}`,
      SK: `A#${id}`,
      type: 'action',
      ...eventAttributes('action.created', id, TENANT.tenant, campaignId, { id, action_type: 'visit' }),
    };
  });
  for (let i = 0; i < items.length; i += 25) {
    await db.send(
      new BatchWriteCommand({
        RequestItems: { [stack.tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
      }),
    );
  }
}

let failingAnswers = 500;

/** The URL the campaign's slow-lane flag names, if any (not part of the API's campaign). */
async function slowLaneOf(campaignId: string): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: stack.tableName,
      Key: { PK: `T#${TENANT.tenant}#C#${campaignId}`, SK: 'CAMPAIGN' },
      ConsistentRead: true,
    }),
  );
  return Item?.webhook_slow_lane_url as string | undefined;
}

/** When the event's first delivery arrived (its `receivedAt`). */
async function arrivalOf(rx: WebhookReceiver, eventId: string, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = rx.requests.find((r) => r.headers['webhook-id'] === eventId);
    if (hit) return hit.receivedAt;
    if (Date.now() > deadline) throw new Error(`${eventId} not delivered within ${timeoutMs} ms`);
    await sleep(10);
  }
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
    await Promise.all([slow, silent, failing, hangUp].map((c) => backlog(c.id, pending)));
    // The bad receivers are busy before the healthy campaign's first event, and the pipeline has
    // read their backlogs (160 events written at once: a burst of volume, whoever it is for).
    await Promise.all([slow, silent, failing, hangUp].map((c) => c.rx.waitFor(1)));
    const badSince = Date.now();
    await sleep(1_500);

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
      latencies.push((await arrivalOf(healthy.rx, `evt_action_${created.body.id}`, 10_000)) - created.at);
      await sleep(1_000);
    }

    // They covered the time the slow and silent receivers held their first attempts.
    expect(lastSent - badSince).toBeGreaterThan(15_000);
    expect(Math.max(...latencies), `latencies ${latencies.join(', ')} ms`).toBeLessThan(1_000);
    // One campaign holds at most its groups' worth of first attempts: before the first timeout,
    // the slow and silent receivers saw no more than that, whatever their backlog.
    const early = (rx: WebhookReceiver) => rx.requests.filter((r) => r.receivedAt < badSince + 12_000).length;
    expect(early(slow.rx)).toBeLessThanOrEqual(FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN);
    expect(early(silent.rx)).toBeLessThanOrEqual(FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN);
    // ... while the failing ones were tried (and retried) throughout.
    expect(failing.rx.requests.length).toBeGreaterThan(pending);
    expect(hangUp.rx.requests.length).toBeGreaterThan(pending);

    // The bad endpoints are in the slow lane, the healthy one is not; an endpoint that answers
    // in time again leaves it.
    for (const c of [slow, silent, failing, hangUp]) expect(await slowLaneOf(c.id)).toBe(c.rx.url);
    expect(await slowLaneOf(healthy.id)).toBeUndefined();
    failingAnswers = 204;
    await backlog(failing.id, 1);
    const deadline = Date.now() + 10_000;
    while ((await slowLaneOf(failing.id)) !== undefined && Date.now() < deadline) await sleep(100);
    expect(await slowLaneOf(failing.id)).toBeUndefined();
  }, 60_000);
});
