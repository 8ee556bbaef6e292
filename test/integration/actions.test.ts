/**
 * Endpoints 5 and 12: actions of a referred user and actions on a link alone, each raising the
 * link's `total_clicks` in the same write that records the action. Endpoint 5's action item is
 * written from the table stream a moment later, so its checks wait for the items to settle.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { Action, ReferredUser } from '../../lib/domain/link-schemas.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { errorOf, expectError, expectShape } from '../support/assertions.ts';
import {
  type ActionBody,
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
  type ReferredUserBody,
} from '../support/records.ts';
import { eventDataOf, settledActionItems } from '../support/table.ts';

const userAction = (body: Record<string, unknown>, key?: string) =>
  api<ActionBody>('POST', '/api/v1/action/referred_user', { body, key });
const linkAction = (body: Record<string, unknown>, key?: string) =>
  api<ActionBody>('POST', '/api/v1/action/referral_link', { body, key });

/** Action items stored in the campaign partition for one link, once every counted one is written. */
async function storedActions(campaignId: string, code: string) {
  const items = await settledActionItems(TENANT_A.tenant, campaignId, [code]);
  return items.filter((i) => i.link_code === code);
}

let campaignId: string;

beforeAll(async () => {
  campaignId = (await createCampaign({ url: 'https://example.com/#top', name: 'actions' })).id;
});

