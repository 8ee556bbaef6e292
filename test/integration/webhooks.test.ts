/**
 * Webhook delivery through the local stack: table stream -> stream poller -> local queue ->
 * queue poller -> delivery handler -> a real HTTP receiver on 127.0.0.1. The global setup runs
 * the stack with WEBHOOK_RETRY_DELAYS=1,1,1 (4 attempts, ~1 s apart).
 *
 * Until the link/action endpoints land, events are made by writing event-bearing items straight
 * into the table, exactly as those writers will (attributes from lib/webhooks/events.ts).
 */
import { randomInt } from 'node:crypto';
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDocumentClient } from '../../lib/db/client-config.ts';
import { WEBHOOK_DLQ_NAME } from '../../lib/local/queue.ts';
import { eventAttributes, type WebhookEventType } from '../../lib/webhooks/events.ts';
import { api, TENANT_A } from '../support/api.ts';
import { BROWSER_UA, createCampaign } from '../support/records.ts';
import { TOOL_TIMEOUT_MS } from '../support/table.ts';
import { type Responder, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const db = createDocumentClient(inject('dynamodbEndpoint'), undefined, TOOL_TIMEOUT_MS);
const tableName = inject('tableName');
const receivers: WebhookReceiver[] = [];

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  db.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function receiver(respond?: Responder) {
  const r = await startWebhookReceiver(respond);
  receivers.push(r);
  return r;
}

/** A campaign of tenant A whose webhook_url is `url` (set through PATCH, as a customer would). */
async function campaignWithWebhook(url: string) {
  const campaign = await createCampaign({ name: 'Webhook test' });
  const res = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_url: url } });
  expect(res.status).toBe(200);
  expect(res.body.webhook_url).toBe(url);
  expect(res.body.webhook_secret).toMatch(/^whsec_/);
  return res.body as { id: string; webhook_secret: string };
}

/** An event-bearing item as the writers put it: a record plus the event attributes. */
function eventItem(
  campaignId: string,
  type: WebhookEventType = 'action.created',
  data?: Record<string, unknown>,
) {
  // Ids far above anything the sequence hands out, so these never collide with real records.
  const id = 9_000_000_000 + randomInt(1_000_000_000);
  const attrs = eventAttributes(type, id, TENANT_A.tenant, campaignId, data ?? { id, action_type: 'visit' });
  const prefix = type === 'action.created' ? 'A' : 'U';
  return {
    PK: `T#${TENANT_A.tenant}#C#${campaignId}`,
    SK: `${prefix}#${id}`,
    type: type === 'action.created' ? 'action' : 'referred_user',
    ...attrs,
  };
}

async function putEvent(campaignId: string, type?: WebhookEventType, data?: Record<string, unknown>) {
  const item = eventItem(campaignId, type, data);
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  return item;
}

const headersOf = (r: { headers: Record<string, string | string[] | undefined> }) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') out[k] = v;
  return out;
};

