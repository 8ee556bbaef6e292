/**
 * Webhook operations (contract, "Webhook operations", endpoints 18–22) through the local stack:
 * the events feed, the delivery log, redelivery, the test event, secret rotation, event filters
 * and the webhook status. Events come from the real writers; the global setup runs the stack with
 * WEBHOOK_RETRY_DELAYS=1,1,1 (4 attempts, 1 s apart). Automatic disabling needs a short setting
 * and has a stack of its own (`webhook-auto-disable.test.ts`).
 */

import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { actionKey } from '../../lib/db/entities/action.ts';
import {
  eventLookupKey,
  newEventLookupItem,
  REDELIVERIES_PER_HOUR,
} from '../../lib/db/entities/webhook-event.ts';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { eventually, holdsFor } from '../../tools/wait.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError, expectValidation } from '../support/assertions.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import {
  BROWSER_UA,
  createCampaign,
  createCampaignWithWebhook,
  createLink,
  createLinkAction,
  createReferredUser,
  randomId,
} from '../support/records.ts';
import { putItems, table } from '../support/table.ts';

// biome-ignore lint/suspicious/noExplicitAny: the tests read a few fields of known responses
type Json = any;

const receiver = receiversClosedAfterAll();

const headersOf = (r: { headers: Record<string, string | string[] | undefined> }) => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (typeof v === 'string') out[k] = v;
  return out;
};

/** The campaign's whole feed, once it holds `count` events. */
async function feedOf(campaignId: string, count: number, key?: string) {
  return eventually(`${count} events in the feed of ${campaignId}`, async () => {
    const res = await api('GET', `/api/v1/events/${campaignId}?limit=1000`, { key });
    return res.status === 200 && res.body.length >= count ? res : undefined;
  });
}

/** The campaign's delivery log (a status's, with `query`), once `ready` holds for it. */
async function logOf(campaignId: string, ready: (attempts: Json[]) => boolean, query = '') {
  return eventually(`delivery log of ${campaignId} ${query}`, async () => {
    const res = await api('GET', `/api/v1/webhook_deliveries/${campaignId}${query}`);
    return res.status === 200 && ready(res.body) ? res.body : undefined;
  });
}

/** A campaign with a webhook at `url` and a link of it. */
async function hooked(url: string) {
  const campaign = await createCampaignWithWebhook(url);
  const link = await createLink(campaign.id, { referrer_id: 'ops' });
  return { campaign, code: link.referral_code };
}

