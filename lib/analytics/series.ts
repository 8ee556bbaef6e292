/**
 * Endpoint 16's answer from the stored points: one point per bucket of the range (zeros where
 * nothing was counted) and the totals. Pure.
 */
import type { SeriesPoint } from '../db/entities/analytics.ts';
import { bucketOf, zeroCounts } from '../db/entities/analytics.ts';
import type { AnalyticsSeries } from '../domain/analytics-schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import type { SeriesRange } from './range.ts';

type Metrics = AnalyticsSeries['totals'];

function add(into: Metrics, point: SeriesPoint): void {
  into.visits += point.visits;
  into.unique_visits += point.unique_visits;
  into.bot_visits += point.bot_visits;
  into.referred_users += point.referred_users;
  into.actions += point.actions;
  for (const [type, n] of Object.entries(point.actions_by_type)) {
    into.actions_by_type[type] = (into.actions_by_type[type] ?? 0) + n;
  }
}

export function seriesAnswer(
  campaignId: string,
  range: SeriesRange,
  points: readonly SeriesPoint[],
): AnalyticsSeries {
  const byBucket = new Map(points.map((p) => [p.bucket, p]));
  const totals = zeroCounts();
  const series = range.starts.map((start) => {
    const metrics = zeroCounts();
    const point = byBucket.get(bucketOf(start, range.granularity));
    if (point) {
      add(metrics, point);
      add(totals, point);
    }
    return { start: formatTimestamp(start), ...metrics };
  });
  // Types in name order, whatever order the items held them in: the same answer every time.
  for (const m of [totals, ...series])
    m.actions_by_type = Object.fromEntries(
      Object.entries(m.actions_by_type).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
  return {
    campaign_id: campaignId,
    granularity: range.granularity,
    from: formatTimestamp(range.from),
    to: formatTimestamp(range.to),
    totals,
    series,
  };
}
