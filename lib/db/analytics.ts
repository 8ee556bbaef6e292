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
  type Granularity,
  type Scope,
  type SeriesPoint,
  seriesKey,
  seriesPointFromItem,
  TOP_INDEX,
  type TopBy,
  type TopMetric,
  type TopRow,
  topRankingPartition,
  topRowFromItem,
} from './entities/analytics.ts';

/** The stored points of `scope` from bucket `from` to bucket `to` (only buckets with counts), oldest first. */
export async function readSeries(
  tenant: string,
  campaignId: string,
  scope: Scope,
  range: { granularity: Granularity; from: string; to: string },
): Promise<SeriesPoint[]> {
  const first = seriesKey(tenant, campaignId, scope, range.granularity, range.from);
  const last = seriesKey(tenant, campaignId, scope, range.granularity, range.to);
  const points: SeriesPoint[] = [];
  const query = async () => {
    // At most 401 small items (a few hundred bytes each): one page. The loop only guards the 1 MB limit.
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(
        new QueryCommand({
          TableName: tableName,
          KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
          ExpressionAttributeValues: { ':pk': first.PK, ':first': first.SK, ':last': last.SK },
          ExclusiveStartKey: start,
        }),
      );
      points.push(...(page.Items ?? []).map(seriesPointFromItem));
      start = page.LastEvaluatedKey;
    } while (start);
  };
  const [exists] = await Promise.all([campaignExists(tenant, campaignId), query()]);
  if (!exists) throw campaignNotFound(campaignId);
  return points;
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
      }),
    ),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  return (page.Items ?? []).map(topRowFromItem);
}
