/**
 * Endpoints 10 and 11: a signup through a link (by code or by link id) and fetching it, with the
 * link's `total_referrals` raised in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { ReferralLink, ReferredUser } from '../../lib/domain/link-schemas.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { errorOf, expectError, expectShape } from '../support/assertions.ts';
import {
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
  type ReferredUserBody,
} from '../support/records.ts';
import { campaignItems, linkItem } from '../support/table.ts';

const getReferredUser = (campaignId: string, referredUserId: string, key?: string) =>
  api<ReferredUserBody>(
    'GET',
    `/api/v1/referred_user?campaign_id=${campaignId}&referred_user_id=${encodeURIComponent(referredUserId)}`,
    { key },
  );

let campaignId: string;

beforeAll(async () => {
  campaignId = (await createCampaign({ url: 'https://example.com/p?x=1', name: 'referred users' })).id;
});

describe('POST /api/v1/referred_user (endpoint 10)', () => {
  it('by referral_code: 201, the full link with total_referrals +1, and a later GET agrees', async () => {
    const link = await createLink(campaignId, { referrer_id: 'ref-code' });
    const res = await api<ReferredUserBody>('POST', '/api/v1/referred_user', {
      body: { referral_code: link.referral_code, referred_user_id: 'signup-by-code' },
    });
    expect(res.status, res.text).toBe(201);
    expectShape(ReferredUser, res.body);
    expect(res.body.referred_user_id).toBe('signup-by-code');
    expect(Number.isSafeInteger(res.body.id) && res.body.id > 0).toBe(true);
    expect(res.body.referral_link).toEqual({ ...link, total_referrals: 1 });
    expect(res.body.referral_link.referral_link).toBe(`https://example.com/p?x=1&rfa=${link.referral_code}`);
    expect((await fetchLink(link.id)).total_referrals).toBe(1);
    // The stored record exists in the campaign partition and the link's stored counter agrees.
    const stored = await campaignItems(TENANT_A.tenant, campaignId, 'RU#signup-by-code');
    expect(stored).toHaveLength(1);
    expect((await linkItem(link.referral_code))?.total_referrals).toBe(1);
  });

  it('by referral_link_id: 201 and total_referrals +1 on every signup', async () => {
    const link = await createLink(campaignId);
    for (let n = 1; n <= 3; n++) {
      const res = await api<ReferredUserBody>('POST', '/api/v1/referred_user', {
        body: { referral_link_id: link.id, referred_user_id: `signup-by-id-${n}` },
      });
      expect(res.status, res.text).toBe(201);
      expectShape(ReferredUser, res.body);
      expect(res.body.referral_link.id).toBe(link.id);
      expect(res.body.referral_link.total_referrals).toBe(n);
    }
    const after = await fetchLink(link.id);
    expect(after.total_referrals).toBe(3);
    expect(after.total_clicks).toBe(0);
  });

  it('referred user ids are unique positive safe integers', async () => {
    const link = await createLink(campaignId);
    const users = await Promise.all(
      Array.from({ length: 10 }, (_, i) => createReferredUser(link.referral_code, `unique-id-${i}`)),
    );
    const ids = users.map((u) => u.id);
    expect(ids.every((id) => Number.isSafeInteger(id) && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(10);
  });

  it.each([
    [
      'both referral_code and referral_link_id',
      (l: LinkBody) => ({ referral_code: l.referral_code, referral_link_id: l.id }),
    ],
    ['neither referral_code nor referral_link_id', () => ({})],
  ])('%s: 400 validation_failed, nothing counted', async (_label, target) => {
    const link = await createLink(campaignId);
    const res = await api('POST', '/api/v1/referred_user', {
      body: { ...target(link), referred_user_id: 'exactly-one' },
    });
    expectError(res, 400, 'validation_failed');
    expect((await fetchLink(link.id)).total_referrals).toBe(0);
    expect(await campaignItems(TENANT_A.tenant, campaignId, 'RU#exactly-one')).toHaveLength(0);
  });

  it.each([
    ['a missing referred_user_id', {}],
    ['an empty referred_user_id', { referred_user_id: '' }],
    ['a 257-character referred_user_id', { referred_user_id: 'x'.repeat(257) }],
    ['a control character', { referred_user_id: 'a\u0000b' }],
    ['a number referred_user_id', { referred_user_id: 7 }],
    ['a string referral_link_id', { referral_link_id: '1' }],
    ['a zero referral_link_id', { referral_link_id: 0 }],
    ['an unknown field', { referred_user: 'typo' }],
  ])('%s: 400 validation_failed', async (_label, fields) => {
    const link = await createLink(campaignId);
    const body =
      'referral_link_id' in fields
        ? { referred_user_id: 'valid-user', ...fields }
        : { referral_code: link.referral_code, ...fields };
    expectError(await api('POST', '/api/v1/referred_user', { body }), 400, 'validation_failed');
    expect((await fetchLink(link.id)).total_referrals).toBe(0);
  });

  it('accepts a 256-character referred_user_id with spaces and unicode', async () => {
    const link = await createLink(campaignId);
    const id = `Zoë Ä ${'y'.repeat(250)}`.slice(0, 256);
    const user = await createReferredUser(link.referral_code, id);
    expect(user.referred_user_id).toBe(id);
    expect((await getReferredUser(campaignId, id)).body.referred_user_id).toBe(id);
  });

  it('a second create of the same referred_user_id in the campaign: 409 referred_user_exists, through any link', async () => {
    const first = await createLink(campaignId);
    const second = await createLink(campaignId);
    const created = await createReferredUser(first.referral_code, 'dup-user');
    for (const body of [
      { referral_code: first.referral_code, referred_user_id: 'dup-user' },
      { referral_link_id: first.id, referred_user_id: 'dup-user' },
      { referral_code: second.referral_code, referred_user_id: 'dup-user' },
    ]) {
      expectError(await api('POST', '/api/v1/referred_user', { body }), 409, 'referred_user_exists');
    }
    expect((await fetchLink(first.id)).total_referrals).toBe(1);
    expect((await fetchLink(second.id)).total_referrals).toBe(0);
    // The record still points at the first link.
    const fetched = await getReferredUser(campaignId, 'dup-user');
    expect(fetched.body.id).toBe(created.id);
    expect(fetched.body.referral_link.id).toBe(first.id);
  });

  it('the same referred_user_id is allowed in another campaign (and for another tenant)', async () => {
    const other = await createCampaign({ name: 'other campaign' });
    const linkA1 = await createLink(campaignId);
    const linkA2 = await createLink(other.id);
    const b = await createCampaign({ name: 'tenant b' }, TENANT_B.key);
    const linkB = await createLink(b.id, {}, TENANT_B.key);
    const u1 = await createReferredUser(linkA1.referral_code, 'shared-user');
    const u2 = await createReferredUser(linkA2.referral_code, 'shared-user');
    const u3 = await createReferredUser(linkB.referral_code, 'shared-user', TENANT_B.key);
    expect(new Set([u1.id, u2.id, u3.id]).size).toBe(3);
    expect((await getReferredUser(campaignId, 'shared-user')).body.referral_link.id).toBe(linkA1.id);
    expect((await getReferredUser(other.id, 'shared-user')).body.referral_link.id).toBe(linkA2.id);
    expect((await getReferredUser(b.id, 'shared-user', TENANT_B.key)).body.referral_link.id).toBe(linkB.id);
  });

  it("the link's referrer signing up through it: 422 self_referral, nothing counted", async () => {
    const link = await createLink(campaignId, { referrer_id: 'self-ref' });
    for (const target of [{ referral_code: link.referral_code }, { referral_link_id: link.id }]) {
      const res = await api('POST', '/api/v1/referred_user', {
        body: { ...target, referred_user_id: 'self-ref' },
      });
      expectError(res, 422, 'self_referral');
    }
    expect((await fetchLink(link.id)).total_referrals).toBe(0);
    expect(await campaignItems(TENANT_A.tenant, campaignId, 'RU#self-ref')).toHaveLength(0);
    // A referrer is matched exactly; another case is another user.
    const other = await createReferredUser(link.referral_code, 'Self-Ref');
    expect(other.referral_link.total_referrals).toBe(1);
  });

  it('a link without a referrer accepts any referred_user_id', async () => {
    const link = await createLink(campaignId, { referrer_id: null });
    const user = await createReferredUser(link.referral_code, 'null');
    expect(user.referral_link.referrer_id).toBeNull();
  });

  it('unknown link code or id: 404 referral_link_not_found', async () => {
    expectError(
      await api('POST', '/api/v1/referred_user', {
        body: { referral_code: 'NoSuchCode42', referred_user_id: 'u' },
      }),
      404,
      'referral_link_not_found',
    );
    expectError(
      await api('POST', '/api/v1/referred_user', {
        body: { referral_link_id: Number.MAX_SAFE_INTEGER, referred_user_id: 'u' },
      }),
      404,
      'referral_link_not_found',
    );
  });

  it("another tenant's link: 404 referral_link_not_found (self-referral included), nothing counted", async () => {
    const link = await createLink(campaignId, { referrer_id: 'a-referrer' });
    for (const body of [
      { referral_code: link.referral_code, referred_user_id: 'b-user' },
      { referral_link_id: link.id, referred_user_id: 'b-user' },
      { referral_code: link.referral_code, referred_user_id: 'a-referrer' },
    ]) {
      expectError(
        await api('POST', '/api/v1/referred_user', { body, key: TENANT_B.key }),
        404,
        'referral_link_not_found',
      );
    }
    expect((await fetchLink(link.id)).total_referrals).toBe(0);
    expect(await campaignItems(TENANT_A.tenant, campaignId, 'RU#b-user')).toHaveLength(0);
  });
});

describe('GET /api/v1/referred_user (endpoint 11)', () => {
  let link: LinkBody;
  let created: ReferredUserBody;

  beforeAll(async () => {
    link = await createLink(campaignId, { referrer_id: 'getter' });
    created = await createReferredUser(link.referral_code, 'user+1@example.com');
  });

  it('200 with the full nested link and its current counters', async () => {
    const res = await getReferredUser(campaignId, 'user+1@example.com');
    expect(res.status, res.text).toBe(200);
    expectShape(ReferredUser, res.body);
    expectShape(ReferralLink, res.body.referral_link);
    expect(res.body).toEqual(created);

    // Later activity on the link shows in the nested link.
    await createReferredUser(link.referral_code, 'another-user');
    const action = await api('POST', '/api/v1/action/referral_link', {
      body: { referral_code: link.referral_code, action_type: 'click' },
    });
    expect(action.status).toBe(201);
    const later = await getReferredUser(campaignId, 'user+1@example.com');
    expect(later.body.id).toBe(created.id);
    expect(later.body.created_at).toBe(created.created_at);
    expect(later.body.referral_link).toEqual({ ...link, total_referrals: 2, total_clicks: 1 });
  });

  it('an upper-case campaign id names the same campaign', async () => {
    const res = await getReferredUser(campaignId.toUpperCase(), 'user+1@example.com');
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(created.id);
  });

  it.each([
    ['no parameters', ''],
    ['no referred_user_id', `?campaign_id=${randomUUID()}`],
    ['no campaign_id', '?referred_user_id=u'],
    ['empty values', '?campaign_id=&referred_user_id='],
  ])('%s: 400 missing_parameter', async (_label, query) => {
    expectError(await api('GET', `/api/v1/referred_user${query}`), 400, 'missing_parameter');
  });

  it('a malformed campaign_id: 400 validation_failed', async () => {
    expectError(
      await api('GET', '/api/v1/referred_user?campaign_id=nope&referred_user_id=u'),
      400,
      'validation_failed',
    );
  });

  it('an unknown referred user: 404 referred_user_not_found', async () => {
    expectError(await getReferredUser(campaignId, 'nobody-here'), 404, 'referred_user_not_found');
    // The same id exists in this campaign only: another campaign of the tenant does not have it.
    const other = await createCampaign({ name: 'empty' });
    expectError(await getReferredUser(other.id, 'user+1@example.com'), 404, 'referred_user_not_found');
  });

  it('an unknown campaign: 404', async () => {
    const res = await getReferredUser(randomUUID(), 'user+1@example.com');
    expect(res.status).toBe(404);
    expect(['campaign_not_found', 'referred_user_not_found']).toContain(errorOf(res).code);
  });

  it('another tenant: 404, exactly as for an unknown campaign', async () => {
    const res = await getReferredUser(campaignId, 'user+1@example.com', TENANT_B.key);
    const unknown = await getReferredUser(randomUUID(), 'user+1@example.com', TENANT_B.key);
    expect(res.status).toBe(404);
    expect(errorOf(res).code).toBe(errorOf(unknown).code);
  });
});
