/**
 * Endpoints 1 and 2: creating referral links (generated and custom codes) and fetching them by id
 * and/or code, through the local gateway against DynamoDB Local.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReferralLink } from '../../lib/domain/link-schemas.ts';
import { api, TENANT_B } from '../support/api.ts';
import { expectError, expectShape } from '../support/assertions.ts';
import { createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { linkItem } from '../support/table.ts';

const GENERATED = /^[A-HJ-NP-Z2-9]{8}$/;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** A custom code nobody else in the run uses: `prefix` + random lower-case letters. */
function uniqueCode(prefix: string, length = 12): string {
  let code = prefix;
  while (code.length < length) code += LETTERS[randomInt(LETTERS.length)];
  return code;
}

let campaignId: string;

beforeAll(async () => {
  campaignId = (await createCampaign({ url: 'https://example.com', name: 'links' })).id;
});

describe('POST /api/v1/referral_link (endpoint 1)', () => {
  it('creates a link with a generated code, zero counters and the contract shape', async () => {
    const res = await api<LinkBody>('POST', '/api/v1/referral_link', {
      body: { campaign_id: campaignId, referrer_id: 'alice' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    expectShape(ReferralLink, res.body);
    expect(res.body.referral_code).toMatch(GENERATED);
    expect(res.body).toMatchObject({
      campaign_id: campaignId,
      referrer_id: 'alice',
      referral_link: `https://example.com?rfa=${res.body.referral_code}`,
      total_clicks: 0,
      total_referrals: 0,
    });
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}$/);
  });

  it('generates codes of the contract alphabet, all different, with unique positive safe ids', async () => {
    const links = await Promise.all(Array.from({ length: 30 }, () => createLink(campaignId)));
    for (const link of links) {
      expectShape(ReferralLink, link);
      expect(link.referral_code).toMatch(GENERATED);
      expect(Number.isSafeInteger(link.id)).toBe(true);
      expect(link.id).toBeGreaterThan(0);
    }
    expect(new Set(links.map((l) => l.referral_code)).size).toBe(links.length);
    expect(new Set(links.map((l) => l.id)).size).toBe(links.length);
  });

  it('ids are unique across campaigns and tenants', async () => {
    const other = await createCampaign({ name: 'ids b' }, TENANT_B.key);
    const [a1, b1, a2, b2] = await Promise.all([
      createLink(campaignId),
      createLink(other.id, {}, TENANT_B.key),
      createLink(campaignId),
      createLink(other.id, {}, TENANT_B.key),
    ]);
    expect(new Set([a1, b1, a2, b2].map((l) => l.id)).size).toBe(4);
  });

  it.each([
    ['omitted', {}],
    ['null', { referrer_id: null }],
    ['""', { referrer_id: '' }],
  ])('referrer_id %s is stored and returned as null', async (_label, fields) => {
    const link = await createLink(campaignId, fields);
    expect(link.referrer_id).toBeNull();
    const again = await api<LinkBody>('GET', `/api/v1/referral_link?id=${link.id}`);
    expect(again.status).toBe(200);
    expect(again.body.referrer_id).toBeNull();
  });

  it('keeps a referrer_id exactly as given (spaces, @, unicode)', async () => {
    for (const referrer of ['user@example.com', 'Jane Doe', 'ユーザー-1', 'x'.repeat(256)]) {
      const link = await createLink(campaignId, { referrer_id: referrer });
      expect(link.referrer_id).toBe(referrer);
    }
  });

  it.each([
    ['https://example.com', (c: string) => `https://example.com?rfa=${c}`],
    ['https://example.com/p?x=1', (c: string) => `https://example.com/p?x=1&rfa=${c}`],
    ['https://example.com/#top', (c: string) => `https://example.com/?rfa=${c}#top`],
  ])('referral_link of campaign url %s follows the contract', async (url, expected) => {
    const campaign = await createCampaign({ url, name: 'url shape' });
    expect(campaign.url).toBe(url);
    const generated = await createLink(campaign.id);
    expect(generated.referral_link).toBe(expected(generated.referral_code));
    const custom = await createLink(campaign.id, { referral_code: uniqueCode('Url_') });
    expect(custom.referral_link).toBe(expected(custom.referral_code));
    // The fetched link carries the same URL as the created one.
    const fetched = await api<LinkBody>('GET', `/api/v1/referral_link?id=${generated.id}`);
    expect(fetched.body.referral_link).toBe(expected(generated.referral_code));
  });

  it('accepts custom codes of 4 and 32 characters of A-Z a-z 0-9 _ -', async () => {
    const four = `${uniqueCode('', 3)}_`.slice(0, 4);
    const codes = [four, uniqueCode('Ab9_-', 32), uniqueCode('-_'), uniqueCode('Z0')];
    for (const code of codes) {
      const res = await api<LinkBody>('POST', '/api/v1/referral_link', {
        body: { campaign_id: campaignId, referral_code: code },
      });
      expect(res.status, `${code}: ${res.text}`).toBe(201);
      expectShape(ReferralLink, res.body);
      expect(res.body.referral_code).toBe(code);
      expect(res.body.referral_link).toBe(`https://example.com?rfa=${code}`);
    }
  });

  it.each([
    ['3 characters', 'abc'],
    ['33 characters', 'a'.repeat(33)],
    ['a space', 'ab cd'],
    ['a dot', 'ab.cd'],
    ['a slash', 'ab/cd'],
    ['an exclamation mark', 'abc!'],
    ['a non-ASCII letter', 'äbcd'],
    ['the empty string', ''],
    ['a newline', 'abcd\n'],
  ])('rejects a custom code with %s: 400 validation_failed', async (_label, code) => {
    const res = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: campaignId, referral_code: code },
    });
    expectError(res, 400, 'validation_failed');
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'referral_code' })]),
    );
  });

  it.each([
    ['a number code', { referral_code: 12345678 }],
    ['a null code', { referral_code: null }],
    ['a number referrer_id', { referrer_id: 42 }],
    ['a too long referrer_id', { referrer_id: 'x'.repeat(257) }],
    ['a control character in referrer_id', { referrer_id: 'a\u0001b' }],
    ['an unknown field', { referal_code: 'typo1234' }],
  ])('rejects %s: 400 validation_failed', async (_label, fields) => {
    const res = await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaignId, ...fields } });
    expectError(res, 400, 'validation_failed');
  });

  it('rejects a missing or malformed campaign_id: 400 validation_failed', async () => {
    expectError(await api('POST', '/api/v1/referral_link', { body: {} }), 400, 'validation_failed');
    expectError(
      await api('POST', '/api/v1/referral_link', { body: { campaign_id: 'not-a-uuid' } }),
      400,
      'validation_failed',
    );
  });

  it('a taken custom code is 409 referral_code_taken and the first link is untouched', async () => {
    const code = uniqueCode('taken');
    const first = await createLink(campaignId, { referral_code: code, referrer_id: 'first' });
    const res = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: campaignId, referral_code: code, referrer_id: 'second' },
    });
    expectError(res, 409, 'referral_code_taken');
    const stored = await api<LinkBody>('GET', `/api/v1/referral_link?referral_code=${code}`);
    expect(stored.body).toEqual(first);
  });

  it('a code taken in another campaign or by another tenant is 409 too (unique across the deployment)', async () => {
    const code = uniqueCode('global');
    await createLink(campaignId, { referral_code: code });
    const sameTenant = await createCampaign({ name: 'second campaign' });
    expectError(
      await api('POST', '/api/v1/referral_link', {
        body: { campaign_id: sameTenant.id, referral_code: code },
      }),
      409,
      'referral_code_taken',
    );
    const tenantB = await createCampaign({ name: 'tenant b' }, TENANT_B.key);
    expectError(
      await api('POST', '/api/v1/referral_link', {
        body: { campaign_id: tenantB.id, referral_code: code },
        key: TENANT_B.key,
      }),
      409,
      'referral_code_taken',
    );
    // The stored link still belongs to tenant A's campaign.
    const item = await linkItem(code);
    expect(item?.campaign_id).toBe(campaignId);
  });

  it('codes are case-sensitive: abcd and ABCD are two links', async () => {
    const lower = uniqueCode('cs');
    const upper = lower.toUpperCase();
    const a = await createLink(campaignId, { referral_code: lower });
    const b = await createLink(campaignId, { referral_code: upper });
    expect(a.id).not.toBe(b.id);
    const ra = await api<LinkBody>('GET', `/api/v1/referral_link?referral_code=${lower}`);
    const rb = await api<LinkBody>('GET', `/api/v1/referral_link?referral_code=${upper}`);
    expect(ra.body.id).toBe(a.id);
    expect(rb.body.id).toBe(b.id);
  });

  it('unknown campaign: 404 campaign_not_found, and nothing is written', async () => {
    const code = uniqueCode('nocamp');
    const res = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: randomUUID(), referral_code: code },
    });
    expectError(res, 404, 'campaign_not_found');
    expect(await linkItem(code)).toBeUndefined();
  });

  it("another tenant's campaign: 404 campaign_not_found, and nothing is written", async () => {
    const code = uniqueCode('foreign');
    const res = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: campaignId, referral_code: code },
      key: TENANT_B.key,
    });
    expectError(res, 404, 'campaign_not_found');
    expect(await linkItem(code)).toBeUndefined();
  });

  it('a campaign id in upper case names the same campaign', async () => {
    const link = await createLink(campaignId.toUpperCase());
    expect(link.campaign_id).toBe(campaignId);
    const list = await api<LinkBody[]>('GET', `/api/v1/campaign_referral_links/${campaignId}?limit=1000`);
    expect(list.body.map((l) => l.id)).toContain(link.id);
  });

  it('without an api-key: 401', async () => {
    expectError(
      await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaignId }, key: null }),
      401,
      'unauthorized',
    );
  });
});

