/**
 * `Idempotency-Key` on every POST of the route table, against the local stack (contract,
 * "Idempotent retries"): a retry gets the first answer again and writes nothing, another request
 * with a used key is 422, simultaneous requests with one key write once, and an answer that was
 * not a 2xx is not kept.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { routes } from '../../lib/routes.ts';
import { eventually, holdsFor, mapLimit } from '../../tools/wait.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError, expectValidation } from '../support/assertions.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import {
  createCampaign,
  createCampaignWithWebhook,
  createLink,
  createReferredUser,
  fetchLink,
} from '../support/records.ts';
import { settledActionItems } from '../support/table.ts';

const keyed = (key: string) => ({ 'idempotency-key': key });

/** POST with a key; the raw text is what a replay must repeat byte for byte. */
async function post(path: string, body: unknown, key: string, apiKey?: string) {
  return api('POST', path, { body, headers: keyed(key), key: apiKey });
}

/**
 * A keyed POST that may meet its first request still settling (an action of a referred user is
 * answered from the stream a moment after its write): retried while 409 in progress, like a client.
 */
async function postUntilAnswered(path: string, body: unknown, key: string) {
  return eventually(`an answer to ${path} other than 409 idempotency_key_in_progress`, async () => {
    const res = await post(path, body, key);
    return res.status === 409 && res.body?.error?.code === 'idempotency_key_in_progress' ? undefined : res;
  });
}

describe('Idempotency-Key: a retry gets the first answer and writes nothing', () => {
  it('every POST of the route table takes a key (the table drives this list)', () => {
    const posts = routes.filter((r) => r.method === 'POST').map((r) => r.path);
    expect(posts.sort()).toEqual(
      [
        '/api/v1/action/referral_link',
        '/api/v1/action/referred_user',
        '/api/v1/campaign',
        '/api/v1/campaign/rotate_webhook_secret',
        // Its replays: 'POST /api/v1/campaign/webhook_test' below.
        '/api/v1/campaign/webhook_test',
        '/api/v1/conversion',
        '/api/v1/conversion/{id}/refund',
        '/api/v1/events/{event_id}/redeliver',
        '/api/v1/referral_link',
        '/api/v1/referred_user',
        // Their replays: test/integration/rewards-api.test.ts.
        '/api/v1/reward/{id}/approve',
        '/api/v1/reward/{id}/void',
        '/api/v1/payout',
      ].sort(),
    );
  });

  it('POST /api/v1/campaign: one campaign, the same answer', async () => {
    const key = randomUUID();
    const body = { url: 'example.com/idem', name: 'Idempotent' };
    const first = await post('/api/v1/campaign', body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const again = await post('/api/v1/campaign', body, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('POST /api/v1/referral_link with a generated code: one link', async () => {
    const campaign = await createCampaign({ name: 'idem links' });
    const key = randomUUID();
    const first = await post('/api/v1/referral_link', { campaign_id: campaign.id, referrer_id: 'idem' }, key);
    const again = await post('/api/v1/referral_link', { campaign_id: campaign.id, referrer_id: 'idem' }, key);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.text).toBe(first.text);
    const list = await api('GET', `/api/v1/referral_link/${campaign.id}/idem`);
    expect(list.body).toHaveLength(1);
  });

  it('POST /api/v1/referred_user: the retry is the first 201, not 409 referred_user_exists', async () => {
    const campaign = await createCampaign({ name: 'idem signups' });
    const link = await createLink(campaign.id);
    const key = randomUUID();
    const body = { referral_code: link.referral_code, referred_user_id: 'idem-user' };
    const first = await post('/api/v1/referred_user', body, key);
    const again = await post('/api/v1/referred_user', body, key);
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.text).toBe(first.text);
    expect((await fetchLink(link.id)).total_referrals).toBe(1);
    // Without the key, the same signup is the duplicate it is.
    expectError(await api('POST', '/api/v1/referred_user', { body }), 409, 'referred_user_exists');
  });

  it('POST /api/v1/action/referral_link: counted once, one action item, one event', async () => {
    const campaign = await createCampaign({ name: 'idem link actions' });
    const link = await createLink(campaign.id);
    const key = randomUUID();
    const body = { referral_code: link.referral_code, action_type: 'purchase', metadata: { order: 1 } };
    const first = await post('/api/v1/action/referral_link', body, key);
    for (let i = 0; i < 3; i++) {
      const again = await post('/api/v1/action/referral_link', body, key);
      expect(again.status).toBe(201);
      expect(again.text).toBe(first.text);
    }
    expect((await fetchLink(link.id)).total_clicks).toBe(1);
    expect(await settledActionItems(TENANT_A.tenant, campaign.id, [link.referral_code])).toHaveLength(1);
  });

  it('POST /api/v1/action/referred_user: counted once; a retry is answered once the first has settled', async () => {
    const campaign = await createCampaign({ name: 'idem user actions' });
    const link = await createLink(campaign.id);
    await createReferredUser(link.referral_code, 'idem-buyer');
    const key = randomUUID();
    const body = { campaign_id: campaign.id, referred_user_id: 'idem-buyer', action_type: 'purchase' };
    const first = await post('/api/v1/action/referred_user', body, key);
    expect(first.status).toBe(201);
    // Right after the write the answer may still be on its way to storage: 409 in progress, never a second write.
    const immediate = await post('/api/v1/action/referred_user', body, key);
    expect([201, 409]).toContain(immediate.status);
    if (immediate.status === 409) expectError(immediate, 409, 'idempotency_key_in_progress');
    const again = await postUntilAnswered('/api/v1/action/referred_user', body, key);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await fetchLink(link.id)).total_clicks).toBe(1);
    expect(await settledActionItems(TENANT_A.tenant, campaign.id, [link.referral_code])).toHaveLength(1);
  });
});

