/**
 * Exact counters under concurrency: each counter changes in the same transaction as the record it
 * counts, so simultaneous writes neither lose nor double a count, and counts equal the items.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Action, ReferredUser } from '../../lib/domain/link-schemas.ts';
import { type ApiResponse, api, baseUrl, TENANT_A } from '../support/api.ts';
import { expectError, expectShape } from '../support/assertions.ts';
import {
  type ActionBody,
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
  type ReferredUserBody,
} from '../support/records.ts';
import { settledClicks } from '../support/settled.ts';
import { campaignItems, eventDataOf, settledActionItems, visitItems } from '../support/table.ts';

let campaignId: string;

beforeAll(async () => {
  campaignId = (await createCampaign({ name: 'concurrency' })).id;
});

/** Sum of a counter over the campaign's links (read through the API). */
async function sumOf(counter: 'total_clicks' | 'total_referrals', links: LinkBody[]): Promise<number> {
  const fetched = await Promise.all(links.map((l) => fetchLink(l.id)));
  return fetched.reduce((n, l) => n + l[counter], 0);
}

describe('concurrency', () => {
  it('20 simultaneous creates of one referred_user_id: exactly one 201 and nineteen 409s', async () => {
    // Two links of the same campaign, by code and by id: the id is unique per campaign, not per link.
    const first = await createLink(campaignId);
    const second = await createLink(campaignId);
    const bodies = Array.from({ length: 20 }, (_, i) => {
      const link = i % 2 === 0 ? first : second;
      return i % 4 < 2
        ? { referral_code: link.referral_code, referred_user_id: 'race-user' }
        : { referral_link_id: link.id, referred_user_id: 'race-user' };
    });
    const responses = await Promise.all(
      bodies.map((body) => api<ReferredUserBody>('POST', '/api/v1/referred_user', { body })),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(statuses),
    ).toHaveLength(1);
    expect(
      statuses.filter((s) => s === 409),
      JSON.stringify(statuses),
    ).toHaveLength(19);
    for (const r of responses.filter((r) => r.status === 409)) expectError(r, 409, 'referred_user_exists');
    const winner = responses.find((r) => r.status === 201)!;
    expectShape(ReferredUser, winner.body);
    expect(winner.body.referral_link.total_referrals).toBe(1);

    expect(await sumOf('total_referrals', [first, second])).toBe(1);
    const records = await campaignItems(TENANT_A.tenant, campaignId, 'RU#race-user');
    expect(records).toHaveLength(1);
    expect(records[0]?.link_id).toBe(winner.body.referral_link.id);
  });

  it('60 simultaneous actions on one link (visits and endpoint 12) raise total_clicks by exactly 60', async () => {
    const link = await createLink(campaignId);
    await createLink(campaignId); // a neighbour that must stay at zero
    const before = await fetchLink(link.id);
    const requests: Array<() => Promise<ApiResponse<ActionBody> | { status: number }>> = [];
    for (let i = 0; i < 60; i++) {
      if (i % 3 === 0) {
        requests.push(async () => {
          const res = await fetch(`${baseUrl()}/r/${link.referral_code}`, {
            redirect: 'manual',
            headers: { 'user-agent': `Mozilla/5.0 visitor ${i}` },
          });
          await res.arrayBuffer();
          return { status: res.status };
        });
      } else {
        const target = i % 3 === 1 ? { referral_code: link.referral_code } : { referral_link_id: link.id };
        requests.push(() =>
          api<ActionBody>('POST', '/api/v1/action/referral_link', {
            body: { ...target, action_type: 'burst', metadata: { i } },
          }),
        );
      }
    }
    const responses = await Promise.all(requests.map((r) => r()));
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 302),
      JSON.stringify(statuses),
    ).toHaveLength(20);
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(statuses),
    ).toHaveLength(40);

    const created = responses.filter((r): r is ApiResponse<ActionBody> => r.status === 201);
    for (const r of created) {
      expectShape(Action, r.body);
      expect(r.body.referred_user).toBeNull();
    }
    expect(new Set(created.map((r) => r.body.id)).size).toBe(40);
    // Each write's link object includes its own increment, so no two responses show the same count
    // unless they raced on the read; every shown value lies within the burst.
    for (const r of created) {
      expect(r.body.referral_link.total_clicks).toBeGreaterThan(before.total_clicks);
      expect(r.body.referral_link.total_clicks).toBeLessThanOrEqual(before.total_clicks + 60);
    }

    // The visits reach total_clicks through the stream's rollups: settled, and exact.
    expect(await settledClicks(link.referral_code, before.total_clicks + 60)).toBe(before.total_clicks + 60);
    const items = [
      ...(await campaignItems(TENANT_A.tenant, campaignId, 'A#')),
      ...(await visitItems(TENANT_A.tenant, campaignId)).filter((i) => String(i.SK).startsWith('A#')),
    ].filter((i) => i.link_code === link.referral_code);
    expect(items).toHaveLength(60);
    expect(items.filter((i) => eventDataOf<ActionBody>(i).action_type === 'visit')).toHaveLength(20);
    expect(new Set(items.map((i) => i.SK)).size).toBe(60);
  });

  it('simultaneous actions of referred users (endpoint 5) and signups keep both counters exact', async () => {
    const link = await createLink(campaignId, { referrer_id: 'busy-referrer' });
    await Promise.all(
      Array.from({ length: 5 }, (_, i) => createReferredUser(link.referral_code, `busy-${i}`)),
    );
    const jobs: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < 30; i++) {
      jobs.push(
        api('POST', '/api/v1/action/referred_user', {
          body: { campaign_id: campaignId, action_type: 'step', referred_user_id: `busy-${i % 5}` },
        }),
      );
    }
    for (let i = 0; i < 10; i++) {
      jobs.push(
        api('POST', '/api/v1/referred_user', {
          body: { referral_link_id: link.id, referred_user_id: `late-${i}` },
        }),
      );
    }
    const statuses = (await Promise.all(jobs)).map((r) => r.status);
    expect(
      statuses.filter((s) => s === 201),
      JSON.stringify(statuses),
    ).toHaveLength(40);
    const after = await fetchLink(link.id);
    expect(after.total_clicks).toBe(30);
    expect(after.total_referrals).toBe(15);
  });

  it('60 simultaneous actions of one referred user: each response shows the exact count after it', async () => {
    const link = await createLink(campaignId, { referrer_id: 'exact-referrer' });
    await createReferredUser(link.referral_code, 'exact-user');
    const responses = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        api<ActionBody>('POST', '/api/v1/action/referred_user', {
          body: { campaign_id: campaignId, action_type: `tap-${i}`, referred_user_id: 'exact-user' },
        }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(60).fill(201));
    // The write returns the link as it committed: sixty different counts, 1 to 60, none repeated
    // or skipped, and the nested referred user's link agrees with the action's.
    const counts = responses.map((r) => r.body.referral_link.total_clicks).sort((a, b) => a - b);
    expect(counts).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    for (const r of responses) expect(r.body.referred_user?.referral_link).toEqual(r.body.referral_link);
    expect((await fetchLink(link.id)).total_clicks).toBe(60);
    const items = await settledActionItems(TENANT_A.tenant, campaignId, [link.referral_code]);
    expect(items.filter((i) => i.link_code === link.referral_code)).toHaveLength(60);
  });

  it("counters equal the campaign's action and referred-user items", async () => {
    const listed = await api<LinkBody[]>('GET', `/api/v1/campaign_referral_links/${campaignId}?limit=1000`);
    expect(listed.status).toBe(200);
    const links = listed.body;
    const actions = await settledActionItems(
      TENANT_A.tenant,
      campaignId,
      links.map((l) => l.referral_code),
    );
    const users = await campaignItems(TENANT_A.tenant, campaignId, 'RU#');
    expect(actions.length).toBeGreaterThan(0);
    expect(users.length).toBeGreaterThan(0);
    expect(links.reduce((n, l) => n + l.total_clicks, 0)).toBe(actions.length);
    expect(links.reduce((n, l) => n + l.total_referrals, 0)).toBe(users.length);
    for (const link of links) {
      expect(actions.filter((a) => a.link_code === link.referral_code)).toHaveLength(link.total_clicks);
      expect(users.filter((u) => u.link_code === link.referral_code)).toHaveLength(link.total_referrals);
    }
  });
});