describe('POST /api/v1/action/referred_user (endpoint 5)', () => {
  let link: LinkBody;
  let user: ReferredUserBody;

  beforeAll(async () => {
    link = await createLink(campaignId, { referrer_id: 'action-referrer' });
    user = await createReferredUser(link.referral_code, 'buyer-1');
  });

  it('201: the action with the FULL referred user object, metadata {} when omitted, total_clicks +1', async () => {
    const before = await fetchLink(link.id);
    const res = await userAction({
      campaign_id: campaignId,
      action_type: 'purchase',
      referred_user_id: 'buyer-1',
    });
    expect(res.status, res.text).toBe(201);
    expectShape(Action, res.body);
    expect(res.body.action_type).toBe('purchase');
    expect(res.body.metadata).toEqual({});
    expect(Number.isSafeInteger(res.body.id) && res.body.id > 0).toBe(true);
    // referred_user is the whole object, never a bare id string.
    expect(typeof res.body.referred_user).toBe('object');
    expectShape(ReferredUser, res.body.referred_user);
    expect(res.body.referred_user).toMatchObject({
      id: user.id,
      created_at: user.created_at,
      referred_user_id: 'buyer-1',
    });
    expect(res.body.referred_user?.referral_link.id).toBe(link.id);
    // The link object includes this action's increment.
    expect(res.body.referral_link).toEqual({ ...before, total_clicks: before.total_clicks + 1 });
    expect(res.body.referral_link.referral_link).toBe(`https://example.com/?rfa=${link.referral_code}#top`);
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks + 1);
  });

  it('keeps the metadata object as given (nested values, unicode)', async () => {
    const metadata = {
      amount: 12.5,
      currency: 'EUR',
      items: [1, 'two', { three: true }],
      note: 'Zoë ✓',
      nil: null,
    };
    const res = await userAction({
      campaign_id: campaignId,
      action_type: 'purchase',
      referred_user_id: 'buyer-1',
      metadata,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.metadata).toEqual(metadata);
    const stored = (await storedActions(campaignId, link.referral_code)).find(
      (i) => eventDataOf<ActionBody>(i).id === res.body.id,
    );
    expect(stored).toBeDefined();
    expect(eventDataOf<ActionBody>(stored).metadata).toEqual(metadata);
  });

  it('metadata of exactly 8 KiB serialised is accepted; one byte more is 400', async () => {
    // '{"a":""}' is 8 bytes.
    const ok = await userAction({
      campaign_id: campaignId,
      action_type: 'big',
      referred_user_id: 'buyer-1',
      metadata: { a: 'x'.repeat(8192 - 8) },
    });
    expect(ok.status, ok.text).toBe(201);
    const before = await fetchLink(link.id);
    const tooBig = await userAction({
      campaign_id: campaignId,
      action_type: 'big',
      referred_user_id: 'buyer-1',
      metadata: { a: 'x'.repeat(8192 - 7) },
    });
    expectError(tooBig, 400, 'validation_failed');
    expect(errorOf(tooBig).details).toEqual([expect.objectContaining({ field: 'metadata' })]);
    // Bytes, not characters: 5,000 two-byte characters are over 8 KiB.
    expectError(
      await userAction({
        campaign_id: campaignId,
        action_type: 'big',
        referred_user_id: 'buyer-1',
        metadata: { a: 'é'.repeat(5000) },
      }),
      400,
      'validation_failed',
    );
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks);
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'hello'],
    ['null', null],
    ['a number', 3],
    ['a boolean', true],
  ])('metadata that is %s: 400 validation_failed, nothing counted', async (_label, metadata) => {
    const before = await fetchLink(link.id);
    const res = await userAction({
      campaign_id: campaignId,
      action_type: 'x',
      referred_user_id: 'buyer-1',
      metadata,
    });
    expectError(res, 400, 'validation_failed');
    expect(errorOf(res).details).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'metadata' })]),
    );
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks);
  });

  it.each([
    ['an empty action_type', { action_type: '' }],
    ['a 65-character action_type', { action_type: 'a'.repeat(65) }],
    ['no action_type', { action_type: undefined }],
    ['no referred_user_id', { referred_user_id: undefined }],
    ['a malformed campaign_id', { campaign_id: 'nope' }],
    ['an unknown field', { metdata: {} }],
  ])('%s: 400 validation_failed', async (_label, fields) => {
    const res = await userAction({
      campaign_id: campaignId,
      action_type: 'x',
      referred_user_id: 'buyer-1',
      ...fields,
    });
    expectError(res, 400, 'validation_failed');
  });

  it('a 64-character action_type is accepted', async () => {
    const res = await userAction({
      campaign_id: campaignId,
      action_type: 'a'.repeat(64),
      referred_user_id: 'buyer-1',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.action_type).toBe('a'.repeat(64));
  });

  it('an unknown referred user: 404 referred_user_not_found, nothing written', async () => {
    const before = (await storedActions(campaignId, link.referral_code)).length;
    expectError(
      await userAction({ campaign_id: campaignId, action_type: 'x', referred_user_id: 'ghost' }),
      404,
      'referred_user_not_found',
    );
    // The referrer of a link is not a referred user either.
    expectError(
      await userAction({ campaign_id: campaignId, action_type: 'x', referred_user_id: 'action-referrer' }),
      404,
      'referred_user_not_found',
    );
    expect(await storedActions(campaignId, link.referral_code)).toHaveLength(before);
  });

  it('a referred user of another campaign: 404 referred_user_not_found', async () => {
    const other = await createCampaign({ name: 'other' });
    expectError(
      await userAction({ campaign_id: other.id, action_type: 'x', referred_user_id: 'buyer-1' }),
      404,
      'referred_user_not_found',
    );
  });

  it('an unknown campaign: 404 campaign_not_found', async () => {
    expectError(
      await userAction({ campaign_id: randomUUID(), action_type: 'x', referred_user_id: 'buyer-1' }),
      404,
      'campaign_not_found',
    );
  });

  it('another tenant: 404 campaign_not_found, nothing counted', async () => {
    const before = await fetchLink(link.id);
    expectError(
      await userAction(
        { campaign_id: campaignId, action_type: 'x', referred_user_id: 'buyer-1' },
        TENANT_B.key,
      ),
      404,
      'campaign_not_found',
    );
    expect(await fetchLink(link.id)).toEqual(before);
  });

  it('each action counts once: n actions raise total_clicks by n and store n action items', async () => {
    const l = await createLink(campaignId);
    await createReferredUser(l.referral_code, 'counter-user');
    const responses = [];
    for (let i = 0; i < 5; i++) {
      responses.push(
        await userAction({
          campaign_id: campaignId,
          action_type: `step-${i}`,
          referred_user_id: 'counter-user',
        }),
      );
    }
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(responses.map((r) => r.body.referral_link.total_clicks)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(responses.map((r) => r.body.id)).size).toBe(5);
    expect((await fetchLink(l.id)).total_clicks).toBe(5);
    expect(await storedActions(campaignId, l.referral_code)).toHaveLength(5);
  });
});

