/**
 * The range of an analytics series (endpoint 16): its defaults, its limits and one point per hour
 * or day, for any pair of times the contract allows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RANGE_MS, seriesRange } from '../../lib/analytics/range.ts';
import { seriesAnswer } from '../../lib/analytics/series.ts';
import type { SeriesMetric } from '../../lib/db/entities/analytics.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const time = fc.date({
  min: new Date('2000-01-01T00:00:00Z'),
  max: new Date('2099-12-31T00:00:00Z'),
  noInvalidDate: true,
});
const second = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return (err as ApiError).details?.[0]?.field;
  }
}

describe('seriesRange', () => {
  it('defaults: 30 days of days, 7 days of hours, up to now', () => {
    const now = new Date('2026-11-23T20:41:17Z');
    const days = seriesRange({}, now);
    expect(days.granularity).toBe('day');
    expect(days.starts).toHaveLength(31);
    expect(days.starts[0]).toEqual(new Date('2026-10-24T00:00:00Z'));
    expect(days.starts.at(-1)).toEqual(new Date('2026-11-23T00:00:00Z'));
    const hours = seriesRange({ granularity: 'hour' }, now);
    expect(hours.starts).toHaveLength(7 * 24 + 1);
    expect(hours.starts.at(-1)).toEqual(new Date('2026-11-23T20:00:00Z'));
  });

  it('any allowed range: one aligned point per step, from the point of `from` to the point of `to`', () => {
    fc.assert(
      fc.property(
        time,
        fc.constantFrom('hour', 'day') as fc.Arbitrary<'hour' | 'day'>,
        fc.double({ min: 0, max: 1, noNaN: true }),
        (start, g, f) => {
          const from = second(start);
          const to = second(new Date(from.getTime() + Math.floor(f * MAX_RANGE_MS[g])));
          const r = seriesRange({ granularity: g, from: formatTimestamp(from), to: formatTimestamp(to) });
          const step = g === 'hour' ? HOUR : DAY;
          expect(r.starts[0]!.getTime()).toBeLessThanOrEqual(from.getTime());
          expect(from.getTime() - r.starts[0]!.getTime()).toBeLessThan(step);
          const last = r.starts.at(-1)!.getTime();
          expect(last).toBeLessThanOrEqual(to.getTime());
          expect(to.getTime() - last).toBeLessThan(step);
          for (const [i, s] of r.starts.entries()) {
            expect(s.getTime() % step).toBe(0);
            if (i > 0) expect(s.getTime() - r.starts[i - 1]!.getTime()).toBe(step);
          }
          expect(r.starts.length).toBeLessThanOrEqual(g === 'hour' ? 7 * 24 + 1 : 401);
          // The answer has one point per start, zeros where nothing is stored.
          const answer = seriesAnswer('c', r, []);
          expect(answer.series.map((p) => p.start)).toEqual(r.starts.map(formatTimestamp));
          expect(answer.totals.visits).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a range over the limit, backwards, or a time that does not exist, naming the field', () => {
    expect(
      fieldOf(() =>
        seriesRange({ granularity: 'hour', from: '2026-01-01_00-00-00', to: '2026-01-08_00-00-01' }),
      ),
    ).toBe('from');
    expect(fieldOf(() => seriesRange({ from: '2025-01-01_00-00-00', to: '2026-02-05_00-00-01' }))).toBe(
      'from',
    );
    expect(fieldOf(() => seriesRange({ from: '2026-01-02_00-00-00', to: '2026-01-01_00-00-00' }))).toBe(
      'from',
    );
    expect(fieldOf(() => seriesRange({ to: '2026-02-29_00-00-00' }))).toBe('to');
    expect(fieldOf(() => seriesRange({ from: '2026-13-01_00-00-00' }))).toBe('from');
    expect(
      fieldOf(() =>
        seriesRange({ granularity: 'hour', from: '2026-01-01_00-00-00', to: '2026-01-08_00-00-00' }),
      ),
    ).toBeUndefined();
  });

  it('sums the stored points into the totals, actions by type in name order', () => {
    const r = seriesRange({ from: '2026-11-20_00-00-00', to: '2026-11-22_10-00-00' });
    const point = (bucket: string, n: number, types: Record<string, number>) => ({
      bucket,
      visits: n,
      unique_visits: n,
      bot_visits: 0,
      referred_users: 1,
      actions: Object.values(types).reduce((a, b) => a + b, 0),
      conversions: 0,
      revenue: 0,
      actions_by_type: types,
    });
    const a = seriesAnswer('c', r, [
      point('2026-11-20', 3, { zed: 1, alpha: 2 }),
      point('2026-11-22', 2, { zed: 4 }),
    ]);
    expect(a.series.map((p) => p.visits)).toEqual([3, 0, 2]);
    expect(a.totals).toEqual({
      visits: 5,
      unique_visits: 5,
      bot_visits: 0,
      referred_users: 2,
      actions: 7,
      conversions: 0,
      revenue: 0,
      actions_by_type: { alpha: 2, zed: 5 },
    });
    expect(Object.keys(a.totals.actions_by_type)).toEqual(['alpha', 'zed']);
  });
});

describe('a series item: one day of one scope, hour by hour', () => {
  const count = fc.oneof(
    fc.constantFrom('visits', 'unique_visits', 'bot_visits', 'referred_users', 'actions'),
    fc.record({
      actionType: fc.oneof(
        fc.string({ minLength: 1, maxLength: 64 }),
        // Names an object already has: counted as any other.
        fc.constantFrom('__proto__', 'constructor', 'valueOf', 'toString', 'hasOwnProperty'),
      ),
    }),
  );
  const counted = fc.array(
    fc.record({ hour: fc.integer({ min: 0, max: 23 }), count, n: fc.integer({ min: 1, max: 1000 }) }),
    { maxLength: 60 },
  );

  it('gives back per hour and per day exactly what was added to its attributes, whatever the action types', async () => {
    const { seriesAttribute, seriesKey, seriesPointsFromItem } = await import(
      '../../lib/db/entities/analytics.ts'
    );
    fc.assert(
      fc.property(counted, (adds) => {
        // As the consumer's UpdateItem builds it: `SET type ADD <attribute> n` per count.
        const item: Record<string, unknown> = {
          ...seriesKey('acme', 'c1', { kind: 'link', linkId: 7 }, '2026-11-24'),
          type: 'analytics_series',
        };
        const hours = new Map<string, Record<string, unknown>>();
        const zero = (): Record<SeriesMetric, number> => ({
          visits: 0,
          unique_visits: 0,
          bot_visits: 0,
          referred_users: 0,
          actions: 0,
          conversions: 0,
          revenue: 0,
        });
        const day = zero();
        let dayTypes: Record<string, number> = {};
        for (const { hour, count: c, n } of adds) {
          const name = seriesAttribute(hour, c);
          item[name] = ((item[name] as number | undefined) ?? 0) + n;
          const bucket = `2026-11-24T${String(hour).padStart(2, '0')}`;
          const h = hours.get(bucket) ?? { ...zero(), actions_by_type: {} as Record<string, number> };
          if (typeof c === 'string') {
            (h as Record<string, number>)[c] = ((h as Record<string, number>)[c] ?? 0) + n;
            day[c as SeriesMetric] += n;
          } else {
            // Own properties, whatever the name (`__proto__`, `valueOf`): built from entries.
            const t = new Map(Object.entries(h.actions_by_type as Record<string, number>));
            t.set(c.actionType, (t.get(c.actionType) ?? 0) + n);
            h.actions_by_type = Object.fromEntries(t);
            const d = new Map(Object.entries(dayTypes));
            d.set(c.actionType, (d.get(c.actionType) ?? 0) + n);
            dayTypes = Object.fromEntries(d);
          }
          hours.set(bucket, h);
        }
        const byHour = seriesPointsFromItem(item, 'hour');
        expect(byHour).toEqual(
          [...hours.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bucket, h]) => ({ bucket, ...h })),
        );
        expect(seriesPointsFromItem(item, 'day')).toEqual(
          adds.length === 0 ? [] : [{ bucket: '2026-11-24', ...day, actions_by_type: dayTypes }],
        );
      }),
    );
  });

  it("keeps the day's totals beside the hours: the backfill finds nothing to change in an item the consumer wrote", async () => {
    const { dayPointFromItem, dayTotalAttribute, seriesAttribute, seriesKey, seriesPointsFromItem } =
      await import('../../lib/db/entities/analytics.ts');
    const { dayTotalsUpdate } = await import('../../lib/db/migrations/series-day-totals.ts');
    fc.assert(
      fc.property(counted, fc.boolean(), (adds, upgraded) => {
        // As the consumer's update adds them: each count to its hour and to its day's total (or
        // to the day's map of types); before the upgrade, to its hour alone.
        const item: Record<string, unknown> = {
          ...seriesKey('acme', 'c1', { kind: 'campaign' }, '2026-11-24'),
          type: 'analytics_series',
        };
        let types: Record<string, number> = {};
        for (const { hour, count: c, n } of adds) {
          const name = seriesAttribute(hour, c);
          item[name] = ((item[name] as number | undefined) ?? 0) + n;
          if (!upgraded) continue;
          if (typeof c === 'string') {
            const total = dayTotalAttribute(c);
            item[total] = ((item[total] as number | undefined) ?? 0) + n;
          } else {
            const t = new Map(Object.entries(types));
            t.set(c.actionType, (t.get(c.actionType) ?? 0) + n);
            types = Object.fromEntries(t);
          }
        }
        if (Object.keys(types).length > 0)
          item.Dt = Object.fromEntries(Object.entries(types).map(([t, n]) => [`t:${t}`, n]));
        // The backfill reads `Dt` as a map of the item's own names, `__proto__` included.
        const fromHours = seriesPointsFromItem(item, 'day')[0];
        if (upgraded || adds.length === 0) {
          expect(dayTotalsUpdate(item)).toBeUndefined();
          if (fromHours) expect(dayPointFromItem(item)).toEqual(fromHours);
        } else expect(dayTotalsUpdate(item)).toBeDefined();
      }),
    );
  });

  it('refuses a day total or a map of types that is not made of numbers, by name', async () => {
    const { dayPointFromItem, seriesKey } = await import('../../lib/db/entities/analytics.ts');
    const key = seriesKey('acme', 'c1', { kind: 'campaign' }, '2026-11-24');
    expect(() => dayPointFromItem({ ...key, Dv: 'many' })).toThrow(/Dv/);
    expect(() => dayPointFromItem({ ...key, Dt: { 't:buy': 'x' } })).toThrow(/Dt\.t:buy/);
    expect(() => dayPointFromItem({ ...key, Dt: { buy: 2 } })).toThrow(/Dt\.buy/);
    expect(() => dayPointFromItem({ ...key, Dt: [1] })).toThrow(/Dt/);
    expect(dayPointFromItem({ ...key, Dv: 3, Dt: { 't:buy': 2 } })).toMatchObject({
      bucket: '2026-11-24',
      visits: 3,
      actions_by_type: { buy: 2 },
    });
  });

  it('refuses a count that is not a number, by name', async () => {
    const { seriesKey, seriesPointsFromItem } = await import('../../lib/db/entities/analytics.ts');
    const item = { ...seriesKey('acme', 'c1', { kind: 'campaign' }, '2026-11-24'), '07v': 'many' };
    expect(() => seriesPointsFromItem(item, 'day')).toThrow(/07v/);
  });
});