describe('events feed (endpoint 19)', () => {
  it('lists every event, oldest first, exactly as the webhook body with its id', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/feed`);
    const first = await createLinkAction(code, 'first', { n: 1 });
    const signup = await createReferredUser(code, 'feed-user');
    const third = await createLinkAction(code, 'third', { big: 12345678901234567890n.toString() });
    const feed = await feedOf(campaign.id, 3);
    expect(feed.body.map((e: Json) => e.id)).toEqual([
      actionEventId(first.id, campaign.id),
      `evt_referred_user_${signup.id}`,
      actionEventId(third.id, campaign.id),
    ]);
    // Each is the body the receiver got, plus its id.
    const delivered = await rx.waitFor(3);
    for (const event of feed.body) {
      const req = delivered.find((r) => r.headers['webhook-id'] === event.id)!;
      const { id, ...body } = event;
      expect(JSON.parse(req.body)).toEqual(body);
      expect(id).toBe(req.headers['webhook-id']);
    }
    expect(feed.body[1]).toMatchObject({
      type: 'referred_user.created',
      campaign_id: campaign.id,
      data: signup,
    });
  });

  it('pages with a cursor, and a poll cursor yields only newer events later', async () => {
    const campaign = await createCampaign({ name: 'feed paging' });
    const { referral_code: code } = await createLink(campaign.id);
    const actions = [];
    for (let i = 0; i < 3; i++) actions.push(await createLinkAction(code, `a${i}`));
    await feedOf(campaign.id, 3);

    const page1 = await api('GET', `/api/v1/events/${campaign.id}?limit=2`);
    expect(page1.body.map((e: Json) => e.data.id)).toEqual([actions[0]!.id, actions[1]!.id]);
    const next = page1.headers.get('x-next-cursor')!;
    expect(page1.headers.get('link')).toBe(
      `</api/v1/events/${campaign.id}?limit=2&cursor=${next}>; rel="next"`,
    );
    const page2 = await api('GET', `/api/v1/events/${campaign.id}?limit=2&cursor=${next}`);
    expect(page2.body.map((e: Json) => e.data.id)).toEqual([actions[2]!.id]);
    expect(page2.headers.get('x-next-cursor')).toBeNull();
    expect(page2.headers.get('link')).toBeNull();
    const poll = page2.headers.get('x-poll-cursor')!;

    // Nothing new yet: an empty page that hands the same position back.
    const idle = await api('GET', `/api/v1/events/${campaign.id}?cursor=${poll}`);
    expect(idle.body).toEqual([]);
    expect(idle.headers.get('x-poll-cursor')).toBe(poll);

    const later = await createLinkAction(code, 'later');
    const polled = await eventually('the newer event', async () => {
      const res = await api('GET', `/api/v1/events/${campaign.id}?cursor=${poll}`);
      return res.body.length > 0 ? res : undefined;
    });
    expect(polled.body.map((e: Json) => e.data.id)).toEqual([later.id]);
  });

  it('is the campaign owner’s only, and a cursor works only on its own list', async () => {
    const campaign = await createCampaign({ name: 'feed isolation' });
    const other = await createCampaign({ name: 'feed isolation 2' });
    expectError(
      await api('GET', `/api/v1/events/${campaign.id}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    expectError(await api('GET', `/api/v1/events/${randomId()}`), 404, 'campaign_not_found');
    expectValidation(await api('GET', '/api/v1/events/not-a-uuid'), 'campaign_id');
    const poll = (await api('GET', `/api/v1/events/${campaign.id}`)).headers.get('x-poll-cursor')!;
    expectValidation(await api('GET', `/api/v1/events/${other.id}?cursor=${poll}`), 'cursor');
    expectValidation(await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?cursor=${poll}`), 'cursor');
    expectValidation(await api('GET', `/api/v1/events/${campaign.id}?cursor=bm9wZQ`), 'cursor');
    const head = await api('HEAD', `/api/v1/events/${campaign.id}`);
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('x-poll-cursor')).toBe(poll);
  });
});

describe('delivery log (endpoint 18)', () => {
  it('records every attempt, newest first, filterable by status', async () => {
    const rx = await receiver((_, i) => ({ status: i < 2 ? 500 : 200 }));
    const { campaign, code } = await hooked(`${rx.url}/flaky`);
    const action = await createLinkAction(code, 'retried');
    const eventId = actionEventId(action.id, campaign.id);
    const log = await logOf(campaign.id, (a) => a.some((x) => x.status === 'succeeded'));
    expect(log.map((a: Json) => [a.attempt, a.status, a.status_code])).toEqual([
      [3, 'succeeded', 200],
      [2, 'pending', 500],
      [1, 'pending', 500],
    ]);
    for (const a of log) {
      expect(a).toMatchObject({ event_id: eventId, event_type: 'action.created', url: `${rx.url}/flaky` });
      expect(a.duration_ms).toBeGreaterThanOrEqual(0);
    }
    expect(log[0]).toMatchObject({ error: null, next_attempt_at: null });
    expect(log[1].error).toBe('HTTP 500');
    expect(Date.parse(log[1].next_attempt_at)).toBeGreaterThan(Date.parse(log[1].attempted_at));
    expect(Date.parse(log[0].attempted_at)).toBeGreaterThan(Date.parse(log[1].attempted_at));

    const pending = await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?status=pending&limit=1`);
    expect(pending.body.map((a: Json) => a.attempt)).toEqual([2]);
    const next = pending.headers.get('x-next-cursor')!;
    expect(pending.headers.get('link')).toContain('status=pending');
    const rest = await api(
      'GET',
      `/api/v1/webhook_deliveries/${campaign.id}?status=pending&limit=1&cursor=${next}`,
    );
    expect(rest.body.map((a: Json) => a.attempt)).toEqual([1]);
    // The cursor belongs to the pending list: not the whole log's, nor another status's.
    expectValidation(await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?cursor=${next}`), 'cursor');
    expectValidation(
      await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?status=failed&cursor=${next}`),
      'cursor',
    );
    expect((await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?status=failed`)).body).toEqual([]);
    expectValidation(await api('GET', `/api/v1/webhook_deliveries/${campaign.id}?status=late`), 'status');
  });

  it('marks the last failed attempt failed, with no next attempt', async () => {
    const rx = await receiver(() => ({ status: 503 }));
    const { campaign, code } = await hooked(`${rx.url}/down`);
    await createLinkAction(code, 'doomed');
    const failed = await logOf(campaign.id, (a) => a.length === 1, '?status=failed');
    expect(failed[0]).toMatchObject({
      attempt: 4,
      status: 'failed',
      status_code: 503,
      next_attempt_at: null,
    });
    const all = await api('GET', `/api/v1/webhook_deliveries/${campaign.id}`);
    expect(all.body.map((a: Json) => a.status)).toEqual(['failed', 'pending', 'pending', 'pending']);
  });

  it('is the campaign owner’s only', async () => {
    const campaign = await createCampaign({ name: 'log isolation' });
    expectError(
      await api('GET', `/api/v1/webhook_deliveries/${campaign.id}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    expectError(await api('GET', `/api/v1/webhook_deliveries/${randomId()}`), 404, 'campaign_not_found');
    const head = await api('HEAD', `/api/v1/webhook_deliveries/${campaign.id}`);
    expect([head.status, head.text]).toEqual([200, '']);
  });
});

