/**
 * Webhook delivery through the local stack: a write through the API -> table stream -> stream
 * poller -> local queue -> queue poller -> delivery handler -> a real HTTP receiver on 127.0.0.1.
 * Every event is made by the real writers (links' actions, signups); the global setup runs the
 * stack with WEBHOOK_RETRY_DELAYS=1,1,1 (4 attempts, 1 s apart). Every wait is on the receiver,
 * the table or the queue, except where a test shows that a delivery does NOT come (see
 * `noMoreWithin`).
 */

import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { holdsFor, mapLimit } from '../../tools/wait.ts';
import type { WebhookReceiver } from '../../tools/webhook-receiver.ts';
import { api, TENANT_A } from '../support/api.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import {
  type ActionBody,
  BROWSER_UA,
  createCampaignWithWebhook,
  createLink,
  createLinkAction,
  createReferredUser,
} from '../support/records.ts';
import { campaignItems, deadLetterOf } from '../support/table.ts';

const receiver = receiversClosedAfterAll();

/**
 * The longest a retry can follow the attempt before it on this stack: the 1 s delay (jittered
 * within ±20 % and rounded to whole seconds: 1 s), the queue poller's pickup (25-100 ms idle) and
 * a busy machine's margin. A request that has not come this long after the last one is not coming.
 */
const RETRY_WINDOW_MS = 1_500;

/**
 * Shows that `rx` gets no request beyond its `count`th: there is no state that says "no delivery
 * is coming", so this waits the bounded time in which one would have come (a retry, or a copy of
 * a delivered event), counted from the last request or from `since` (when the test last changed
 * what a delivery would find), and returns early if one comes, for the caller's assertion to fail.
 */
async function noMoreWithin(rx: WebhookReceiver, count: number, since = 0): Promise<void> {
  const last = Math.max(since, rx.requests.at(-1)?.receivedAt ?? 0);
  await holdsFor(last + RETRY_WINDOW_MS - Date.now(), () => rx.requests.length > count);
}

const actionEvent = (action: { id: number; referral_link: { campaign_id: string } }) =>
  actionEventId(action.id, action.referral_link.campaign_id);
const signupEvent = (user: { id: number }) => `evt_referred_user_${user.id}`;

/** A campaign of tenant A with its webhook at `url`, and a link of it to act on. */
async function campaignAndLink(url: string) {
  const campaign = await createCampaignWithWebhook(url);
  const link = await createLink(campaign.id, { referrer_id: 'referrer-1' });
  return { campaign, code: link.referral_code };
}

/** The stored `event_time` of an event-bearing item of the campaign (the body's `timestamp`). */
async function eventTimeOf(campaignId: string, eventId: string): Promise<string> {
  const items = await campaignItems(TENANT_A.tenant, campaignId, '');
  const item = items.find((i) => i.event_id === eventId);
  if (!item) throw new Error(`no item carries ${eventId}`);
  return String(item.event_time);
}

const headersOf = (r: { headers: Record<string, string | string[] | undefined> }) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') out[k] = v;
  return out;
};

