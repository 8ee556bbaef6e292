/**
 * Conversions (endpoints 23–26) and the campaign's currency through the API: the link's counters
 * move in the write that records or refunds a sale, exactly, under simultaneous requests too.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { Conversion } from '../../lib/domain/conversion-schemas.ts';
import { eventually } from '../../tools/wait.ts';
import { api, TENANT_B } from '../support/api.ts';
import { expectError, expectShape, expectValidation } from '../support/assertions.ts';
import {
  type CampaignBody,
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
} from '../support/records.ts';
import { campaignItems } from '../support/table.ts';

type ConversionBody = {
  id: string;
  amount: number;
  refunded_amount: number;
  currency: string;
  status: string;
  external_id: string | null;
  referral_link: LinkBody & { total_conversions: number; total_revenue: number };
  referred_user: { referred_user_id: string };
  metadata: Record<string, unknown>;
};

const convert = (body: Record<string, unknown>, options: { key?: string; idempotencyKey?: string } = {}) =>
  api<ConversionBody>('POST', '/api/v1/conversion', { body, ...options });
const refund = (id: string, body?: Record<string, unknown>) =>
  api<ConversionBody>('POST', `/api/v1/conversion/${id}/refund`, body === undefined ? {} : { body });
const counters = async (link: LinkBody) => {
  const l = (await fetchLink(link.id)) as LinkBody & { total_conversions: number; total_revenue: number };
  return { conversions: l.total_conversions, revenue: l.total_revenue };
};

let campaign: CampaignBody & { currency?: string };
let link: LinkBody;

beforeAll(async () => {
  campaign = await createCampaign({ name: 'conversions', currency: 'EUR' });
  link = await createLink(campaign.id, { referrer_id: 'seller-1' });
  await createReferredUser(link.referral_code, 'buyer-1');
});

describe('campaign currency', () => {
  it('defaults to USD and is settable on create and on PATCH until the first conversion', async () => {
    expect(campaign.currency).toBe('EUR');
    const plain = await createCampaign({ name: 'usd' });
    expect((plain as { currency?: string }).currency).toBe('USD');
    const patched = await api('PATCH', `/api/v1/campaign?id=${plain.id}`, { body: { currency: 'JPY' } });
    expect(patched.status).toBe(200);
    expect(patched.body.currency).toBe('JPY');
    const l = await createLink(plain.id);
    await createReferredUser(l.referral_code, 'yen-buyer');
    expect(
      (await convert({ campaign_id: plain.id, referred_user_id: 'yen-buyer', amount: 1200 })).status,
    ).toBe(201);
    expectError(
      await api('PATCH', `/api/v1/campaign?id=${plain.id}`, { body: { currency: 'USD' } }),
      409,
      'currency_locked',
    );
    // Naming the currency it has is no change.
    expect(
      (await api('PATCH', `/api/v1/campaign?id=${plain.id}`, { body: { currency: 'JPY' } })).status,
    ).toBe(200);
    const listed = await api('GET', '/api/v1/campaigns?limit=1000');
    expect(listed.body.find((c: CampaignBody) => c.id === plain.id)?.currency).toBe('JPY');
  });

  it.each(['usd', 'XYZ', 'EURO', 'EU', '', 7])('refuses the currency %j with 400', async (currency) => {
    expectValidation(
      await api('POST', '/api/v1/campaign', { body: { url: 'https://e.example', name: 'x', currency } }),
      'currency',
    );
    expectValidation(
      await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { currency } }),
      'currency',
    );
  });
});

describe('POST /api/v1/conversion', () => {
  it('records a sale and raises the link counters in the same write', async () => {
    const before = await counters(link);
    const res = await convert({
      campaign_id: campaign.id,
      referred_user_id: 'buyer-1',
      amount: 4990,
      external_id: 'ord-1',
      metadata: { plan: 'annual', n: 1e3 },
    });
    expect(res.status, res.text).toBe(201);
    expectShape(Conversion, res.body);
    expect(res.body).toMatchObject({
      amount: 4990,
      refunded_amount: 0,
      currency: 'EUR',
      status: 'completed',
      external_id: 'ord-1',
      metadata: { plan: 'annual', n: 1000 },
    });
    expect(res.body.referral_link.total_conversions).toBe(before.conversions + 1);
    expect(res.body.referral_link.total_revenue).toBe(before.revenue + 4990);
    expect(await counters(link)).toEqual({
      conversions: before.conversions + 1,
      revenue: before.revenue + 4990,
    });
    const fetched = await api('GET', `/api/v1/conversion?id=${res.body.id}`);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(res.body);
  });

  it('refuses a currency other than the campaign’s, an unknown referred user, a used external_id', async () => {
    const before = await counters(link);
    expectError(
      await convert({ campaign_id: campaign.id, referred_user_id: 'buyer-1', amount: 5, currency: 'USD' }),
      422,
      'currency_mismatch',
    );
    expectError(
      await convert({ campaign_id: campaign.id, referred_user_id: 'nobody', amount: 5 }),
      404,
      'referred_user_not_found',
    );
    expect(
      (
        await convert({
          campaign_id: campaign.id,
          referred_user_id: 'buyer-1',
          amount: 5,
          external_id: 'dup',
        })
      ).status,
    ).toBe(201);
    expectError(
      await convert({ campaign_id: campaign.id, referred_user_id: 'buyer-1', amount: 7, external_id: 'dup' }),
      409,
      'conversion_exists',
    );
    expect(await counters(link)).toEqual({
      conversions: before.conversions + 1,
      revenue: before.revenue + 5,
    });
  });

  it('takes the same external_id in another campaign and another tenant', async () => {
    const other = await createCampaign({ name: 'other', currency: 'EUR' });
    const l = await createLink(other.id);
    await createReferredUser(l.referral_code, 'buyer-1');
    expect(
      (await convert({ campaign_id: other.id, referred_user_id: 'buyer-1', amount: 1, external_id: 'ord-1' }))
        .status,
    ).toBe(201);
    const theirs = await createCampaign({ name: 'theirs' }, TENANT_B.key);
    const tl = await createLink(theirs.id, {}, TENANT_B.key);
    await createReferredUser(tl.referral_code, 'buyer-1', TENANT_B.key);
    const res = await convert(
      { campaign_id: theirs.id, referred_user_id: 'buyer-1', amount: 1, external_id: 'ord-1' },
      { key: TENANT_B.key },
    );
    expect(res.status).toBe(201);
    // Another tenant's conversion is not found.
    expectError(await api('GET', `/api/v1/conversion?id=${res.body.id}`), 404, 'conversion_not_found');
    expectError(await refund(res.body.id), 404, 'conversion_not_found');
  });

  it.each([0, -1, 1.5, 1_000_000_000_001, '100', '1e3', null])(
    'refuses the amount %j with 400 and writes nothing',
    async (amount) => {
      const before = await counters(link);
      expectValidation(
        await convert({ campaign_id: campaign.id, referred_user_id: 'buyer-1', amount }),
        'amount',
      );
      expect(await counters(link)).toEqual(before);
    },
  );

  it('replays a retry with the same Idempotency-Key', async () => {
    const before = await counters(link);
    const body = { campaign_id: campaign.id, referred_user_id: 'buyer-1', amount: 300 };
    const first = await convert(body, { idempotencyKey: `conv-${Date.now()}` });
    const again = await convert(body, { idempotencyKey: first.headers.get('x-request-id') ?? 'x' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    const key = `conv-key-${Date.now()}`;
    const a = await convert(body, { idempotencyKey: key });
    const b = await convert(body, { idempotencyKey: key });
    expect(b.status).toBe(201);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(b.body.id).toBe(a.body.id);
    expect(await counters(link)).toEqual({
      conversions: before.conversions + 3,
      revenue: before.revenue + 900,
    });
  });
});

describe('refunds', () => {
  it('a partial refund, then the rest: status, refunded_amount and the link revenue follow', async () => {
    const sale = await convert({ campaign_id: campaign.id, referred_user_id: 'buyer-1', amount: 1000 });
    const before = await counters(link);
    const part = await refund(sale.body.id, { amount: 300 });
    expect(part.status, part.text).toBe(200);
    expect(part.body).toMatchObject({ refunded_amount: 300, status: 'partially_refunded' });
    expect(part.body.referral_link.total_revenue).toBe(before.revenue - 300);
    expectError(await refund(sale.body.id, { amount: 701 }), 422, 'refund_exceeds_amount');
    const rest = await refund(sale.body.id);
    expect(rest.body).toMatchObject({ refunded_amount: 1000, status: 'refunded' });
    expectError(await refund(sale.body.id), 422, 'refund_exceeds_amount');
    expect(await counters(link)).toEqual({ conversions: before.conversions, revenue: before.revenue - 1000 });
  });

  it.each([0, -5, 2.5, '10'])('refuses the refund amount %j with 400', async (amount) => {
    const sale = await convert({ campaign_id: campaign.id, referred_user_id: 'buyer-1', amount: 10 });
    expectValidation(await refund(sale.body.id, { amount }), 'amount');
  });

  it('an id the API never made is 404', async () => {
    expectError(await refund('cv_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), 404, 'conversion_not_found');
    expectError(await refund('nope'), 404, 'conversion_not_found');
    expectError(await api('GET', '/api/v1/conversion?id=cv_short'), 400, 'validation_failed');
  });
});

describe('under concurrency', () => {
  it('N simultaneous refunds never refund more than the amount; the link counter equals amount - refunded', async () => {
    const l = await createLink(campaign.id);
    await createReferredUser(l.referral_code, 'race-buyer');
    const sale = await convert({ campaign_id: campaign.id, referred_user_id: 'race-buyer', amount: 1000 });
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => refund(sale.body.id, { amount: 300 })),
    );
    const statuses = responses.map((r) => r.status);
    expect(
      statuses.filter((s) => s === 200),
      JSON.stringify(statuses),
    ).toHaveLength(3);
    for (const r of responses.filter((r) => r.status !== 200)) expectError(r, 422, 'refund_exceeds_amount');
    const after = await api<ConversionBody>('GET', `/api/v1/conversion?id=${sale.body.id}`);
    expect(after.body.refunded_amount).toBe(900);
    expect(await counters(l)).toEqual({ conversions: 1, revenue: 100 });
    // Whole refunds of what is left, all at once: one wins.
    const rest = await Promise.all(Array.from({ length: 6 }, () => refund(sale.body.id)));
    expect(rest.filter((r) => r.status === 200)).toHaveLength(1);
    expect(await counters(l)).toEqual({ conversions: 1, revenue: 0 });
    const refunds = await campaignItems('tenant-a', campaign.id, 'CVF#');
    expect(refunds.filter((i) => i.conversion_id === sale.body.id)).toHaveLength(4);
  });

  it('N simultaneous conversions raise total_conversions by exactly N', async () => {
    const l = await createLink(campaign.id);
    await createReferredUser(l.referral_code, 'busy-buyer');
    const n = 15;
    const responses = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        convert({ campaign_id: campaign.id, referred_user_id: 'busy-buyer', amount: i + 1 }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(n).fill(201));
    expect(await counters(l)).toEqual({ conversions: n, revenue: (n * (n + 1)) / 2 });
  });
});

describe('GET /api/v1/conversions/{campaign_id}', () => {
  it('lists newest first, pages with a cursor, and filters by referred user or referrer', async () => {
    const c = await createCampaign({ name: 'list' });
    const a = await createLink(c.id, { referrer_id: 'ref-a' });
    const b = await createLink(c.id);
    await createReferredUser(a.referral_code, 'user-a');
    await createReferredUser(b.referral_code, 'user-b');
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await convert({
        campaign_id: c.id,
        referred_user_id: i % 2 ? 'user-b' : 'user-a',
        amount: 10 + i,
      });
      made.push(res.body.id);
    }
    const all: ConversionBody[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/api/v1/conversions/${c.id}?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res: { status: number; body: ConversionBody[]; headers: Headers } = await api<ConversionBody[]>(
        'GET',
        path,
      );
      expect(res.status).toBe(200);
      all.push(...res.body);
      cursor = res.headers.get('x-next-cursor');
    } while (cursor);
    expect(all.map((x) => x.id)).toEqual([...made].reverse());
    const mine = await api<ConversionBody[]>('GET', `/api/v1/conversions/${c.id}?referred_user_id=user-b`);
    expect(mine.body.map((x) => x.amount)).toEqual([13, 11]);
    const theirs = await api<ConversionBody[]>(
      'GET',
      `/api/v1/conversions/${c.id}?referrer_id=ref-a&limit=1`,
    );
    expect(theirs.body.map((x) => x.amount)).toEqual([14]);
    expect(theirs.headers.get('link')).toContain('referrer_id=ref-a');
    expectValidation(
      await api('GET', `/api/v1/conversions/${c.id}?referrer_id=ref-a&referred_user_id=user-b`),
      'referred_user_id',
    );
    // A cursor of another list is refused.
    const other = await api(
      'GET',
      `/api/v1/conversions/${c.id}?referred_user_id=user-a&cursor=${theirs.headers.get('x-next-cursor')}`,
    );
    expectValidation(other, 'cursor');
  });

  it('a deleted campaign: its conversions are gone at once, refunds 404', async () => {
    const c = await createCampaign({ name: 'doomed' });
    const l = await createLink(c.id, { referrer_id: 'doomed-ref' });
    await createReferredUser(l.referral_code, 'doomed-buyer');
    const sale = await convert({
      campaign_id: c.id,
      referred_user_id: 'doomed-buyer',
      amount: 50,
      external_id: 'doomed-order',
    });
    expect((await refund(sale.body.id, { amount: 10 })).status).toBe(200);
    expect((await campaignItems('tenant-a', c.id, 'CV')).map((i) => String(i.SK).slice(0, 4)).sort()).toEqual(
      ['CV#0', 'CVF#', 'CVR#', 'CVU#', 'CVX#'],
    );
    expect((await api('DELETE', `/api/v1/campaign?id=${c.id}`)).status).toBe(204);
    expectError(await refund(sale.body.id), 404, 'conversion_not_found');
    expectError(await api('GET', `/api/v1/conversion?id=${sale.body.id}`), 404, 'conversion_not_found');
    expectError(await api('GET', `/api/v1/conversions/${c.id}`), 404, 'campaign_not_found');
    expectError(
      await convert({ campaign_id: c.id, referred_user_id: 'doomed-buyer', amount: 50 }),
      404,
      'campaign_not_found',
    );
    // The purge takes every conversion item (records, pointers, external ids, refunds) with the
    // partition, and the lookup items of their events with the feed.
    await eventually(
      'the purge of the conversion items',
      async () => ((await campaignItems('tenant-a', c.id, 'CV')).length === 0 ? true : undefined),
      30_000,
    );
  });
});

describe('events and analytics', () => {
  it('a sale and a refund are in the events feed, and webhooks subscribe to them', async () => {
    const c = await createCampaign({ name: 'feed' });
    const patched = await api('PATCH', `/api/v1/campaign?id=${c.id}`, {
      body: { webhook_events: ['conversion.created', 'conversion.refunded'] },
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.webhook_events).toEqual(['conversion.created', 'conversion.refunded']);
    const l = await createLink(c.id, { referrer_id: 'feed-ref' });
    await createReferredUser(l.referral_code, 'feed-buyer');
    const sale = await convert({ campaign_id: c.id, referred_user_id: 'feed-buyer', amount: 800 });
    const back = await refund(sale.body.id, { amount: 200 });
    const events = await eventually(
      'conversion events in the feed',
      async () => {
        const res = await api<Array<{ id: string; type: string; data: ConversionBody }>>(
          'GET',
          `/api/v1/events/${c.id}`,
        );
        return res.body.length >= 3 ? res.body : undefined;
      },
      15_000,
    );
    expect(events.map((e) => e.type)).toEqual([
      'referred_user.created',
      'conversion.created',
      'conversion.refunded',
    ]);
    expect(events[1]!.data).toEqual(sale.body);
    expect(events[2]!.data).toEqual(back.body);
    // An event is redelivered by its id, as any other.
    const again = await api('POST', `/api/v1/events/${events[2]!.id}/redeliver`);
    expect(again.status, again.text).toBe(202);
  });

  it('conversions and net revenue in series, totals and the rankings', async () => {
    const c = await createCampaign({ name: 'revenue' });
    const big = await createLink(c.id, { referrer_id: 'big-seller' });
    const small = await createLink(c.id, { referrer_id: 'small-seller' });
    await createReferredUser(big.referral_code, 'b1');
    await createReferredUser(small.referral_code, 's1');
    const first = await convert({ campaign_id: c.id, referred_user_id: 'b1', amount: 5000 });
    await convert({ campaign_id: c.id, referred_user_id: 's1', amount: 3000 });
    await convert({ campaign_id: c.id, referred_user_id: 's1', amount: 1000 });
    // A refund drops the first seller below the second.
    expect((await refund(first.body.id, { amount: 2000 })).status).toBe(200);
    const series = await eventually(
      'revenue in the series',
      async () => {
        const res = await api('GET', `/api/v1/analytics/${c.id}?granularity=hour`);
        return res.body.totals.revenue === 7000 ? res.body : undefined;
      },
      15_000,
    );
    expect(series.totals.conversions).toBe(3);
    const byReferrer = await eventually(
      'revenue of one referrer',
      async () => {
        const res = await api('GET', `/api/v1/analytics/${c.id}?referrer_id=big-seller`);
        return res.body.totals.revenue === 3000 ? res.body : undefined;
      },
      20_000,
    );
    expect(byReferrer.totals.conversions).toBe(1);
    // Before the refund is ranked, small-seller's 3,000 may stand second behind big-seller's 5,000:
    // wait for the ranking with everything in it, not for a value that an earlier one has too.
    const ranked = [
      { rank: 1, referrer_id: 'small-seller', value: 4000 },
      { rank: 2, referrer_id: 'big-seller', value: 3000 },
    ];
    let top: unknown;
    await eventually(
      'the revenue ranking',
      async () => {
        const res = await api('GET', `/api/v1/analytics/${c.id}/top?metric=revenue`);
        expect(res.status, res.text).toBe(200);
        top = res.body;
        return JSON.stringify(top) === JSON.stringify(ranked) ? true : undefined;
      },
      20_000,
    ).catch(() => undefined);
    expect(top).toEqual(ranked);
    const links = await eventually(
      'the links by conversions',
      async () => {
        const res = await api('GET', `/api/v1/analytics/${c.id}/top?metric=conversions&by=referral_link`);
        return res.body.length === 2 ? res.body : undefined;
      },
      20_000,
    );
    expect(links.map((r: { referral_code: string; value: number }) => [r.referral_code, r.value])).toEqual([
      [small.referral_code, 2],
      [big.referral_code, 1],
    ]);
  });
});