describe('redelivery (endpoint 20)', () => {
  it('sends the event again, signed anew, with the same webhook-id', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/again`);
    const action = await createLinkAction(code, 'redo');
    const eventId = actionEventId(action.id, campaign.id);
    const [first] = await rx.waitFor(1);
    await feedOf(campaign.id, 1);
    const res = await api('POST', `/api/v1/events/${eventId}/redeliver`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ event_id: eventId, status: 'queued' });
    const [, again] = await rx.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(eventId);
    expect(again!.body).toBe(first!.body);
    expect(new Webhook(campaign.webhook_secret).verify(again!.body, headersOf(again!))).toBeTruthy();
    await logOf(campaign.id, (a) => a.length === 2 && a.every((x) => x.event_id === eventId));
  });

  it('finds a visit’s event (in a visit partition) and a signup’s by id; an action’s event has no lookup item of its own', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/visit-again`);
    const visit = await api('GET', `/r/${code}`, { key: null, headers: { 'user-agent': BROWSER_UA } });
    expect(visit.status).toBe(302);
    const signup = await createReferredUser(code, 'again-user');
    const [first, second] = await rx.waitFor(2);
    const visitEvent = [first, second].find((r) => JSON.parse(r!.body).type === 'action.created')!;
    const visitId = String(visitEvent.headers['webhook-id']);
    const visitAction = JSON.parse(visitEvent.body).data;
    expect(visitAction.action_type).toBe('visit');
    expect(visitId).toBe(actionEventId(visitAction.id, campaign.id));
    await feedOf(campaign.id, 2);
    for (const id of [visitId, `evt_referred_user_${signup.id}`])
      expect((await api('POST', `/api/v1/events/${id}/redeliver`)).status, id).toBe(202);
    const again = await rx.waitFor(4);
    expect(
      again
        .slice(2)
        .map((r) => r.headers['webhook-id'])
        .sort(),
    ).toEqual([visitId, `evt_referred_user_${signup.id}`].sort());
    expect(again.slice(2).find((r) => r.headers['webhook-id'] === visitId)!.body).toBe(visitEvent.body);
    const { db, name } = table();
    const lookup = (id: string) =>
      db.send(
        new GetCommand({ TableName: name, Key: eventLookupKey(TENANT_A.tenant, id), ConsistentRead: true }),
      );
    expect((await lookup(visitId)).Item).toBeUndefined();
    expect((await lookup(`evt_referred_user_${signup.id}`)).Item).toBeDefined();
  });

  it('finds an action’s event of the older form (evt_action_<id>) through its lookup item, and none past 30 days', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/older`);
    const action = await createLinkAction(code, 'older form');
    const [delivered] = await rx.waitFor(1);
    // As the feed writer stored events before the id named the campaign: a lookup item by that id.
    const older = JSON.parse(delivered!.body);
    const olderId = `evt_action_${action.id}`;
    const event = {
      event_id: olderId,
      event_type: 'action.created' as const,
      event_time: older.timestamp,
      event_json: JSON.stringify(older.data),
      tenant: TENANT_A.tenant,
      campaign_id: campaign.id,
    };
    await putItems([newEventLookupItem(event)]);
    expect((await api('POST', `/api/v1/events/${olderId}/redeliver`)).status).toBe(202);
    const [, again] = await rx.waitFor(2);
    expect(again!.headers['webhook-id']).toBe(olderId);
    expect(JSON.parse(again!.body).data).toEqual(older.data);

    // An action item whose event is older than the 30 days the feed keeps: not found.
    const { db, name } = table();
    const key = actionKey(TENANT_A.tenant, campaign.id, action.id);
    const { Item } = await db.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }));
    const id = actionEventId(action.id, campaign.id);
    expect((await api('POST', `/api/v1/events/${id}/redeliver`)).status).toBe(202);
    const old = new Date(Date.now() - 31 * 24 * 3600 * 1000).toISOString();
    await db.send(new PutCommand({ TableName: name, Item: { ...Item, event_time: old } }));
    expectError(await api('POST', `/api/v1/events/${id}/redeliver`), 404, 'event_not_found');
  });

  it('an event from before the campaign had a webhook_url is in the feed, not sent; a redelivery sends it', async () => {
    const rx = await receiver();
    const campaign = await createCampaign({ name: 'webhook set later' });
    const { referral_code: code } = await createLink(campaign.id);
    const before = await createLinkAction(code, 'before the url');
    const [event] = (await feedOf(campaign.id, 1)).body;
    const patched = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { webhook_url: `${rx.url}/later` },
    });
    expect(patched.status).toBe(200);
    await holdsFor(1_500, () => rx.requests.length > 0);
    expect(rx.requests).toHaveLength(0);
    const id = actionEventId(before.id, campaign.id);
    expect(event.id).toBe(id);
    expect((await api('POST', `/api/v1/events/${id}/redeliver`)).status).toBe(202);
    const [sent] = await rx.waitFor(1);
    expect(sent!.headers['webhook-id']).toBe(id);
    const after = await createLinkAction(code, 'after the url');
    const [, next] = await rx.waitFor(2);
    expect(next!.headers['webhook-id']).toBe(actionEventId(after.id, campaign.id));
  });

  it('with an Idempotency-Key, a retry queues nothing more', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/keyed`);
    const action = await createLinkAction(code, 'keyed');
    await rx.waitFor(1);
    await feedOf(campaign.id, 1);
    const path = `/api/v1/events/${actionEventId(action.id, campaign.id)}/redeliver`;
    const key = randomId();
    const first = await api('POST', path, { headers: { 'idempotency-key': key } });
    const again = await api('POST', path, { headers: { 'idempotency-key': key } });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await rx.waitFor(2);
    await holdsFor(2_000, () => rx.requests.length > 2);
    expect(rx.requests).toHaveLength(2);
  });

  it(`caps an event at ${REDELIVERIES_PER_HOUR} redeliveries an hour: the next is 429 with Retry-After, and sends nothing`, async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/capped`);
    const action = await createLinkAction(code, 'capped');
    await rx.waitFor(1);
    await feedOf(campaign.id, 1);
    const path = `/api/v1/events/${actionEventId(action.id, campaign.id)}/redeliver`;
    // All at once: the cap is one conditional count in the request's own transaction.
    const answers = await Promise.all(
      Array.from({ length: REDELIVERIES_PER_HOUR + 1 }, () => api('POST', path)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([
      ...Array<number>(REDELIVERIES_PER_HOUR).fill(202),
      429,
    ]);
    const limited = answers.find((a) => a.status === 429)!;
    expectError(limited, 429, 'rate_limited');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Still refused, and a key does not get around it.
    expectError(await api('POST', path, { headers: { 'idempotency-key': randomId() } }), 429, 'rate_limited');
    // The first delivery and the capped redeliveries, nothing more.
    await rx.waitFor(1 + REDELIVERIES_PER_HOUR);
    await holdsFor(2_000, () => rx.requests.length > 1 + REDELIVERIES_PER_HOUR);
    expect(rx.requests).toHaveLength(1 + REDELIVERIES_PER_HOUR);
    // Another event of the campaign has a count of its own.
    const other = await createLinkAction(code, 'uncapped');
    await feedOf(campaign.id, 2);
    expect(
      (await api('POST', `/api/v1/events/${actionEventId(other.id, campaign.id)}/redeliver`)).status,
    ).toBe(202);
  });

  it('answers 404 for an unknown event or another tenant’s', async () => {
    const campaign = await createCampaign({ name: 'redeliver isolation' });
    const { referral_code: code } = await createLink(campaign.id);
    const action = await createLinkAction(code, 'mine');
    await feedOf(campaign.id, 1);
    expectError(
      await api('POST', `/api/v1/events/${actionEventId(action.id, campaign.id)}/redeliver`, {
        key: TENANT_B.key,
      }),
      404,
      'event_not_found',
    );
    expectError(
      await api('POST', '/api/v1/events/evt_action_999999999999/redeliver'),
      404,
      'event_not_found',
    );
    expectValidation(await api('POST', '/api/v1/events/nope/redeliver'), 'event_id');
    // A deleted campaign's events are gone with it.
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`)).status).toBe(204);
    expectError(
      await api('POST', `/api/v1/events/${actionEventId(action.id, campaign.id)}/redeliver`),
      404,
      'event_not_found',
    );
  });
});

