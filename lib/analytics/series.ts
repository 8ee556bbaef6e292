/**
 * Endpoint 16's answer from the stored points: one point per bucket of the range (zeros where
 * nothing was counted) and the totals. Pure.
 */
import type { SeriesPoint } from '../db/entities/analytics.ts';
import { addTypeCount, zeroCounts } from '../db/entities/analytics.ts';
import type { AnalyticsSeries } from '../domain/analytics-schemas.ts';
import { formatTimestamp, timestampOfIso } from '../domain/time.ts';
import type { SeriesRange } from './range.ts';

type Metrics = AnalyticsSeries['totals'];

function add(into: Metrics, point: SeriesPoint): void {
  into.visits += point.visits;
  into.unique_visits += point.unique_visits;
  into.bot_visits += point.bot_visits;
  into.referred_users += point.referred_users;
  into.actions += point.actions;
  into.conversions += point.conversions;
  into.revenue += point.revenue;
  for (const [type, n] of Object.entries(point.actions_by_type)) {
    addTypeCount(into.actions_by_type, type, n);
  }
}

export function seriesAnswer(
  campaignId: string,
  range: SeriesRange,
  points: readonly SeriesPoint[],
): AnalyticsSeries {
  const byBucket = new Map(points.map((p) => [p.bucket, p]));
  const totals = zeroCounts();
  // A week of hours is 169 points: built without a Date or a sort each where nothing needs one.
  const series = range.starts.map((start) => {
    const metrics = zeroCounts();
    const iso = start.toISOString();
    const point = byBucket.get(range.granularity === 'hour' ? iso.slice(0, 13) : iso.slice(0, 10));
    if (point) {
      add(metrics, point);
      add(totals, point);
      metrics.actions_by_type = byName(metrics.actions_by_type);
    }
    return { start: timestampOfIso(iso), ...metrics };
  });
  totals.actions_by_type = byName(totals.actions_by_type);
  return {
    campaign_id: campaignId,
    granularity: range.granularity,
    from: formatTimestamp(range.from),
    to: formatTimestamp(range.to),
    totals,
    series,
  };
}

/** Types in name order, whatever order the items held them in: the same answer every time. */
function byName(counts: Record<string, number>): Record<string, number> {
  const names = Object.keys(counts);
  if (names.length < 2) return counts;
  const sorted: Record<string, number> = {};
  for (const name of names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)))
    addTypeCount(sorted, name, counts[name]!);
  return sorted;
}
