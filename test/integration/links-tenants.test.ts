/**
 * Tenant isolation on every link, referred-user and action endpoint: tenant B gets exactly what a
 * request for a non-existent resource gets (404) and changes nothing of tenant A's.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiResponse, api, TENANT_A, TENANT_B } from '../support/api.ts';
import { errorOf, expectError } from '../support/assertions.ts';
import {
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
  type ReferredUserBody,
} from '../support/records.ts';
import { campaignItems, linkItem, settledActionItems } from '../support/table.ts';

const B = TENANT_B.key;

describe("tenant B against tenant A's resources", () => {
  let campaignA: string;
  let campaignB: string;
  let link: LinkBody;
  let user: ReferredUserBody;
  let snapshot: () => Promise<unknown>;

  beforeAll(async () => {
    campaignA = (await createCampaign({ name: 'tenant a' })).id;
    campaignB = (await createCampaign({ name: 'tenant b' }, B)).id;
    link = await createLink(campaignA, { referrer_id: 'a-referrer' });
    user = await createReferredUser(link.referral_code, 'a-user');
    const action = await api('POST', '/api/v1/action/referred_user', {
      body: { campaign_id: campaignA, action_type: 'a-action', referred_user_id: 'a-user' },
    });
    expect(action.status).toBe(201);
    // Its item is written from the table stream; the snapshot below must not race it.
    await settledActionItems(TENANT_A.tenant, campaignA, [link.referral_code]);
    snapshot = async () => ({
      link: await fetchLink(link.id),
      stored: await linkItem(link.referral_code),
      actions: (await campaignItems(TENANT_A.tenant, campaignA, 'A#')).map((i) => i.SK),
      users: (await campaignItems(TENANT_A.tenant, campaignA, 'RU#')).map((i) => i.SK),
      campaign: (await api('GET', `/api/v1/campaign?id=${campaignA}`)).body,
      user: (await api('GET', `/api/v1/referred_user?campaign_id=${campaignA}&referred_user_id=a-user`)).body,
    });
  });

  /** B's answer for A's resource must equal B's answer for a resource that does not exist. */
  function sameAsUnknown(mine: ApiResponse, unknown: ApiResponse, code: string) {
    expectError(mine, 404, code);
    expectError(unknown, 404, code);
    expect(errorOf(mine).code).toBe(errorOf(unknown).code);
  }

  it('every endpoint answers 404 as for an unknown resource, and nothing of A changes', async () => {
    const before = await snapshot();
    const unknownId = Number.MAX_SAFE_INTEGER;
    const unknownCode = 'NoSuchCodeAtAll';
    const unknownCampaign = randomUUID();

    // Endpoint 1: a link in A's campaign.
    sameAsUnknown(
      await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaignA }, key: B }),
      await api('POST', '/api/v1/referral_link', { body: { campaign_id: unknownCampaign }, key: B }),
      'campaign_not_found',
    );
    // Endpoint 2: by id, code, both.
    sameAsUnknown(
      await api('GET', `/api/v1/referral_link?id=${link.id}`, { key: B }),
      await api('GET', `/api/v1/referral_link?id=${unknownId}`, { key: B }),
      'referral_link_not_found',
    );
    sameAsUnknown(
      await api('GET', `/api/v1/referral_link?referral_code=${link.referral_code}`, { key: B }),
      await api('GET', `/api/v1/referral_link?referral_code=${unknownCode}`, { key: B }),
      'referral_link_not_found',
    );
    sameAsUnknown(
      await api('GET', `/api/v1/referral_link?id=${link.id}&referral_code=${link.referral_code}`, { key: B }),
      await api('GET', `/api/v1/referral_link?id=${unknownId}&referral_code=${unknownCode}`, { key: B }),
      'referral_link_not_found',
    );
    // Endpoints 3 and 4.
    sameAsUnknown(
      await api('GET', `/api/v1/campaign_referral_links/${campaignA}`, { key: B }),
      await api('GET', `/api/v1/campaign_referral_links/${unknownCampaign}`, { key: B }),
      'campaign_not_found',
    );
    sameAsUnknown(
      await api('GET', `/api/v1/referral_link/${campaignA}/a-referrer`, { key: B }),
      await api('GET', `/api/v1/referral_link/${unknownCampaign}/a-referrer`, { key: B }),
      'campaign_not_found',
    );
    // Endpoint 5.
    sameAsUnknown(
      await api('POST', '/api/v1/action/referred_user', {
        body: { campaign_id: campaignA, action_type: 'b', referred_user_id: 'a-user' },
        key: B,
      }),
      await api('POST', '/api/v1/action/referred_user', {
        body: { campaign_id: unknownCampaign, action_type: 'b', referred_user_id: 'a-user' },
        key: B,
      }),
      'campaign_not_found',
    );
    // Endpoint 10: by code, by id, a duplicate of A's user, a self-referral.
    for (const [target, unknown] of [
      [{ referral_code: link.referral_code }, { referral_code: unknownCode }],
      [{ referral_link_id: link.id }, { referral_link_id: unknownId }],
    ] as const) {
      for (const referred_user_id of ['b-user', 'a-user', 'a-referrer']) {
        sameAsUnknown(
          await api('POST', '/api/v1/referred_user', { body: { ...target, referred_user_id }, key: B }),
          await api('POST', '/api/v1/referred_user', { body: { ...unknown, referred_user_id }, key: B }),
          'referral_link_not_found',
        );
      }
    }
    // Endpoint 11.
    const mine = await api('GET', `/api/v1/referred_user?campaign_id=${campaignA}&referred_user_id=a-user`, {
      key: B,
    });
    const unknown = await api(
      'GET',
      `/api/v1/referred_user?campaign_id=${unknownCampaign}&referred_user_id=a-user`,
      { key: B },
    );
    expect(mine.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(errorOf(mine).code).toBe(errorOf(unknown).code);
    // Endpoint 12: by code and by id.
    sameAsUnknown(
      await api('POST', '/api/v1/action/referral_link', {
        body: { referral_code: link.referral_code, action_type: 'b' },
        key: B,
      }),
      await api('POST', '/api/v1/action/referral_link', {
        body: { referral_code: unknownCode, action_type: 'b' },
        key: B,
      }),
      'referral_link_not_found',
    );
    sameAsUnknown(
      await api('POST', '/api/v1/action/referral_link', {
        body: { referral_link_id: link.id, action_type: 'b' },
        key: B,
      }),
      await api('POST', '/api/v1/action/referral_link', {
        body: { referral_link_id: unknownId, action_type: 'b' },
        key: B,
      }),
      'referral_link_not_found',
    );
    // Deleting A's campaign.
    sameAsUnknown(
      await api('DELETE', `/api/v1/campaign?id=${campaignA}`, { key: B }),
      await api('DELETE', `/api/v1/campaign?id=${unknownCampaign}`, { key: B }),
      'campaign_not_found',
    );

    expect(await snapshot()).toEqual(before);
    // Nothing was written under tenant B's name for A's campaign either.
    expect(await campaignItems(TENANT_B.tenant, campaignA, '')).toEqual([]);
  });

  it("B's own campaign works alongside, with the same referred_user_id and no view of A's links", async () => {
    const linkB = await createLink(campaignB, { referrer_id: 'a-referrer' }, B);
    const userB = await createReferredUser(linkB.referral_code, 'a-user', B);
    expect(userB.id).not.toBe(user.id);
    const listB = await api<LinkBody[]>('GET', `/api/v1/campaign_referral_links/${campaignB}`, { key: B });
    expect(listB.body.map((l) => l.id)).toEqual([linkB.id]);
    const refB = await api<LinkBody[]>('GET', `/api/v1/referral_link/${campaignB}/a-referrer`, { key: B });
    expect(refB.body.map((l) => l.id)).toEqual([linkB.id]);
    // A's referred user and link still point at A's link, unchanged by B's signup.
    const a = await api<ReferredUserBody>(
      'GET',
      `/api/v1/referred_user?campaign_id=${campaignA}&referred_user_id=a-user`,
    );
    expect(a.body.id).toBe(user.id);
    expect(a.body.referral_link.id).toBe(link.id);
    expect((await fetchLink(link.id)).total_referrals).toBe(1);
    // And A cannot see B's.
    expectError(await api('GET', `/api/v1/referral_link?id=${linkB.id}`), 404, 'referral_link_not_found');
    expectError(await api('GET', `/api/v1/campaign_referral_links/${campaignB}`), 404, 'campaign_not_found');
  });
});
