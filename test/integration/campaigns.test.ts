import { describe, expect, it } from 'vitest';
import { api, rawRequest, TENANT_A } from '../support/api.ts';
import {
  expectCampaign,
  expectError,
  expectRequestId,
  expectValidation,
  WEBHOOK_SECRET,
} from '../support/assertions.ts';
import { type CampaignBody, createCampaign, randomId } from '../support/records.ts';

const path = (id: string) => `/api/v1/campaign?id=${id}`;

async function getCampaign(id: string): Promise<CampaignBody> {
  const res = await api<CampaignBody>('GET', path(id));
  expect(res.status).toBe(200);
  return res.body;
}

async function patch(id: string, body: unknown) {
  return api<CampaignBody>('PATCH', path(id), { body });
}

describe('POST /api/v1/campaign', () => {
  it('201 with a new campaign: https:// added, webhook fields null', async () => {
    const res = await api<CampaignBody>('POST', '/api/v1/campaign', {
      body: { url: 'example.com', name: 'Spring' },
    });
    expect(res.status).toBe(201);
    expectRequestId(res);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expectCampaign(res.body);
    expect(res.body).toEqual({
      id: expect.any(String),
      created_at: expect.any(String),
      url: 'https://example.com',
      name: 'Spring',
      webhook_url: null,
      webhook_secret: null,
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
      click_ids: false,
      attribution_window_days: 90,
      currency: 'USD',
      reward_rules: [],
      review_signups_per_hour: 20,
    });
  });

  it('keeps an explicit http:// or https:// URL exactly as sent, trimmed', async () => {
    const a = await createCampaign({ url: '  http://example.com/landing?utm=x#top ' });
    expect(a.url).toBe('http://example.com/landing?utm=x#top');
    const b = await createCampaign({ url: 'https://Example.com/A%20B' });
    expect(b.url).toBe('https://Example.com/A%20B');
  });

  it('prefixes host:port forms with https://', async () => {
    expect((await createCampaign({ url: 'localhost:3000/x' })).url).toBe('https://localhost:3000/x');
  });

  it('trims the name', async () => {
    expect((await createCampaign({ name: '  Spring sale\t' })).name).toBe('Spring sale');
  });

  it('accepts a charset parameter on the content type', async () => {
    const res = await api('POST', '/api/v1/campaign', {
      rawBody: JSON.stringify({ url: 'example.com', name: 'charset' }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it('gives every campaign its own id', async () => {
    const ids = await Promise.all(Array.from({ length: 5 }, async () => (await createCampaign()).id));
    expect(new Set(ids).size).toBe(5);
  });

  it.each([
    ['javascript:alert(1)', 'javascript:'],
    ['ftp://example.com', 'ftp:'],
    ['', 'empty'],
    ['https://', 'no host'],
    [`https://example.com/${'a'.repeat(2048)}`, 'over 2048 characters'],
  ])('400 validation_failed for the url %j (%s)', async (url) => {
    expectValidation(await api('POST', '/api/v1/campaign', { body: { url, name: 'x' } }), 'url');
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['x'.repeat(257), '257 characters'],
  ])('400 validation_failed for the name %j (%s)', async (name) => {
    expectValidation(await api('POST', '/api/v1/campaign', { body: { url: 'example.com', name } }), 'name');
  });

  it('accepts a name of exactly 256 characters', async () => {
    expect((await createCampaign({ name: 'n'.repeat(256) })).name).toHaveLength(256);
  });

  it.each([
    [{ name: 'x' }, 'url'],
    [{ url: 'example.com' }, 'name'],
    [{ url: 'example.com', name: 'x', webhook_url: 'https://h.example' }, 'webhook_url'],
    [{ url: 'example.com', name: 'x', id: randomId() }, 'id'],
  ])('400 validation_failed naming the missing or unknown field: %j', async (body, field) => {
    expectValidation(await api('POST', '/api/v1/campaign', { body }), field);
  });
});

describe('GET /api/v1/campaign', () => {
  it('200 with the campaign as created', async () => {
    const created = await createCampaign({ url: 'example.com/get', name: 'Get me' });
    const res = await api('GET', path(created.id));
    expect(res.status).toBe(200);
    expectRequestId(res);
    expect(res.body).toEqual(created);
  });

  it('treats the UUID case-insensitively', async () => {
    const created = await createCampaign();
    expect(await getCampaign(created.id.toUpperCase())).toEqual(created);
  });

  it('needs no content type', async () => {
    const created = await createCampaign();
    const res = await rawRequest('GET', path(created.id), { headers: { 'api-key': TENANT_A.key } });
    expect(res.status).toBe(200);
  });

  it('404 campaign_not_found for an unknown id', async () => {
    expectError(await api('GET', path(randomId())), 404, 'campaign_not_found');
  });
});

describe('PATCH /api/v1/campaign', () => {
  it('renames (trimmed) and leaves every other field alone', async () => {
    const created = await createCampaign({ name: 'Before' });
    const res = await patch(created.id, { name: '  After ' });
    expect(res.status).toBe(200);
    expectRequestId(res);
    expectCampaign(res.body);
    expect(res.body).toEqual({ ...created, name: 'After' });
    expect(await getCampaign(created.id)).toEqual(res.body);
  });

  it('setting webhook_url generates a whsec_ secret of 32 random bytes, stable afterwards', async () => {
    const created = await createCampaign();
    const first = await patch(created.id, { webhook_url: 'https://hooks.example.com/in' });
    expect(first.status).toBe(200);
    expect(first.body.webhook_url).toBe('https://hooks.example.com/in');
    const secret = first.body.webhook_secret;
    expect(secret).toMatch(WEBHOOK_SECRET);
    expect(Buffer.from((secret as string).slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(await getCampaign(created.id)).toEqual(first.body);

    const moved = await patch(created.id, { webhook_url: 'https://hooks.example.com/other' });
    expect(moved.body).toMatchObject({
      webhook_url: 'https://hooks.example.com/other',
      webhook_secret: secret,
    });
    const renamed = await patch(created.id, { name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', webhook_secret: secret });
    const same = await patch(created.id, { webhook_url: 'https://hooks.example.com/other' });
    expect(same.body.webhook_secret).toBe(secret);
  });

  it('webhook_url null clears the URL and keeps the secret', async () => {
    const created = await createCampaign();
    const set = await patch(created.id, { webhook_url: 'https://hooks.example.com/in' });
    const secret = set.body.webhook_secret;
    expect(secret).toMatch(WEBHOOK_SECRET);

    const cleared = await patch(created.id, { webhook_url: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toEqual({ ...set.body, webhook_url: null, webhook_secret: secret });
    expect(await getCampaign(created.id)).toEqual(cleared.body);

    const again = await patch(created.id, { webhook_url: 'https://hooks.example.com/back' });
    expect(again.body).toMatchObject({
      webhook_url: 'https://hooks.example.com/back',
      webhook_secret: secret,
    });
  });

  it('webhook_url null on a campaign that never had one leaves the secret null', async () => {
    const created = await createCampaign();
    const res = await patch(created.id, { webhook_url: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(created);
  });

  it('name and webhook_url in one request', async () => {
    const created = await createCampaign();
    const res = await patch(created.id, { name: 'Both', webhook_url: 'https://hooks.example.com/b' });
    expect(res.body).toMatchObject({ name: 'Both', webhook_url: 'https://hooks.example.com/b' });
    expect(res.body.webhook_secret).toMatch(WEBHOOK_SECRET);
  });

  it('the local stack accepts http and private webhook addresses', async () => {
    const created = await createCampaign();
    const res = await patch(created.id, { webhook_url: 'http://127.0.0.1:9999/hook' });
    expect(res.status).toBe(200);
    expect(res.body.webhook_url).toBe('http://127.0.0.1:9999/hook');
    expect(res.body.webhook_secret).toMatch(WEBHOOK_SECRET);
  });

  it.each(['ftp://hooks.example.com', 'hooks.example.com', '', 'javascript:alert(1)'])(
    '400 validation_failed for the webhook_url %j, nothing changed',
    async (webhook_url) => {
      const created = await createCampaign();
      expectValidation(await patch(created.id, { webhook_url }), 'webhook_url');
      expect(await getCampaign(created.id)).toEqual(created);
    },
  );

  it.each([
    ['a different url', { url: 'https://other.example.com' }],
    ['the same url', { url: 'https://example.com' }],
    ['url null', { url: null }],
    ['url with a valid name', { url: 'https://other.example.com', name: 'Sneaky' }],
  ])('400 url_immutable for %s, nothing changed', async (_label, body) => {
    const created = await createCampaign();
    expectError(await patch(created.id, body), 400, 'url_immutable');
    expect(await getCampaign(created.id)).toEqual(created);
  });

  it('an empty body is 200 with the campaign unchanged', async () => {
    const created = await createCampaign();
    const none = await api('PATCH', path(created.id));
    expect(none.status).toBe(200);
    expect(none.body).toEqual(created);
    const empty = await patch(created.id, {});
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual(created);
  });

  it('400 validation_failed for a bad name or an unknown field, nothing changed', async () => {
    const created = await createCampaign();
    expectValidation(await patch(created.id, { name: '  ' }), 'name');
    expectValidation(await patch(created.id, { name: 'ok', webhook: 'https://x.example' }), 'webhook');
    expectValidation(await patch(created.id, { name: 42 }), 'name');
    expect(await getCampaign(created.id)).toEqual(created);
  });

  it('404 campaign_not_found for an unknown id, with or without changes', async () => {
    expectError(await patch(randomId(), { name: 'x' }), 404, 'campaign_not_found');
    expectError(await patch(randomId(), { webhook_url: 'https://h.example.com' }), 404, 'campaign_not_found');
    expectError(await api('PATCH', path(randomId())), 404, 'campaign_not_found');
  });
});

describe('DELETE /api/v1/campaign', () => {
  it('204 with an empty body, then the campaign is gone everywhere', async () => {
    const created = await createCampaign();
    const res = await api('DELETE', path(created.id));
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectRequestId(res);

    expectError(await api('GET', path(created.id)), 404, 'campaign_not_found');
    expectError(await patch(created.id, { name: 'zombie' }), 404, 'campaign_not_found');
    expectError(await api('DELETE', path(created.id)), 404, 'campaign_not_found');
  });

  it('404 campaign_not_found for an unknown id', async () => {
    expectError(await api('DELETE', path(randomId())), 404, 'campaign_not_found');
  });

  it('deleting one campaign leaves the others', async () => {
    const [a, b] = await Promise.all([createCampaign(), createCampaign()]);
    expect((await api('DELETE', path(a.id))).status).toBe(204);
    expect(await getCampaign(b.id)).toEqual(b);
  });
});
