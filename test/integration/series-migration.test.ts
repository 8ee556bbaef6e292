/**
 * A table whose analytics series were written an item per hour (`AN#H#`) and per day (`AN#D#`),
 * as before the series became one item per day: the migration (`npm run table:migrate`, and the
 * local stack's start, `prepareLocalTable`) moves every hour's counts into its day item exactly
 * once, also beside counts the consumer already wrote there in the new layout, also when two runs
 * race, and deletes the old items. Run on a table of its own (`support/own-table.ts`).
 */
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { seriesKey, seriesPointsFromItem } from '../../lib/db/entities/analytics.ts';
import { campaignPartition } from '../../lib/db/entities/campaign.ts';
import { migrateSeriesItems, seriesLayoutMigrated } from '../../lib/db/migrations/series-migration.ts';
import { preparedTableOfItsOwn } from '../support/own-table.ts';

const pk = campaignPartition('acme', 'c-old');

/** An hour or day item as the old layout wrote it: its counts under their metric names. */
const oldItem = (sk: string, counts: Record<string, number>) => ({
  PK: pk,
  SK: sk,
  type: 'analytics_series',
  ...counts,
});

describe('analytics series written an item per hour and per day, moved into day items', () => {
  const own = preparedTableOfItsOwn('series-migration', [
    oldItem('AN#H#C#2026-01-05T07', { visits: 3, unique_visits: 2, actions: 1, 't:purchase': 1 }),
    oldItem('AN#H#C#2026-01-05T09', { visits: 1 }),
    oldItem('AN#H#L42#2026-01-05T07', { visits: 3, unique_visits: 2 }),
    oldItem('AN#D#C#2026-01-05', { visits: 4, unique_visits: 2, actions: 1, 't:purchase': 1 }),
    oldItem('AN#D#L42#2026-01-05', { visits: 3, unique_visits: 2 }),
    // The consumer's first counts in the new layout, the same day: the move adds to them.
    {
      ...seriesKey('acme', 'c-old', { kind: 'campaign' }, '2026-01-05'),
      type: 'analytics_series',
      '07v': 10,
    },
  ]);
  const tableName = own.name;

  const series = async () =>
    (
      await own.t.db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk AND begins_with(SK, :an)',
          ExpressionAttributeValues: { ':pk': pk, ':an': 'AN#' },
          ConsistentRead: true,
        }),
      )
    ).Items ?? [];

  it("moves each hour into its day item, beside the new layout's counts, and deletes the old items", async () => {
    expect(own.steps).toContain(
      'analytics series: 3 hour items moved into their day items, 2 old day items deleted',
    );
    const items = await series();
    expect(items.map((i) => i.SK).sort()).toEqual(['AN#S#C#2026-01-05', 'AN#S#L42#2026-01-05']);
    const campaign = items.find((i) => i.SK === 'AN#S#C#2026-01-05')!;
    expect(seriesPointsFromItem(campaign, 'hour')).toEqual([
      {
        bucket: '2026-01-05T07',
        visits: 13,
        unique_visits: 2,
        bot_visits: 0,
        referred_users: 0,
        actions: 1,
        conversions: 0,
        revenue: 0,
        actions_by_type: { purchase: 1 },
      },
      {
        bucket: '2026-01-05T09',
        visits: 1,
        unique_visits: 0,
        bot_visits: 0,
        referred_users: 0,
        actions: 0,
        conversions: 0,
        revenue: 0,
        actions_by_type: {},
      },
    ]);
    const link = items.find((i) => i.SK === 'AN#S#L42#2026-01-05')!;
    expect(seriesPointsFromItem(link, 'day')).toMatchObject([
      { bucket: '2026-01-05', visits: 3, unique_visits: 2 },
    ]);
    expect(await seriesLayoutMigrated(own.t.db, tableName)).toBe(true);
  });

  it('changes nothing when run again, and two runs at once move each hour once', async () => {
    expect(await migrateSeriesItems(own.t.db, tableName)).toEqual({ hours: 0, days: 0 });
    const hours = Array.from({ length: 24 }, (_, h) =>
      oldItem(`AN#H#C#2026-01-06T${String(h).padStart(2, '0')}`, { visits: h + 1 }),
    );
    for (const Item of hours) await own.t.db.send(new PutCommand({ TableName: tableName, Item }));
    const [a, b] = await Promise.all([
      migrateSeriesItems(own.t.db, tableName),
      migrateSeriesItems(own.t.db, tableName),
    ]);
    expect(a.hours + b.hours).toBe(24);
    const day = (await series()).find((i) => i.SK === 'AN#S#C#2026-01-06')!;
    expect(seriesPointsFromItem(day, 'day')[0]!.visits).toBe((24 * 25) / 2);
    expect((await series()).filter((i) => String(i.SK).startsWith('AN#H#'))).toEqual([]);
  });
});