describe('Idempotency-Key: POST /api/v1/campaign/webhook_test', () => {
  const receiver = receiversClosedAfterAll();

  it('a retry replays the first answer and sends no second test; another campaign with the key is 422', async () => {
    const rx = await receiver(() => ({ status: 204 }));
    const campaign = await createCampaignWithWebhook(`${rx.url}/idem`);
    const path = `/api/v1/campaign/webhook_test?id=${campaign.id}`;
    const key = randomUUID();
    const first = await post(path, undefined, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ delivered: true, status_code: 204 });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 2; i++) {
      const again = await post(path, undefined, key);
      expect(again.status).toBe(200);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    await holdsFor(1_000, () => rx.requests.length > 1);
    expect(rx.requests).toHaveLength(1);
    const other = await createCampaignWithWebhook(`${rx.url}/other`);
    expectError(
      await post(`/api/v1/campaign/webhook_test?id=${other.id}`, undefined, key),
      422,
      'idempotency_key_reused',
    );
    await holdsFor(500, () => rx.requests.length > 1);
    expect(rx.requests).toHaveLength(1);
    // Without a key, each call is a test of its own.
    expect((await api('POST', path)).status).toBe(200);
    expect(rx.requests).toHaveLength(2);
  });

  it('a retry while the first test is still waiting on the receiver is 409, and sends nothing', async () => {
    let answer: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      answer = resolve;
    });
    const rx = await receiver(() => ({ status: 200, until: held }));
    const campaign = await createCampaignWithWebhook(`${rx.url}/slow`);
    const path = `/api/v1/campaign/webhook_test?id=${campaign.id}`;
    const key = randomUUID();
    const first = post(path, undefined, key);
    await rx.waitFor(1, 10_000);
    expectError(await post(path, undefined, key), 409, 'idempotency_key_in_progress');
    answer();
    const done = await first;
    expect(done.status).toBe(200);
    const replay = await post(path, undefined, key);
    expect(replay.text).toBe(done.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(rx.requests).toHaveLength(1);
  });
});

