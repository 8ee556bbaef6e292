/**
 * Reads of endpoints 16 and 17: each one Query (of the campaign's series items, or of one ranking
 * in GSI4) beside the campaign's existence check, whatever the campaign's size. The items are the
 * rollup consumer's (`lib/analytics/rollups.ts`), keyed by `entities/analytics.ts`.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import { campaignExists } from './campaigns.ts';
import { db, tableName } from './client.ts';
import {
  DAY_POINT_PROJECTION,
  dayPointFromItem,
  type Granularity,
  type Scope,
  type SeriesPoint,
  seriesKey,
  seriesPointsFromItem,
  TOP_INDEX,
  TOP_ROW_PROJECTION,
  type TopBy,
  type TopMetric,
  type TopRow,
  topRankingPartition,
  topRowFromItem,
} from './entities/analytics.ts';
import { queryAll } from './query.ts';

/**
 * The stored points of `scope` from bucket `from` to bucket `to` (only buckets with counts), oldest
 * first: the series items of the days from `from`'s to `to`'s, one per day, so hours outside the
 * range may come too (the caller picks its buckets).
 */
export async function readSeries(
  tenant: string,
  campaignId: string,
  scope: Scope,
  range: { granularity: Granularity; from: string; to: string },
): Promise<SeriesPoint[]> {
  const first = seriesKey(tenant, campaignId, scope, range.from.slice(0, 10));
  const last = seriesKey(tenant, campaignId, scope, range.to.slice(0, 10));
  // At most 401 items under 1 KB in all but the busiest campaigns: one page. By day, only the
  // days' totals are read.
  const byDay = range.granularity === 'day';
  const query = queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
    ExpressionAttributeValues: { ':pk': first.PK, ':first': first.SK, ':last': last.SK },
    ...(byDay ? DAY_POINT_PROJECTION : {}),
  });
  const [exists, items] = await Promise.all([campaignExists(tenant, campaignId), query]);
  if (!exists) throw campaignNotFound(campaignId);
  return byDay ? items.map(dayPointFromItem) : items.flatMap((item) => seriesPointsFromItem(item, 'hour'));
}

/** The first `limit` entries of one ranking, highest first (ties: earliest reach first). */
export async function readTop(
  tenant: string,
  campaignId: string,
  by: TopBy,
  metric: TopMetric,
  limit: number,
): Promise<TopRow[]> {
  const [exists, page] = await Promise.all([
    campaignExists(tenant, campaignId),
    db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: TOP_INDEX.indexName,
        KeyConditionExpression: `${TOP_INDEX.partitionKey} = :pk`,
        ExpressionAttributeValues: { ':pk': topRankingPartition(tenant, campaignId, by, metric) },
        ScanIndexForward: false,
        Limit: limit,
        ...TOP_ROW_PROJECTION,
      }),
    ),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  return (page.Items ?? []).map(topRowFromItem);
}