describe('webhook delivery', () => {
  it('delivers one signed request per event that standardwebhooks verifies', async () => {
    const rx = await receiver();
    const campaign = await campaignWithWebhook(`${rx.url}/hooks/ok`);
    const action = await putEvent(campaign.id, 'action.created', {
      id: 1,
      action_type: 'signup_click',
      metadata: { plan: 'pro', n: 2 },
    });
    const signup = await putEvent(campaign.id, 'referred_user.created', { id: 2, referred_user_id: 'u-1' });

    const requests = await rx.waitFor(2);
    const wh = new Webhook(campaign.webhook_secret);
    const byId = new Map(requests.map((r) => [r.headers['webhook-id'], r]));
    expect([...byId.keys()].sort()).toEqual([action.event_id, signup.event_id].sort());

    for (const [item, expectedData] of [
      [action, { id: 1, action_type: 'signup_click', metadata: { plan: 'pro', n: 2 } }],
      [signup, { id: 2, referred_user_id: 'u-1' }],
    ] as const) {
      const req = byId.get(item.event_id)!;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/hooks/ok');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const ts = Number(req.headers['webhook-timestamp']);
      expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(30);
      // The package a customer uses accepts it, and returns the parsed body.
      const body = wh.verify(req.body, headersOf(req));
      expect(body).toEqual({
        type: item.event_type,
        timestamp: item.event_time,
        campaign_id: campaign.id,
        data: expectedData,
      });
      expect(Object.keys(JSON.parse(req.body))).toEqual(['type', 'timestamp', 'campaign_id', 'data']);
      // ... and rejects a tampered body or another secret.
      expect(() => wh.verify(req.body.replace('"id":', '"id": '), headersOf(req))).toThrow();
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(req.body, headersOf(req)),
      ).toThrow();
    }
    await sleep(1500);
    expect(rx.requests).toHaveLength(2);
  });

  it('retries 503 twice then stops after the 200: three attempts, one webhook-id', async () => {
    const rx = await receiver((_req, i) => (i < 2 ? { status: 503 } : { status: 200 }));
    const campaign = await campaignWithWebhook(rx.url);
    const item = await putEvent(campaign.id);

    const requests = await rx.waitFor(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([item.event_id]));
    const wh = new Webhook(campaign.webhook_secret);
    for (const r of requests) expect(() => wh.verify(r.body, headersOf(r))).not.toThrow();
    // Backoff from the schedule (1 s, ±20 %) between attempts.
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(700);
    expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(700);
    // Nothing after the success, even once every remaining retry would have been due.
    await sleep(3500);
    expect(rx.requests).toHaveLength(3);
  });

  it('does not follow a 307 and retries it as a failure', async () => {
    const elsewhere = await receiver();
    const rx = await receiver((_req, i) =>
      i === 0 ? { status: 307, headers: { location: `${elsewhere.url}/stolen` } } : { status: 204 },
    );
    const campaign = await campaignWithWebhook(rx.url);
    const item = await putEvent(campaign.id);

    const requests = await rx.waitFor(2);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([item.event_id, item.event_id]);
    await sleep(2500);
    expect(rx.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('stops at a 410: exactly one attempt', async () => {
    const rx = await receiver(() => ({ status: 410 }));
    const campaign = await campaignWithWebhook(rx.url);
    await putEvent(campaign.id);

    await rx.waitFor(1);
    await sleep(4000);
    expect(rx.requests).toHaveLength(1);
  });

  it('delivers a burst of 100 events as 100 distinct webhook-ids', async () => {
    const rx = await receiver();
    const campaign = await campaignWithWebhook(rx.url);
    const items = Array.from({ length: 100 }, () => eventItem(campaign.id));
    for (let i = 0; i < items.length; i += 25) {
      await db.send(
        new BatchWriteCommand({
          RequestItems: { [tableName]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    }
    const requests = await rx.waitFor(100, 25_000);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set(items.map((i) => i.event_id)));
    const wh = new Webhook(campaign.webhook_secret);
    for (const r of requests) wh.verify(r.body, headersOf(r));
  });

  it('sends nothing for a deleted campaign or one without a webhook_url', async () => {
    const rx = await receiver();
    const deleted = await campaignWithWebhook(`${rx.url}/deleted`);
    expect((await api('DELETE', `/api/v1/campaign?id=${deleted.id}`)).status).toBe(204);
    const cleared = await campaignWithWebhook(`${rx.url}/cleared`);
    expect(
      (await api('PATCH', `/api/v1/campaign?id=${cleared.id}`, { body: { webhook_url: null } })).status,
    ).toBe(200);
    await putEvent(deleted.id);
    await putEvent(cleared.id);
    // A live campaign on the same receiver, written after the others, shows the pipeline ran.
    const live = await campaignWithWebhook(`${rx.url}/live`);
    await putEvent(live.id);

    await rx.waitFor(1);
    await sleep(1500);
    expect(rx.requests.map((r) => r.path)).toEqual(['/live']);
  });

  it('uses the webhook_url in force at delivery time', async () => {
    const before = await receiver(() => ({ status: 500 }));
    const after = await receiver();
    const campaign = await campaignWithWebhook(before.url);
    const item = await putEvent(campaign.id);
    await before.waitFor(1);
    await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_url: after.url } });
    const [retry] = await after.waitFor(1);
    expect(retry!.headers['webhook-id']).toBe(item.event_id);
  });

  it('dead-letters the event after the last attempt', async () => {
    const rx = await receiver(() => ({ status: 500, body: 'down' }));
    const campaign = await campaignWithWebhook(rx.url);
    const item = await putEvent(campaign.id);

    // 1 attempt + 3 retries (WEBHOOK_RETRY_DELAYS=1,1,1).
    await rx.waitFor(4);
    const sqs = new SQSClient({
      endpoint: inject('queueEndpoint'),
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: WEBHOOK_DLQ_NAME }));
      let dead: Record<string, unknown> | undefined;
      const until = Date.now() + 10_000;
      while (!dead && Date.now() < until) {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        dead = Messages.map((m) => JSON.parse(m.Body ?? '{}')).find((b) => b.event_id === item.event_id);
        if (!dead) await sleep(200);
      }
      expect(dead).toMatchObject({
        event_id: item.event_id,
        event_type: 'action.created',
        campaign_id: campaign.id,
        tenant: TENANT_A.tenant,
        event_json: item.event_json,
        dead_letter: { error: 'HTTP 500', status: 500, attempts: 4 },
      });
    } finally {
      sqs.destroy();
    }
    await sleep(1500);
    expect(rx.requests).toHaveLength(4);
  });
});