describe('Idempotency-Key: misuse and scope', () => {
  it('the same key with another body, path or method is 422 idempotency_key_reused', async () => {
    const key = randomUUID();
    expect((await post('/api/v1/campaign', { url: 'example.com', name: 'first' }, key)).status).toBe(201);
    expectError(
      await post('/api/v1/campaign', { url: 'example.com', name: 'second' }, key),
      422,
      'idempotency_key_reused',
    );
    const campaign = await createCampaign({ name: 'reuse' });
    expectError(
      await post('/api/v1/referral_link', { campaign_id: campaign.id }, key),
      422,
      'idempotency_key_reused',
    );
  });

  it('the body is compared as parsed JSON: member order and spacing do not matter', async () => {
    const key = randomUUID();
    const headers = { 'content-type': 'application/json', ...keyed(key) };
    const first = await api('POST', '/api/v1/campaign', {
      rawBody: '{"url":"example.com","name":"order"}',
      headers,
    });
    const again = await api('POST', '/api/v1/campaign', {
      rawBody: '{ "name" : "order",\n "url": "example.com" }',
      headers,
    });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
  });

  it('keys are per tenant: another tenant with the same key makes its own request', async () => {
    const key = randomUUID();
    const body = { url: 'example.com', name: 'scoped' };
    const a = await post('/api/v1/campaign', body, key, TENANT_A.key);
    const b = await post('/api/v1/campaign', body, key, TENANT_B.key);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.headers.get('idempotent-replayed')).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé'],
    ['a control character', 'a\tb'],
  ])('a key that is %s is 400 validation_failed', async (_label, key) => {
    const res = await api('POST', '/api/v1/campaign', {
      body: { url: 'example.com', name: 'bad key' },
      headers: { 'idempotency-key': Buffer.from(key).toString('latin1') },
    });
    expectValidation(res, 'Idempotency-Key');
  });

  it('an answer that is not a 2xx is not kept: the retry runs again', async () => {
    const campaign = await createCampaign({ name: 'not kept' });
    const code = `late_${Date.now()}`;
    const key = randomUUID();
    const body = { referral_code: code, action_type: 'early' };
    expectError(await post('/api/v1/action/referral_link', body, key), 404, 'referral_link_not_found');
    await createLink(campaign.id, { referral_code: code });
    const retried = await post('/api/v1/action/referral_link', body, key);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotent-replayed')).toBeNull();
  });

  it('20 simultaneous requests with one key write once, and all get that one answer', async () => {
    const campaign = await createCampaign({ name: 'simultaneous' });
    const link = await createLink(campaign.id);
    const key = randomUUID();
    const body = { referral_code: link.referral_code, action_type: 'click' };
    const answers = await mapLimit(Array.from({ length: 20 }), 20, () =>
      post('/api/v1/action/referral_link', body, key),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect((await fetchLink(link.id)).total_clicks).toBe(1);
  });

  it('20 simultaneous actions of a referred user with one key count once', async () => {
    const campaign = await createCampaign({ name: 'simultaneous users' });
    const link = await createLink(campaign.id);
    await createReferredUser(link.referral_code, 'rush');
    const key = randomUUID();
    const body = { campaign_id: campaign.id, referred_user_id: 'rush', action_type: 'click' };
    const answers = await mapLimit(Array.from({ length: 20 }), 20, () =>
      post('/api/v1/action/referred_user', body, key),
    );
    for (const a of answers) {
      expect([201, 409]).toContain(a.status);
      if (a.status === 409) expectError(a, 409, 'idempotency_key_in_progress');
    }
    expect(
      answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null),
    ).toHaveLength(1);
    expect((await fetchLink(link.id)).total_clicks).toBe(1);
    const settled = await postUntilAnswered('/api/v1/action/referred_user', body, key);
    expect(settled.headers.get('idempotent-replayed')).toBe('true');
  });
});