describe('POST /api/v1/action/referral_link (endpoint 12)', () => {
  let link: LinkBody;

  beforeAll(async () => {
    link = await createLink(campaignId, { referrer_id: 'link-action' });
  });

  it('by code: 201 with referred_user null, metadata {} and total_clicks +1', async () => {
    const before = await fetchLink(link.id);
    const res = await linkAction({ referral_code: link.referral_code, action_type: 'share' });
    expect(res.status, res.text).toBe(201);
    expectShape(Action, res.body);
    expect(res.body.referred_user).toBeNull();
    expect(res.body.metadata).toEqual({});
    expect(res.body.action_type).toBe('share');
    expect(res.body.referral_link).toEqual({ ...before, total_clicks: before.total_clicks + 1 });
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks + 1);
  });

  it('by id: 201 with referred_user null, metadata kept and total_clicks +1', async () => {
    const before = await fetchLink(link.id);
    const res = await linkAction({
      referral_link_id: link.id,
      action_type: 'open',
      metadata: { source: 'email' },
    });
    expect(res.status, res.text).toBe(201);
    expectShape(Action, res.body);
    expect(res.body.referred_user).toBeNull();
    expect(res.body.metadata).toEqual({ source: 'email' });
    expect(res.body.referral_link.total_clicks).toBe(before.total_clicks + 1);
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks + 1);
  });

  it('does not touch total_referrals', async () => {
    const before = await fetchLink(link.id);
    await linkAction({ referral_code: link.referral_code, action_type: 'signup' });
    expect((await fetchLink(link.id)).total_referrals).toBe(before.total_referrals);
  });

  it.each([
    ['both code and id', (l: LinkBody) => ({ referral_code: l.referral_code, referral_link_id: l.id })],
    ['neither code nor id', () => ({})],
  ])('%s: 400 validation_failed, nothing counted', async (_label, target) => {
    const before = await fetchLink(link.id);
    expectError(await linkAction({ ...target(link), action_type: 'x' }), 400, 'validation_failed');
    expect((await fetchLink(link.id)).total_clicks).toBe(before.total_clicks);
  });

  it.each([
    ['metadata array', { metadata: [] }],
    ['metadata string', { metadata: 'x' }],
    ['metadata null', { metadata: null }],
    ['metadata over 8 KiB', { metadata: { a: 'x'.repeat(8200) } }],
    ['empty action_type', { action_type: '' }],
    ['unknown field', { referred_user_id: 'u' }],
  ])('%s: 400 validation_failed', async (_label, fields) => {
    expectError(
      await linkAction({ referral_code: link.referral_code, action_type: 'x', ...fields }),
      400,
      'validation_failed',
    );
  });

  it('unknown code or id: 404 referral_link_not_found', async () => {
    expectError(
      await linkAction({ referral_code: 'Unknown_Code', action_type: 'x' }),
      404,
      'referral_link_not_found',
    );
    expectError(
      await linkAction({ referral_link_id: Number.MAX_SAFE_INTEGER, action_type: 'x' }),
      404,
      'referral_link_not_found',
    );
  });

  it("another tenant's link by code or id: 404 referral_link_not_found, nothing counted", async () => {
    const before = await fetchLink(link.id);
    const stored = (await storedActions(campaignId, link.referral_code)).length;
    for (const target of [{ referral_code: link.referral_code }, { referral_link_id: link.id }]) {
      expectError(
        await linkAction({ ...target, action_type: 'x' }, TENANT_B.key),
        404,
        'referral_link_not_found',
      );
    }
    expect(await fetchLink(link.id)).toEqual(before);
    expect(await storedActions(campaignId, link.referral_code)).toHaveLength(stored);
  });

  it('stores the action with its webhook event in the campaign partition', async () => {
    const res = await linkAction({
      referral_code: link.referral_code,
      action_type: 'stored',
      metadata: { k: 'v' },
    });
    const item = (await storedActions(campaignId, link.referral_code)).find(
      (i) => eventDataOf<ActionBody>(i)?.id === res.body.id,
    );
    expect(item).toBeDefined();
    expect(item?.event_type).toBe('action.created');
    expect(eventDataOf(item)).toEqual(res.body);
  });
});