describe('test event (endpoint 21)', () => {
  it('POSTs a signed webhook.test now and answers what the endpoint said', async () => {
    const rx = await receiver((_, i) => ({ status: i === 0 ? 204 : 500 }));
    const campaign = await createCampaignWithWebhook(`${rx.url}/probe`);
    const ok = await api('POST', `/api/v1/campaign/webhook_test?id=${campaign.id}`);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ delivered: true, status_code: 204, error: null });
    const [req] = await rx.waitFor(1);
    const body = new Webhook(campaign.webhook_secret).verify(req!.body, headersOf(req!)) as Json;
    expect(body).toMatchObject({ type: 'webhook.test', campaign_id: campaign.id });
    expect(req!.headers['webhook-id']).toMatch(/^evt_test_/);

    const bad = await api('POST', `/api/v1/campaign/webhook_test?id=${campaign.id}`);
    expect(bad.body).toMatchObject({ delivered: false, status_code: 500, error: 'HTTP 500' });
    // Never retried, never in the feed; both in the log.
    await holdsFor(1_500, () => rx.requests.length > 2);
    expect(rx.requests).toHaveLength(2);
    expect((await api('GET', `/api/v1/events/${campaign.id}`)).body).toEqual([]);
    const log = await logOf(campaign.id, (a) => a.length === 2);
    expect(log.map((a: Json) => [a.event_type, a.status])).toEqual([
      ['webhook.test', 'failed'],
      ['webhook.test', 'succeeded'],
    ]);
  });

  it('reports a connection error, 409 without a webhook_url, 404 for another tenant', async () => {
    const refused = await createCampaignWithWebhook('http://127.0.0.1:9/closed');
    const res = await api('POST', `/api/v1/campaign/webhook_test?id=${refused.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: null });
    expect(res.body.error).toMatch(/ECONNREFUSED/);
    const bare = await createCampaign({ name: 'no hook' });
    expectError(await api('POST', `/api/v1/campaign/webhook_test?id=${bare.id}`), 409, 'webhook_url_not_set');
    expectError(
      await api('POST', `/api/v1/campaign/webhook_test?id=${refused.id}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
  });
});

