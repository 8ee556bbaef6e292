/**
 * Reads of endpoints 16 and 17: each one request (a Query of the campaign's series items, or the
 * GetItem of one ranking's board) beside the campaign's existence check, whatever the campaign's
 * size. The items are the counting consumer's (`lib/analytics/`), keyed by `entities/analytics.ts`.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import { buildReferralLink } from '../domain/url.ts';
import { campaignExists } from './campaigns.ts';
import {
  addTypeCount,
  boardEntriesOf,
  boardKey,
  DAY_POINT_PROJECTION,
  dayPointFromItem,
  type Granularity,
  type Scope,
  type SeriesPoint,
  seriesKey,
  seriesPointsFromItem,
  type TopBy,
  type TopMetric,
  type TopRow,
  TYPES_ITEM_SUFFIX,
} from './entities/analytics.ts';
import { campaignKey } from './entities/campaign.ts';
import { db, tableName } from './table/client.ts';
import { queryAll } from './table/query.ts';

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
  // The last day's actions by type (the campaign's own series keeps them in an item of their
  // own, `seriesTypesKey`) sort right after it.
  const query = queryAll({
    KeyConditionExpression: 'PK = :pk AND SK BETWEEN :first AND :last',
    ExpressionAttributeValues: {
      ':pk': first.PK,
      ':first': first.SK,
      ':last': `${last.SK}${TYPES_ITEM_SUFFIX}`,
    },
    ...(byDay ? DAY_POINT_PROJECTION : {}),
  });
  const [exists, items] = await Promise.all([campaignExists(tenant, campaignId), query]);
  if (!exists) throw campaignNotFound(campaignId);
  return mergedByBucket(
    byDay ? items.map(dayPointFromItem) : items.flatMap((item) => seriesPointsFromItem(item, 'hour')),
  );
}

/** One point per bucket: a day's counts and its actions by type may come from two items. */
function mergedByBucket(points: SeriesPoint[]): SeriesPoint[] {
  const byBucket = new Map<string, SeriesPoint>();
  for (const point of points) {
    const into = byBucket.get(point.bucket);
    if (!into) {
      byBucket.set(point.bucket, point);
      continue;
    }
    into.visits += point.visits;
    into.unique_visits += point.unique_visits;
    into.bot_visits += point.bot_visits;
    into.referred_users += point.referred_users;
    into.actions += point.actions;
    for (const [type, n] of Object.entries(point.actions_by_type))
      addTypeCount(into.actions_by_type, type, n);
  }
  return [...byBucket.values()].sort((a, b) => (a.bucket < b.bucket ? -1 : a.bucket > b.bucket ? 1 : 0));
}

/**
 * The first `limit` entries of one ranking, highest first (ties: earliest reach first): its board
 * (`lib/analytics/boards.ts`), read beside the campaign, whose URL makes the links' `referral_link`.
 */
export async function readTop(
  tenant: string,
  campaignId: string,
  by: TopBy,
  metric: TopMetric,
  limit: number,
): Promise<TopRow[]> {
  const [campaign, board] = await Promise.all([
    db.send(
      new GetCommand({
        TableName: tableName,
        Key: campaignKey(tenant, campaignId),
        ConsistentRead: true,
        ProjectionExpression: '#url',
        ExpressionAttributeNames: { '#url': 'url' },
      }),
    ),
    db.send(new GetCommand({ TableName: tableName, Key: boardKey(tenant, campaignId, by, metric) })),
  ]);
  const url = campaign.Item?.url;
  if (typeof url !== 'string') throw campaignNotFound(campaignId);
  return boardEntriesOf(board.Item)
    .slice(0, limit)
    .map((e) =>
      by === 'referrer'
        ? { value: e.value, referrer_id: e.label }
        : {
            value: e.value,
            link_id: Number(e.k.slice(1)),
            referral_code: e.label,
            referral_link: buildReferralLink(url, e.label),
          },
    );
}
