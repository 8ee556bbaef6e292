/**
 * Endpoints 16 and 17 (analytics) against the real stack: interactions made through the API and
 * `/r/{code}` show up in the series and the leaderboards, exactly, within seconds; and every query
 * the contract allows (and many it forbids) is a 200 or a 400 in the contract's shape.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { eventually } from '../../tools/wait.ts';
import { api, rawRequest, TENANT_B } from '../support/api.ts';
import { expectError, expectValidation } from '../support/assertions.ts';
import {
  BROWSER_UA,
  createCampaign,
  createLink,
  createLinkAction,
  createReferredUser,
  type LinkBody,
} from '../support/records.ts';
import { settledClicks } from '../support/settled.ts';

interface Metrics {
  visits: number;
  unique_visits: number;
  bot_visits: number;
  referred_users: number;
  actions: number;
  conversions: number;
  revenue: number;
  actions_by_type: Record<string, number>;
}
interface Series {
  campaign_id: string;
  granularity: 'hour' | 'day';
  from: string;
  to: string;
  totals: Metrics;
  series: Array<{ start: string } & Metrics>;
}

const visit = (code: string, userAgent: string, method = 'GET') =>
  rawRequest(method, `/r/${code}`, { headers: { 'user-agent': userAgent } });

const CRAWLER = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

/** The series once its totals equal `expected` (the stream's rollups take a moment). */
async function seriesWhen(path: string, expected: Partial<Metrics>): Promise<Series> {
  let last: Series | undefined;
  try {
    return await eventually(
      `analytics ${path}`,
      async () => {
        const res = await api<Series>('GET', path);
        expect(res.status, res.text).toBe(200);
        last = res.body;
        return Object.entries(expected).every(
          ([k, v]) => JSON.stringify(res.body.totals[k as keyof Metrics]) === JSON.stringify(v),
        )
          ? res.body
          : undefined;
      },
      10_000,
      100,
    );
  } catch {
    throw new Error(`totals never became ${JSON.stringify(expected)}: last ${JSON.stringify(last?.totals)}`);
  }
}

let campaignId: string;
let alice: LinkBody;
let alice2: LinkBody;
let bob: LinkBody;
let loner: LinkBody;

beforeAll(async () => {
  campaignId = (await createCampaign({ url: 'https://example.com/spring', name: 'analytics' })).id;
  alice = await createLink(campaignId, { referrer_id: 'alice' });
  alice2 = await createLink(campaignId, { referrer_id: 'alice' });
  bob = await createLink(campaignId, { referrer_id: 'bob' });
  loner = await createLink(campaignId);

  // alice: 3 visits by 2 visitors (one came back), a bot visit, a HEAD; 2 signups, a purchase.
  for (const ua of [`${BROWSER_UA} v1`, `${BROWSER_UA} v1`, `${BROWSER_UA} v2`]) {
    expect((await visit(alice.referral_code, ua)).status).toBe(302);
  }
  expect((await visit(alice.referral_code, CRAWLER)).status).toBe(302);
  expect((await visit(alice.referral_code, `${BROWSER_UA} v1`, 'HEAD')).status).toBe(302);
  await createReferredUser(alice.referral_code, 'u-a1');
  await createReferredUser(alice2.referral_code, 'u-a2');
  await createLinkAction(alice.referral_code, 'purchase');
  // bob: 1 visit, 3 signups (more than alice), 2 shares.
  expect((await visit(bob.referral_code, `${BROWSER_UA} v3`)).status).toBe(302);
  for (const u of ['u-b1', 'u-b2', 'u-b3']) await createReferredUser(bob.referral_code, u);
  await createLinkAction(bob.referral_code, 'share');
  await createLinkAction(bob.referral_code, 'share');
  // a link without referrer: 1 visit.
  expect((await visit(loner.referral_code, `${BROWSER_UA} v4`)).status).toBe(302);
}, 60_000);