describe('GET /api/v1/referral_link (endpoint 2)', () => {
  let link: LinkBody;
  let other: LinkBody;

  beforeAll(async () => {
    link = await createLink(campaignId, { referrer_id: 'getter' });
    other = await createLink(campaignId, { referral_code: uniqueCode('other') });
  });

  it('by id: 200 and the same link', async () => {
    const res = await api<LinkBody>('GET', `/api/v1/referral_link?id=${link.id}`);
    expect(res.status).toBe(200);
    expectShape(ReferralLink, res.body);
    expect(res.body).toEqual(link);
  });

  it('by code: 200 and the same link', async () => {
    const res = await api<LinkBody>('GET', `/api/v1/referral_link?referral_code=${link.referral_code}`);
    expect(res.status).toBe(200);
    expectShape(ReferralLink, res.body);
    expect(res.body).toEqual(link);
    const custom = await api<LinkBody>('GET', `/api/v1/referral_link?referral_code=${other.referral_code}`);
    expect(custom.body).toEqual(other);
  });

  it('both naming the same link: 200', async () => {
    const res = await api<LinkBody>(
      'GET',
      `/api/v1/referral_link?id=${link.id}&referral_code=${link.referral_code}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual(link);
  });

  it('both naming different links: 404 referral_link_not_found', async () => {
    expectError(
      await api('GET', `/api/v1/referral_link?id=${link.id}&referral_code=${other.referral_code}`),
      404,
      'referral_link_not_found',
    );
    expectError(
      await api('GET', `/api/v1/referral_link?id=${other.id}&referral_code=${link.referral_code}`),
      404,
      'referral_link_not_found',
    );
  });

  it('both given, one of them unknown: 404', async () => {
    expectError(
      await api('GET', `/api/v1/referral_link?id=${link.id}&referral_code=${uniqueCode('nope')}`),
      404,
      'referral_link_not_found',
    );
    expectError(
      await api('GET', `/api/v1/referral_link?id=9007199254740991&referral_code=${link.referral_code}`),
      404,
      'referral_link_not_found',
    );
  });

  it.each([
    ['no parameter', ''],
    ['empty parameters', '?id=&referral_code='],
    ['only unrelated parameters', '?code=ABCDEFGH'],
  ])('neither id nor code (%s): 400 missing_parameter', async (_label, query) => {
    expectError(await api('GET', `/api/v1/referral_link${query}`), 400, 'missing_parameter');
  });

  it.each(['abc', '0', '-1', '1.5', '1e3', '0x10', '12345678901234567890'])(
    'malformed id %j: 400 validation_failed',
    async (id) => {
      const res = await api('GET', `/api/v1/referral_link?id=${encodeURIComponent(id)}`);
      expectError(res, 400, 'validation_failed');
    },
  );

  it('malformed code: 400 validation_failed', async () => {
    expectError(await api('GET', '/api/v1/referral_link?referral_code=ab'), 400, 'validation_failed');
    expectError(
      await api('GET', `/api/v1/referral_link?referral_code=${encodeURIComponent('ab cd!')}`),
      400,
      'validation_failed',
    );
  });

  it('unknown id or code: 404 referral_link_not_found', async () => {
    expectError(
      await api('GET', '/api/v1/referral_link?id=9007199254740991'),
      404,
      'referral_link_not_found',
    );
    expectError(
      await api('GET', `/api/v1/referral_link?referral_code=${uniqueCode('unknown')}`),
      404,
      'referral_link_not_found',
    );
  });

  it("another tenant's link by id, code or both: 404 referral_link_not_found, as for an unknown one", async () => {
    for (const query of [
      `id=${link.id}`,
      `referral_code=${link.referral_code}`,
      `id=${link.id}&referral_code=${link.referral_code}`,
    ]) {
      const res = await api('GET', `/api/v1/referral_link?${query}`, { key: TENANT_B.key });
      expectError(res, 404, 'referral_link_not_found');
    }
  });

  it('a code in another case is another (unknown) code', async () => {
    const code = uniqueCode('case');
    await createLink(campaignId, { referral_code: code });
    expectError(
      await api('GET', `/api/v1/referral_link?referral_code=${code.toUpperCase()}`),
      404,
      'referral_link_not_found',
    );
  });
});