describe('secret rotation (endpoint 22)', () => {
  it('signs with both secrets for 24 h: the standardwebhooks package verifies with either', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/rotate`);
    const rotated = await api('POST', `/api/v1/campaign/rotate_webhook_secret?id=${campaign.id}`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.webhook_secret).toMatch(/^whsec_/);
    expect(rotated.body.webhook_secret).not.toBe(campaign.webhook_secret);
    expect(rotated.body).toMatchObject({ id: campaign.id, webhook_url: campaign.webhook_url });

    await createLinkAction(code, 'after rotation');
    const [req] = await rx.waitFor(1);
    const signatures = String(req!.headers['webhook-signature']).split(' ');
    expect(signatures).toHaveLength(2);
    for (const s of signatures) expect(s).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(rotated.body.webhook_secret).verify(req!.body, headersOf(req!))).toBeTruthy();
    expect(new Webhook(campaign.webhook_secret).verify(req!.body, headersOf(req!))).toBeTruthy();
    const stranger = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    expect(() => new Webhook(stranger).verify(req!.body, headersOf(req!))).toThrow();
    // The test event is signed the same way.
    await api('POST', `/api/v1/campaign/webhook_test?id=${campaign.id}`);
    const [, probe] = await rx.waitFor(2);
    expect(new Webhook(campaign.webhook_secret).verify(probe!.body, headersOf(probe!))).toBeTruthy();
  });

  it('with an Idempotency-Key, a retry answers the same secret and does not rotate again', async () => {
    const campaign = await createCampaignWithWebhook('http://127.0.0.1:9/keyed-rotation');
    const key = randomId();
    const path = `/api/v1/campaign/rotate_webhook_secret?id=${campaign.id}`;
    const first = await api('POST', path, { headers: { 'idempotency-key': key } });
    const again = await api('POST', path, { headers: { 'idempotency-key': key } });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const now = await api('GET', `/api/v1/campaign?id=${campaign.id}`);
    expect(now.body.webhook_secret).toBe(first.body.webhook_secret);
  });

  it('is 409 without a webhook_url and 404 for another tenant', async () => {
    const bare = await createCampaign({ name: 'nothing to rotate' });
    expectError(
      await api('POST', `/api/v1/campaign/rotate_webhook_secret?id=${bare.id}`),
      409,
      'webhook_url_not_set',
    );
    expectError(
      await api('POST', `/api/v1/campaign/rotate_webhook_secret?id=${bare.id}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    expectError(
      await api('POST', `/api/v1/campaign/rotate_webhook_secret?id=${randomId()}`),
      404,
      'campaign_not_found',
    );
  });
});

