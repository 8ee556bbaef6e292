import { bucketsOf, seriesRange } from '../../lib/analytics/range.ts';
import { seriesAnswer } from '../../lib/analytics/series.ts';
import { readSeries } from '../../lib/db/analytics.ts';
import type { Scope } from '../../lib/db/entities/analytics.ts';
import { validationError } from '../../lib/domain/errors.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetAnalytics } from '../../lib/operations/compiled.ts';

/** Endpoint 16: a campaign's (or one link's, or one referrer's) metrics per hour or day. */
export const handler = httpHandler(GetAnalytics, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  if (query.referral_link_id !== undefined && query.referrer_id !== undefined) {
    throw validationError([
      { field: 'referrer_id', message: 'give at most one of referral_link_id and referrer_id' },
    ]);
  }
  const range = seriesRange(query);
  const scope: Scope =
    query.referral_link_id !== undefined
      ? { kind: 'link', linkId: Number(query.referral_link_id) }
      : query.referrer_id !== undefined
        ? { kind: 'referrer', referrerId: query.referrer_id }
        : { kind: 'campaign' };
  const buckets = bucketsOf(range);
  const points = await readSeries(tenant, campaign_id, scope, {
    granularity: range.granularity,
    from: buckets[0]!,
    to: buckets[buckets.length - 1]!,
  });
  return { status: 200, body: seriesAnswer(campaign_id, range, points) };
});
