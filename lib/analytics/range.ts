/**
 * The range of an analytics series (endpoint 16): defaults, limits and its buckets. Pure.
 */
import { bucketOf, type Granularity } from '../db/entities/analytics.ts';
import { validationError } from '../domain/errors.ts';
import { formatTimestamp, parseTimestamp } from '../domain/time.ts';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
/** The longest range per granularity, and the default one (the contract: 30 days; hours allow 7). */
export const MAX_RANGE_MS: Record<Granularity, number> = { hour: 7 * DAY_MS, day: 400 * DAY_MS };
export const DEFAULT_RANGE_MS: Record<Granularity, number> = { hour: 7 * DAY_MS, day: 30 * DAY_MS };
const STEP_MS: Record<Granularity, number> = { hour: HOUR_MS, day: DAY_MS };

export interface SeriesRange {
  granularity: Granularity;
  from: Date;
  to: Date;
  /** Bucket starts, oldest first: one per point. */
  starts: Date[];
}

/** Start of the bucket `at` falls in. */
function floorTo(at: Date, granularity: Granularity): Date {
  const step = STEP_MS[granularity];
  return new Date(Math.floor(at.getTime() / step) * step);
}

export function seriesRange(
  query: { granularity?: string; from?: string; to?: string },
  now = new Date(),
): SeriesRange {
  const granularity: Granularity = query.granularity === 'hour' ? 'hour' : 'day';
  const to = query.to === undefined ? now : parseTimestamp(query.to);
  if (!to)
    throw validationError([{ field: 'to', message: 'must be a real UTC time as YYYY-MM-DD_HH-MM-SS' }]);
  const from =
    query.from === undefined
      ? new Date(to.getTime() - DEFAULT_RANGE_MS[granularity])
      : parseTimestamp(query.from);
  if (!from)
    throw validationError([{ field: 'from', message: 'must be a real UTC time as YYYY-MM-DD_HH-MM-SS' }]);
  if (from.getTime() > to.getTime())
    throw validationError([{ field: 'from', message: 'must not be after `to`' }]);
  if (to.getTime() - from.getTime() > MAX_RANGE_MS[granularity]) {
    const days = MAX_RANGE_MS[granularity] / DAY_MS;
    throw validationError([
      { field: 'from', message: `the range may span at most ${days} days with granularity=${granularity}` },
    ]);
  }
  const first = floorTo(from, granularity);
  const starts: Date[] = [];
  for (let t = first.getTime(); t <= to.getTime(); t += STEP_MS[granularity]) starts.push(new Date(t));
  return { granularity, from: first, to, starts };
}

export const bucketsOf = (range: SeriesRange) => range.starts.map((s) => bucketOf(s, range.granularity));
export { formatTimestamp };
