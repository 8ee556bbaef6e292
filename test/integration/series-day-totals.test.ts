/**
 * Series items written before they kept their day's totals (hours only, or hours beside totals
 * that count only what came after the upgrade): the backfill (`npm run table:migrate`, and the
 * local stack's start) sets each total to its hours' sum, exactly, also while the rollup consumer
 * raises the same items and when two runs race; run again, it writes nothing. Run on a table of
 * its own in the run's DynamoDB Local.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import {
  dayPointFromItem,
  dayTotalAttribute,
  seriesAttribute,
  seriesKey,
  seriesPointsFromItem,
  seriesUpdate,
} from '../../lib/db/entities/analytics.ts';
import { backfillSeriesDayTotals, seriesDayTotalsKept } from '../../lib/db/migrations/series-day-totals.ts';
import { preparedTableOfItsOwn } from '../support/own-table.ts';

const key = (day: string, linkId?: number) =>
  seriesKey('acme', 'c-totals', linkId === undefined ? { kind: 'campaign' } : { kind: 'link', linkId }, day);

describe('series day totals, derived from the hours of items written before them', () => {
  const read = async (k: { PK: string; SK: string }) =>
    (await own.t.db.send(new GetCommand({ TableName: tableName, Key: k, ConsistentRead: true }))).Item!;

  const own = preparedTableOfItsOwn('series-totals', [
    // Hours only, actions by type among them.
    {
      ...key('2026-01-05'),
      type: 'analytics_series',
      '07v': 3,
      '07u': 2,
      '09v': 1,
      '07a': 2,
      '07t:purchase': 1,
      '09t:share': 1,
    },
    // Hours, and totals of what came after the upgrade (the consumer writes both): 5 visits before.
    {
      ...key('2026-01-06'),
      type: 'analytics_series',
      '07v': 4,
      '08v': 3,
      Dv: 2,
      '08a': 1,
      '08t:x.y z': 1,
      Dt: { 't:x.y z': 1 },
    },
    // Right already.
    { ...key('2026-01-07', 42), type: 'analytics_series', '01b': 2, Db: 2 },
  ]);
  const tableName = own.name;

  it("sets each day total to its hours' sum at the start of the local stack, and marks the table", async () => {
    expect(own.steps).toContain('analytics series: 2 day items given their day totals');
    for (const day of ['2026-01-05', '2026-01-06']) {
      const item = await read(key(day));
      expect(dayPointFromItem(item)).toEqual(seriesPointsFromItem(item, 'day')[0]);
    }
    expect(dayPointFromItem(await read(key('2026-01-05')))).toMatchObject({
      visits: 4,
      unique_visits: 2,
      actions: 2,
      actions_by_type: { purchase: 1, share: 1 },
    });
    expect(dayPointFromItem(await read(key('2026-01-06')))).toMatchObject({ visits: 7, actions: 1 });
    expect(await seriesDayTotalsKept(own.t.db, tableName)).toBe(true);
    expect(await backfillSeriesDayTotals(own.t.db, tableName)).toBe(0);
  });

  it('stays exact beside a consumer raising the same items, and with two runs at once', async () => {
    const day = '2026-02-01';
    const items = [key(day), key(day, 1), key(day, 2)];
    // Before the upgrade: hours only.
    for (const k of items)
      await own.t.db.send(
        new PutCommand({
          TableName: tableName,
          Item: { ...k, type: 'analytics_series', '03v': 100, '03t:buy': 7 },
        }),
      );
    // After it: the consumer raises hours and totals together, while two backfills run. Its
    // update as the consumer writes it, with either belief about the map of types; a wrong one
    // fails its condition and is turned, as the consumer does.
    const raise = async (k: { PK: string; SK: string }, i: number) => {
      const update = (typesMap: 'create' | 'add') =>
        seriesUpdate(
          [
            [seriesAttribute(i % 24, 'visits'), 1],
            [seriesAttribute(i % 24, { actionType: 'buy' }), 1],
          ],
          { totals: [[dayTotalAttribute('visits'), 1]], types: new Map([['buy', 1]]), typesMap },
        );
      for (let attempt = 0; ; attempt++) {
        const typesMap = attempt % 2 === 0 ? 'create' : 'add';
        try {
          return await own.t.db.send(
            new UpdateCommand({ TableName: tableName, Key: k, ...update(typesMap) }),
          );
        } catch (err) {
          if (!(err instanceof ConditionalCheckFailedException) || attempt > 5) throw err;
        }
      }
    };
    await Promise.all([
      ...Array.from({ length: 60 }, (_, i) => raise(items[i % 3]!, i)),
      backfillSeriesDayTotals(own.t.db, tableName),
      backfillSeriesDayTotals(own.t.db, tableName),
    ]);
    await backfillSeriesDayTotals(own.t.db, tableName);
    for (const k of items) {
      const item = await read(k);
      expect(dayPointFromItem(item)).toEqual(seriesPointsFromItem(item, 'day')[0]);
      expect(dayPointFromItem(item)).toMatchObject({ visits: 120, actions_by_type: { buy: 27 } });
    }
  });
});