describe('GET /api/v1/analytics/{campaign_id} (endpoint 16)', () => {
  const campaignTotals: Metrics = {
    visits: 5,
    unique_visits: 4,
    bot_visits: 2,
    referred_users: 5,
    actions: 3,
    conversions: 0,
    revenue: 0,
    actions_by_type: { purchase: 1, share: 2 },
  };

  it('counts every interaction once: visits, unique and bot visits, signups, actions by type', async () => {
    const body = await seriesWhen(`/api/v1/analytics/${campaignId}`, campaignTotals);
    expect(body.totals).toEqual(campaignTotals);
    expect(body.campaign_id).toBe(campaignId);
    expect(body.granularity).toBe('day');
    // The default range: 30 days up to now, one point per day, zeros included; today holds it all.
    expect(body.series).toHaveLength(31);
    expect(body.series.at(-1)).toEqual({
      start: `${formatTimestamp(new Date()).slice(0, 10)}_00-00-00`,
      ...campaignTotals,
    });
    expect(body.series.slice(0, -1).every((p) => p.visits === 0 && p.referred_users === 0)).toBe(true);
  });

  it("visits reach the link's total_clicks too: bots and HEAD never do", async () => {
    expect(await settledClicks(alice.referral_code, 4)).toBe(4); // 3 visits + the purchase
    expect(await settledClicks(bob.referral_code, 3)).toBe(3);
    expect(await settledClicks(loner.referral_code, 1)).toBe(1);
  });

  it('hourly: the same totals, in the current hour', async () => {
    const body = await seriesWhen(`/api/v1/analytics/${campaignId}?granularity=hour`, campaignTotals);
    expect(body.series).toHaveLength(7 * 24 + 1);
    const hour = formatTimestamp(new Date()).slice(0, 13);
    expect(body.series.at(-1)).toEqual({ start: `${hour}-00-00`, ...campaignTotals });
  });

  it('narrowed to one link, or to one referrer (all their links)', async () => {
    const link = await seriesWhen(`/api/v1/analytics/${campaignId}?referral_link_id=${alice.id}`, {
      visits: 3,
    });
    expect(link.totals).toEqual({
      visits: 3,
      unique_visits: 2,
      bot_visits: 2,
      referred_users: 1,
      actions: 1,
      conversions: 0,
      revenue: 0,
      actions_by_type: { purchase: 1 },
    });
    const referrer = await seriesWhen(`/api/v1/analytics/${campaignId}?referrer_id=alice`, { visits: 3 });
    expect(referrer.totals.referred_users).toBe(2);
    const other = await api<Series>('GET', `/api/v1/analytics/${campaignId}?referrer_id=nobody`);
    expect(other.status).toBe(200);
    expect(other.body.totals.visits).toBe(0);
  });

  it('an explicit range: from and to in the points they fall in', async () => {
    const now = new Date();
    const from = formatTimestamp(new Date(now.getTime() - 2 * 86_400_000));
    const res = await api<Series>(
      'GET',
      `/api/v1/analytics/${campaignId}?from=${from}&to=${formatTimestamp(now)}`,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.series).toHaveLength(3);
    expect(res.body.from).toBe(`${from.slice(0, 10)}_00-00-00`);
    expect(res.body.to).toBe(formatTimestamp(now));
    // Hours that end before this one: the day's item holds this hour's visits too, and they are
    // not in the answer (nor in its totals).
    const hourAgo = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - 1000);
    const earlier = await api<Series>(
      'GET',
      `/api/v1/analytics/${campaignId}?granularity=hour&from=${formatTimestamp(new Date(hourAgo.getTime() - 3 * 3_600_000))}&to=${formatTimestamp(hourAgo)}`,
    );
    expect(earlier.status, earlier.text).toBe(200);
    expect(earlier.body.series).toHaveLength(4);
    const { actions_by_type: types, ...counts } = earlier.body.totals;
    expect(Object.values(counts)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(types).toEqual({});
    // A range before anything happened: all zeros.
    const old = await api<Series>(
      'GET',
      `/api/v1/analytics/${campaignId}?from=2020-01-01_00-00-00&to=2020-01-31_00-00-00`,
    );
    expect(old.status).toBe(200);
    expect(old.body.series).toHaveLength(31);
    expect(old.body.totals.visits).toBe(0);
  });

  it('limits: at most 7 days of hours, 400 days of days; from after to; both narrowings', async () => {
    expectValidation(
      await api(
        'GET',
        `/api/v1/analytics/${campaignId}?granularity=hour&from=2026-01-01_00-00-00&to=2026-01-08_00-00-01`,
      ),
      'from',
    );
    const week = await api(
      'GET',
      `/api/v1/analytics/${campaignId}?granularity=hour&from=2026-01-01_00-00-00&to=2026-01-08_00-00-00`,
    );
    expect(week.status).toBe(200);
    expectValidation(
      await api('GET', `/api/v1/analytics/${campaignId}?from=2025-01-01_00-00-00&to=2026-02-05_00-00-01`),
      'from',
    );
    expectValidation(
      await api('GET', `/api/v1/analytics/${campaignId}?from=2026-01-02_00-00-00&to=2026-01-01_00-00-00`),
      'from',
    );
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}?from=2026-02-30_00-00-00`), 'from');
    expectValidation(
      await api('GET', `/api/v1/analytics/${campaignId}?referral_link_id=1&referrer_id=alice`),
      'referrer_id',
    );
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}?granularity=week`), 'granularity');
  });

  it('unknown campaign, or another tenant’s: 404 campaign_not_found', async () => {
    expectError(await api('GET', `/api/v1/analytics/${crypto.randomUUID()}`), 404, 'campaign_not_found');
    expectError(
      await api('GET', `/api/v1/analytics/${campaignId}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    expectError(
      await api('GET', `/api/v1/analytics/${campaignId}/top`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
  });

  it('any query is a 200 or a 400 naming the parameter, never more', async () => {
    const stamp = fc
      .date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true })
      .map(formatTimestamp);
    const value = fc.oneof(
      stamp,
      fc.string({ maxLength: 30 }),
      fc.constantFrom('', 'hour', 'day', '0', '-1', '1e3'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { granularity: value, from: value, to: value, referral_link_id: value, referrer_id: value },
          { requiredKeys: [] },
        ),
        async (q) => {
          const qs = new URLSearchParams(q as Record<string, string>).toString();
          const res = await api('GET', `/api/v1/analytics/${campaignId}?${qs}`);
          expect([200, 400], `${qs}: ${res.text}`).toContain(res.status);
          if (res.status === 400)
            expect(res.body.error.code).toMatch(/^(validation_failed|missing_parameter)$/);
        },
      ),
      { numRuns: 120 },
    );
  });
});

describe('GET /api/v1/analytics/{campaign_id}/top (endpoint 17)', () => {
  type Row = {
    rank: number;
    referrer_id?: string;
    referral_link?: string;
    referral_link_id?: number;
    value: number;
  };

  it('referrers by referred users (the default), highest first', async () => {
    const rows = await eventually(
      'top referrers',
      async () => {
        const res = await api<Row[]>('GET', `/api/v1/analytics/${campaignId}/top`);
        expect(res.status, res.text).toBe(200);
        return res.body.length === 2 && res.body[0]!.value === 3 && res.body[1]!.value === 2
          ? res.body
          : undefined;
      },
      10_000,
    );
    expect(rows).toEqual([
      { rank: 1, referrer_id: 'bob', value: 3 },
      { rank: 2, referrer_id: 'alice', value: 2 },
    ]);
  });

  it('links by visits, with their URL and id; a limit', async () => {
    const res = await eventually(
      'top links',
      async () => {
        const r = await api<Row[]>(
          'GET',
          `/api/v1/analytics/${campaignId}/top?by=referral_link&metric=visits&limit=2`,
        );
        return r.body[0]?.value === 3 ? r : undefined;
      },
      10_000,
    );
    expect(res.body).toHaveLength(2);
    expect(res.body[0]).toEqual({
      rank: 1,
      referral_link: alice.referral_link,
      referral_link_id: alice.id,
      referral_code: alice.referral_code,
      value: 3,
    });
    // bob and the loner both have 1 visit: bob reached it first.
    expect(res.body[1]).toMatchObject({ rank: 2, referral_link_id: bob.id, value: 1 });
  });

  it('unique visits and actions rank too', async () => {
    const unique = await api<Row[]>('GET', `/api/v1/analytics/${campaignId}/top?metric=unique_visits`);
    expect(unique.body[0]).toEqual({ rank: 1, referrer_id: 'alice', value: 2 });
    const actions = await api<Row[]>('GET', `/api/v1/analytics/${campaignId}/top?metric=actions&by=referrer`);
    expect(actions.body).toEqual([
      { rank: 1, referrer_id: 'bob', value: 2 },
      { rank: 2, referrer_id: 'alice', value: 1 },
    ]);
  });

  it('bad metric, by or limit: 400 naming it', async () => {
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}/top?metric=bots`), 'metric');
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}/top?by=campaign`), 'by');
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}/top?limit=101`), 'limit');
    expectValidation(await api('GET', `/api/v1/analytics/${campaignId}/top?limit=0`), 'limit');
  });
});
