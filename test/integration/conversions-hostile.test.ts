/**
 * Hostile bodies for a conversion (endpoint 23) and a refund (endpoint 24), as JSON text written
 * token by token, so amounts can be any literal JSON allows (`1e3`, `1.0`, `-0`, `1e400`, 30
 * digits) and fields any type. Whatever is sent: never a 5xx, a refused request is the contract's
 * 4xx, and nothing is half-written: the link's counters and the conversion's `refunded_amount`
 * are exactly the sums of what was accepted.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_CONVERSION_AMOUNT } from '../../lib/domain/field-rules.ts';
import { type ApiResponse, api, rawRequest, TENANT_A } from '../support/api.ts';
import { expectNoLeak } from '../support/assertions.ts';
import {
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
} from '../support/records.ts';

const amountLiteral = fc.oneof(
  fc.constantFrom(
    '0',
    '-0',
    '1',
    '-1',
    '1.5',
    '1.0',
    '1e3',
    '1E3',
    '"1e3"',
    '"100"',
    '1e12',
    '1000000000001',
    '1e400',
    '123456789012345678901234567890',
    '9007199254740993',
    'null',
    'true',
    '[]',
    '{}',
    '""',
  ),
  fc.integer({ min: -5, max: 5000 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
);
const currencyLiteral = fc.oneof(
  fc.constantFrom('"EUR"', '"eur"', '"USD"', '"XYZ"', '"EURO"', '"EU"', '""', '1', 'null', '["EUR"]'),
  fc.string({ unit: 'binary', maxLength: 5 }).map((s) => JSON.stringify(s)),
);
const externalLiteral = fc.oneof(
  fc.constantFrom(
    '""',
    '"ord-1"',
    '"ord-1"',
    '"a\\u0000b"',
    `"${'x'.repeat(257)}"`,
    `"${'é'.repeat(256)}"`,
    '7',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 12 }).map((s) => JSON.stringify(s)),
);
const metadataLiteral = fc.constantFrom(
  '{}',
  '{"a":1}',
  '[]',
  '"x"',
  'null',
  '{"n":1e400}',
  `{"a":"${'x'.repeat(8200)}"}`,
);

/** An object's text from optional members; sometimes a field twice, or one the schema does not know. */
const objectText = (members: Array<[string, string] | undefined>) =>
  `{${members
    .filter((m): m is [string, string] => m !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}`;

function expectHandled(res: ApiResponse, codes: readonly string[], label: string): void {
  expect(res.status, `${label} -> ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expectNoLeak(res.text);
  if (res.status >= 400)
    expect(codes, `${label} -> ${res.text.slice(0, 300)}`).toContain(
      (res.body as { error?: { code?: string } } | undefined)?.error?.code,
    );
}

const post = (path: string, text: string) =>
  rawRequest('POST', path, {
    headers: { 'api-key': TENANT_A.key, 'content-type': 'application/json' },
    body: text,
  }).then((res) => ({
    ...res,
    body: (() => {
      try {
        return JSON.parse(res.text);
      } catch {
        return undefined;
      }
    })(),
  }));

let campaignId: string;
let link: LinkBody;

beforeAll(async () => {
  campaignId = (await createCampaign({ name: 'hostile conversions', currency: 'EUR' })).id;
  link = await createLink(campaignId, { referrer_id: 'hostile-seller' });
  await createReferredUser(link.referral_code, 'hostile-buyer');
});

const linkCounters = async () => {
  const l = (await fetchLink(link.id)) as LinkBody & { total_conversions: number; total_revenue: number };
  return { conversions: l.total_conversions, revenue: l.total_revenue };
};

describe('hostile conversion bodies', () => {
  it('never a 5xx, only the contract 4xx, and the link counts exactly what was accepted', async () => {
    const before = await linkCounters();
    let accepted = 0;
    let revenue = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          amount: fc.option(amountLiteral, { nil: undefined }),
          currency: fc.option(currencyLiteral, { nil: undefined }),
          external: fc.option(externalLiteral, { nil: undefined }),
          metadata: fc.option(metadataLiteral, { nil: undefined }),
          user: fc.constantFrom('"hostile-buyer"', '"nobody"', '""', '5'),
          extra: fc.boolean(),
        }),
        async (b) => {
          const text = objectText([
            ['campaign_id', JSON.stringify(campaignId)],
            ['referred_user_id', b.user],
            b.amount === undefined ? undefined : ['amount', b.amount],
            b.currency === undefined ? undefined : ['currency', b.currency],
            b.external === undefined ? undefined : ['external_id', b.external],
            b.metadata === undefined ? undefined : ['metadata', b.metadata],
            b.extra ? ['amount_usd', '1'] : undefined,
          ]);
          const res = await post('/api/v1/conversion', text);
          expectHandled(
            res,
            [
              'validation_failed',
              'invalid_json',
              'currency_mismatch',
              'conversion_exists',
              'referred_user_not_found',
            ],
            text.slice(0, 200),
          );
          if (res.status === 201) {
            const amount = res.body.amount;
            expect(Number.isSafeInteger(amount) && amount >= 1 && amount <= MAX_CONVERSION_AMOUNT, text).toBe(
              true,
            );
            expect(res.body.currency).toBe('EUR');
            accepted += 1;
            revenue += amount;
          }
        },
      ),
      { numRuns: 120 },
    );
    expect(await linkCounters()).toEqual({
      conversions: before.conversions + accepted,
      revenue: before.revenue + revenue,
    });
  });
});

describe('hostile refund bodies', () => {
  it('never a 5xx, only the contract 4xx, and refunds add up exactly', async () => {
    const sale = await api('POST', '/api/v1/conversion', {
      body: { campaign_id: campaignId, referred_user_id: 'hostile-buyer', amount: 5000 },
    });
    expect(sale.status).toBe(201);
    const before = await linkCounters();
    let refunded = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          amountLiteral.map((a) => objectText([['amount', a]])),
          fc.constantFrom('', '{}', '[]', 'null', '{"amount":1,"amount":2}', '{"reason":"x"}', '{', '"x"'),
        ),
        async (text) => {
          const res = await post(`/api/v1/conversion/${sale.body.id}/refund`, text);
          expectHandled(
            res,
            ['validation_failed', 'invalid_json', 'refund_exceeds_amount'],
            text.slice(0, 200),
          );
          if (res.status === 200) {
            expect(res.body.refunded_amount).toBeGreaterThan(refunded);
            refunded = res.body.refunded_amount;
            expect(res.body.status).toBe(refunded === 5000 ? 'refunded' : 'partially_refunded');
          }
        },
      ),
      { numRuns: 80 },
    );
    const after = await api('GET', `/api/v1/conversion?id=${sale.body.id}`);
    expect(after.body.refunded_amount).toBe(refunded);
    expect(refunded).toBeLessThanOrEqual(5000);
    expect(await linkCounters()).toEqual({
      conversions: before.conversions,
      revenue: before.revenue - refunded,
    });
  });
});