describe('event filters and webhook status', () => {
  it('sends only the subscribed types; the others are still in the feed', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/filtered`);
    expect(campaign).toMatchObject({
      webhook_events: [
        'action.created',
        'referred_user.created',
        'conversion.created',
        'conversion.refunded',
        'reward.created',
        'reward.approved',
        'reward.voided',
        'reward.paid',
        'reward.flagged',
      ],
      webhook_status: 'enabled',
      webhook_disabled_reason: null,
    });
    const patched = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { webhook_events: ['referred_user.created'] },
    });
    expect(patched.body.webhook_events).toEqual(['referred_user.created']);
    await createLinkAction(code, 'not sent');
    const signup = await createReferredUser(code, 'sent-user');
    const [req] = await rx.waitFor(1);
    expect(req!.headers['webhook-id']).toBe(`evt_referred_user_${signup.id}`);
    const feed = await feedOf(campaign.id, 2);
    expect(feed.body.map((e: Json) => e.type)).toEqual(['action.created', 'referred_user.created']);
    await holdsFor(1_500, () => rx.requests.length > 1);
    expect(rx.requests).toHaveLength(1);
  });

  it('refuses an empty list, a repeated type and an unknown one', async () => {
    const campaign = await createCampaign({ name: 'filter validation' });
    const patch = (webhook_events: unknown) =>
      api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_events } });
    expectValidation(await patch([]), 'webhook_events');
    expectValidation(await patch(['action.created', 'action.created']), 'webhook_events');
    expectValidation(await patch(['webhook.test']), 'webhook_events.0');
    expectValidation(await patch('action.created'), 'webhook_events');
    expectValidation(
      await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_status: 'paused' } }),
      'webhook_status',
    );
  });

  it('sends nothing while disabled, and again once enabled; events stay in the feed', async () => {
    const rx = await receiver();
    const { campaign, code } = await hooked(`${rx.url}/toggle`);
    const off = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { webhook_status: 'disabled' },
    });
    expect(off.body).toMatchObject({
      webhook_status: 'disabled',
      webhook_disabled_reason: 'Disabled through the API.',
    });
    await createLinkAction(code, 'while disabled');
    await feedOf(campaign.id, 1);
    await holdsFor(1_500, () => rx.requests.length > 0);
    expect(rx.requests).toHaveLength(0);
    const on = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { webhook_status: 'enabled' },
    });
    expect(on.body).toMatchObject({ webhook_status: 'enabled', webhook_disabled_reason: null });
    const after = await createLinkAction(code, 'enabled again');
    const [req] = await rx.waitFor(1);
    expect(req!.headers['webhook-id']).toBe(actionEventId(after.id, campaign.id));
  });
});