describe('webhooks from the API (a new user clicking a link and signing up)', () => {
  it('delivers visit, signup and action events whose data is what the API returned', async () => {
    const rx = await receiver();
    const campaign = await campaignWithWebhook(`${rx.url}/from-api`);
    const link = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: campaign.id, referrer_id: 'referrer-1' },
    });
    expect(link.status).toBe(201);
    const code = link.body.referral_code as string;

    const visit = await api('GET', `/r/${code}`, {
      key: null,
      headers: { 'user-agent': BROWSER_UA },
    });
    expect(visit.status).toBe(302);
    const signup = await api('POST', '/api/v1/referred_user', {
      body: { referral_code: code, referred_user_id: 'new-user-1' },
    });
    expect(signup.status).toBe(201);
    const purchase = await api('POST', '/api/v1/action/referred_user', {
      body: {
        campaign_id: campaign.id,
        action_type: 'purchase',
        referred_user_id: 'new-user-1',
        metadata: { n: 1 },
      },
    });
    expect(purchase.status).toBe(201);

    const requests = await rx.waitFor(3);
    const wh = new Webhook(campaign.webhook_secret);
    type Delivered = {
      type: string;
      timestamp: string;
      campaign_id: string;
      data: { action_type?: string; referral_link: { referral_code: string } };
    };
    const bodies = requests.map((r) => wh.verify(r.body, headersOf(r)) as Delivered);
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(3);
    const byKind = (type: string, actionType?: string) =>
      bodies.find((b) => b.type === type && (actionType === undefined || b.data.action_type === actionType));

    const visitEvent = byKind('action.created', 'visit');
    expect(visitEvent).toMatchObject({
      campaign_id: campaign.id,
      data: { action_type: 'visit', metadata: { user_agent: BROWSER_UA }, referred_user: null },
    });
    expect(visitEvent!.data.referral_link.referral_code).toBe(code);
    expect(byKind('referred_user.created')).toMatchObject({ campaign_id: campaign.id, data: signup.body });
    expect(byKind('action.created', 'purchase')).toMatchObject({
      campaign_id: campaign.id,
      data: purchase.body,
    });
    for (const b of bodies) expect(Number.isNaN(Date.parse(b.timestamp))).toBe(false);

    await sleep(1500);
    expect(rx.requests).toHaveLength(3);
  });

  it('delivers an action sent without metadata (stored as an empty map)', async () => {
    const rx = await receiver();
    const campaign = await campaignWithWebhook(`${rx.url}/no-metadata`);
    const link = await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaign.id } });
    const share = await api('POST', '/api/v1/action/referral_link', {
      body: { referral_code: link.body.referral_code, action_type: 'share' },
    });
    expect(share.status).toBe(201);
    const [delivery] = await rx.waitFor(1);
    const event = new Webhook(campaign.webhook_secret).verify(delivery!.body, headersOf(delivery!));
    expect(event).toMatchObject({ type: 'action.created', data: { ...share.body, metadata: {} } });
  });
});