describe('webhook delivery', () => {
  it('delivers one signed request per event that standardwebhooks verifies', async () => {
    const rx = await receiver();
    const { campaign, code } = await campaignAndLink(`${rx.url}/hooks/ok`);
    const action = await createLinkAction(code, 'signup_click', { plan: 'pro', n: 2 });
    const signup = await createReferredUser(code, 'u-1');

    const requests = await rx.waitFor(2);
    const wh = new Webhook(campaign.webhook_secret);
    const byId = new Map(requests.map((r) => [r.headers['webhook-id'], r]));
    expect([...byId.keys()].sort()).toEqual([actionEvent(action), signupEvent(signup)].sort());

    for (const [eventId, type, data] of [
      [actionEvent(action), 'action.created', action],
      [signupEvent(signup), 'referred_user.created', signup],
    ] as const) {
      const req = byId.get(eventId)!;
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/hooks/ok');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const ts = Number(req.headers['webhook-timestamp']);
      expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(30);
      // The package a customer uses accepts it, and returns the parsed body: the API's object.
      const body = wh.verify(req.body, headersOf(req));
      expect(body).toEqual({
        type,
        timestamp: await eventTimeOf(campaign.id, eventId),
        campaign_id: campaign.id,
        data,
      });
      expect(Object.keys(JSON.parse(req.body))).toEqual(['type', 'timestamp', 'campaign_id', 'data']);
      // ... and rejects a tampered body or another secret.
      expect(() => wh.verify(req.body.replace('"id":', '"id": '), headersOf(req))).toThrow();
      expect(() =>
        new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(req.body, headersOf(req)),
      ).toThrow();
    }
    // Answered 200: no retry and no second copy.
    await noMoreWithin(rx, 2);
    expect(rx.requests).toHaveLength(2);
  });

  it('retries 503 twice then stops after the 200: three attempts, one webhook-id', async () => {
    const rx = await receiver((_req, i) => (i < 2 ? { status: 503 } : { status: 200 }));
    const { campaign, code } = await campaignAndLink(rx.url);
    const action = await createLinkAction(code, 'visit');

    const requests = await rx.waitFor(3);
    expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([actionEvent(action)]));
    const wh = new Webhook(campaign.webhook_secret);
    for (const r of requests) expect(() => wh.verify(r.body, headersOf(r))).not.toThrow();
    // Backoff from the schedule (1 s, ±20 %) between attempts.
    expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(700);
    expect(requests[2]!.receivedAt - requests[1]!.receivedAt).toBeGreaterThanOrEqual(700);
    // Nothing after the success, when the fourth attempt would have been due.
    await noMoreWithin(rx, 3);
    expect(rx.requests).toHaveLength(3);
  });

  it('does not follow a 307 and retries it as a failure', async () => {
    const elsewhere = await receiver();
    const rx = await receiver((_req, i) =>
      i === 0 ? { status: 307, headers: { location: `${elsewhere.url}/stolen` } } : { status: 204 },
    );
    const { code } = await campaignAndLink(rx.url);
    const action = await createLinkAction(code, 'visit');

    const requests = await rx.waitFor(2);
    expect(requests.map((r) => r.headers['webhook-id'])).toEqual([actionEvent(action), actionEvent(action)]);
    await noMoreWithin(rx, 2);
    expect(rx.requests).toHaveLength(2);
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('stops at a 410: exactly one attempt', async () => {
    const rx = await receiver(() => ({ status: 410 }));
    const { code } = await campaignAndLink(rx.url);
    await createLinkAction(code, 'visit');

    await rx.waitFor(1);
    // A retry after a failure would come within the window; after a 410 none may.
    await noMoreWithin(rx, 1);
    expect(rx.requests).toHaveLength(1);
  });

  it('delivers a burst of 100 events as 100 distinct webhook-ids', async () => {
    const rx = await receiver();
    const { campaign, code } = await campaignAndLink(rx.url);
    const actions = await mapLimit(Array.from({ length: 100 }), 10, (_, i) =>
      createLinkAction(code, `burst-${i}`),
    );
    const requests = await rx.waitFor(100, 25_000);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    expect(ids).toEqual(new Set(actions.map(actionEvent)));
    const wh = new Webhook(campaign.webhook_secret);
    for (const r of requests) wh.verify(r.body, headersOf(r));
  });

  it('stops delivering once the campaign is deleted or its webhook_url cleared', async () => {
    // The first attempt is held in flight until the campaign has changed, then refused: the retry
    // (1 s later) must find the campaign gone, or without a URL, and drop the event. (The
    // first-attempt lane's drop of the same kind is a unit test of the handler: through the API, a
    // campaign cannot change between an event's write and its first attempt on purpose.)
    const change = async (label: string, changeCampaign: (id: string) => Promise<number>) => {
      let changed!: () => void;
      const campaignChanged = new Promise<void>((resolve) => {
        changed = resolve;
      });
      const rx = await receiver(() => ({ status: 500, until: campaignChanged }));
      const { campaign, code } = await campaignAndLink(`${rx.url}/${label}`);
      await createLinkAction(code, 'visit');
      await rx.waitFor(1);
      expect(await changeCampaign(campaign.id)).toBe(label === 'deleted' ? 204 : 200);
      const at = Date.now();
      changed();
      await noMoreWithin(rx, 1, at);
      expect(rx.requests.map((r) => r.path)).toEqual([`/${label}`]);
    };
    await Promise.all([
      change('deleted', async (id) => (await api('DELETE', `/api/v1/campaign?id=${id}`)).status),
      change(
        'cleared',
        async (id) =>
          (await api('PATCH', `/api/v1/campaign?id=${id}`, { body: { webhook_url: null } })).status,
      ),
    ]);
  });

  it('uses the webhook_url in force at delivery time', async () => {
    const before = await receiver(() => ({ status: 500 }));
    const after = await receiver();
    const { campaign, code } = await campaignAndLink(before.url);
    const action = await createLinkAction(code, 'visit');
    await before.waitFor(1);
    await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_url: after.url } });
    const [retry] = await after.waitFor(1);
    expect(retry!.headers['webhook-id']).toBe(actionEvent(action));
  });

  it('dead-letters the event after the last attempt', async () => {
    const rx = await receiver(() => ({ status: 500, body: 'down' }));
    const { campaign, code } = await campaignAndLink(rx.url);
    const action: ActionBody = await createLinkAction(code, 'visit');

    // 1 attempt + 3 retries (WEBHOOK_RETRY_DELAYS=1,1,1).
    await rx.waitFor(4);
    const dead = await deadLetterOf(actionEvent(action));
    expect(dead).toMatchObject({
      event_id: actionEvent(action),
      event_type: 'action.created',
      campaign_id: campaign.id,
      tenant: TENANT_A.tenant,
      dead_letter: { error: 'HTTP 500', status: 500, attempts: 4 },
    });
    expect(JSON.parse(String(dead.event_json))).toEqual(action);
    // Dead-lettered: no fifth attempt.
    await noMoreWithin(rx, 4);
    expect(rx.requests).toHaveLength(4);
  });
});

describe('webhooks from the API (a new user clicking a link and signing up)', () => {
  it('delivers visit, signup and action events whose data is what the API returned', async () => {
    const rx = await receiver();
    const campaign = await createCampaignWithWebhook(`${rx.url}/from-api`);
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

    // One delivery per event, each answered 200: no copy follows.
    await noMoreWithin(rx, 3);
    expect(rx.requests).toHaveLength(3);
  });

  it('delivers an action sent without metadata (stored as an empty map)', async () => {
    const rx = await receiver();
    const campaign = await createCampaignWithWebhook(`${rx.url}/no-metadata`);
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
