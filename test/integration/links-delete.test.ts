/**
 * Deleting a campaign: after the 204 its links, referred users and actions answer 404 on every
 * endpoint at once, `/r/{code}` included. (Purging the items in the background is tested apart.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { api, baseUrl, TENANT_A } from '../support/api.ts';
import { errorOf, expectError } from '../support/assertions.ts';
import {
  BROWSER_UA,
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
} from '../support/records.ts';
import { campaignItems, settledActionItems } from '../support/table.ts';

describe('after DELETE /api/v1/campaign', () => {
  let campaignId: string;
  let link: LinkBody;
  let custom: LinkBody;
  let survivor: LinkBody;
  let actionKeys: Set<string>;
  let userKeys: Set<string>;

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'to delete' })).id;
    link = await createLink(campaignId, { referrer_id: 'doomed-referrer' });
    custom = await createLink(campaignId, {
      referral_code: `doomed_${Date.now()}`,
      referrer_id: 'doomed-referrer',
    });
    await createReferredUser(link.referral_code, 'doomed-user');
    // Warm every write path (a referred user's action may be served from a warm cache).
    for (const body of [
      { campaign_id: campaignId, action_type: 'warm', referred_user_id: 'doomed-user' },
      { campaign_id: campaignId, action_type: 'warm', referred_user_id: 'doomed-user' },
    ]) {
      expect((await api('POST', '/api/v1/action/referred_user', { body })).status).toBe(201);
    }
    expect(
      (
        await api('POST', '/api/v1/action/referral_link', {
          body: { referral_code: link.referral_code, action_type: 'warm' },
        })
      ).status,
    ).toBe(201);
    const visit = await fetch(`${baseUrl()}/r/${custom.referral_code}`, {
      redirect: 'manual',
      headers: { 'user-agent': BROWSER_UA },
    });
    expect(visit.status).toBe(302);
    // A second campaign of the same tenant that must not be affected.
    const other = await createCampaign({ name: 'survivor' });
    survivor = await createLink(other.id, { referrer_id: 'doomed-referrer' });
    await createReferredUser(survivor.referral_code, 'doomed-user');

    const actions = await settledActionItems(TENANT_A.tenant, campaignId, [
      link.referral_code,
      custom.referral_code,
    ]);
    actionKeys = new Set(actions.map((i) => String(i.SK)));
    userKeys = new Set((await campaignItems(TENANT_A.tenant, campaignId, 'RU#')).map((i) => String(i.SK)));
    expect(actionKeys.size).toBe(4);
    expect(userKeys.size).toBe(1);

    const res = await api('DELETE', `/api/v1/campaign?id=${campaignId}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  it('GET link by id, by code and by both: 404 referral_link_not_found', async () => {
    for (const l of [link, custom]) {
      for (const query of [
        `id=${l.id}`,
        `referral_code=${l.referral_code}`,
        `id=${l.id}&referral_code=${l.referral_code}`,
      ]) {
        expectError(await api('GET', `/api/v1/referral_link?${query}`), 404, 'referral_link_not_found');
      }
    }
  });

  it('both lists: 404 campaign_not_found', async () => {
    expectError(await api('GET', `/api/v1/campaign_referral_links/${campaignId}`), 404, 'campaign_not_found');
    expectError(
      await api('GET', `/api/v1/referral_link/${campaignId}/doomed-referrer`),
      404,
      'campaign_not_found',
    );
  });

  it('/r/{code}: 404 for browsers, HEAD and crawlers', async () => {
    for (const l of [link, custom]) {
      const get = await fetch(`${baseUrl()}/r/${l.referral_code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Mozilla/5.0 Firefox/127.0' },
      });
      expect(get.status).toBe(404);
      expect(get.headers.get('location')).toBeNull();
      const head = await fetch(`${baseUrl()}/r/${l.referral_code}`, { method: 'HEAD', redirect: 'manual' });
      expect(head.status).toBe(404);
      const bot = await fetch(`${baseUrl()}/r/${l.referral_code}`, {
        redirect: 'manual',
        headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
      });
      expect(bot.status).toBe(404);
    }
  });

  it('GET referred user: 404', async () => {
    const res = await api(
      'GET',
      `/api/v1/referred_user?campaign_id=${campaignId}&referred_user_id=doomed-user`,
    );
    expect(res.status).toBe(404);
    expect(['campaign_not_found', 'referred_user_not_found']).toContain(errorOf(res).code);
  });

  it('actions of a referred user (warm path included): 404', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await api('POST', '/api/v1/action/referred_user', {
        body: { campaign_id: campaignId, action_type: 'late', referred_user_id: 'doomed-user' },
      });
      expect(res.status).toBe(404);
      expect(['campaign_not_found', 'referred_user_not_found']).toContain(errorOf(res).code);
    }
  });

  it('actions on a link by code or id: 404 referral_link_not_found', async () => {
    for (const target of [{ referral_code: link.referral_code }, { referral_link_id: link.id }]) {
      expectError(
        await api('POST', '/api/v1/action/referral_link', { body: { ...target, action_type: 'late' } }),
        404,
        'referral_link_not_found',
      );
    }
  });

  it('new referred users through its links: 404 referral_link_not_found (even a self-referral)', async () => {
    for (const body of [
      { referral_code: link.referral_code, referred_user_id: 'late-user' },
      { referral_link_id: link.id, referred_user_id: 'late-user' },
      { referral_code: link.referral_code, referred_user_id: 'doomed-user' },
      { referral_code: link.referral_code, referred_user_id: 'doomed-referrer' },
    ]) {
      expectError(await api('POST', '/api/v1/referred_user', { body }), 404, 'referral_link_not_found');
    }
  });

  it('new links in it: 404 campaign_not_found; the campaign itself is 404', async () => {
    expectError(
      await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaignId } }),
      404,
      'campaign_not_found',
    );
    expectError(await api('GET', `/api/v1/campaign?id=${campaignId}`), 404, 'campaign_not_found');
    expectError(await api('DELETE', `/api/v1/campaign?id=${campaignId}`), 404, 'campaign_not_found');
  });

  it('nothing new was written after the delete', async () => {
    // Items may be purged meanwhile; none may have been added.
    const actions = await campaignItems(TENANT_A.tenant, campaignId, 'A#');
    const users = await campaignItems(TENANT_A.tenant, campaignId, 'RU#');
    expect(actions.filter((i) => !actionKeys.has(String(i.SK)))).toEqual([]);
    expect(users.filter((i) => !userKeys.has(String(i.SK)))).toEqual([]);
  });

  it("the tenant's other campaign is untouched", async () => {
    const fetched = await fetchLink(survivor.id);
    expect(fetched).toEqual({ ...survivor, total_referrals: 1 });
    const res = await fetch(`${baseUrl()}/r/${survivor.referral_code}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe(survivor.referral_link);
  });
});
