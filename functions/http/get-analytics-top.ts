import { readTop } from '../../lib/db/analytics.ts';
import type { TopBy, TopMetric } from '../../lib/db/entities/analytics.ts';
import type { TopList } from '../../lib/domain/analytics-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetAnalyticsTop } from '../../lib/operations/compiled.ts';

/** Endpoint 17: a campaign's all-time leaderboard of referrers or links by one metric. */
export const handler = httpHandler(GetAnalyticsTop, async ({ tenant, query, path }) => {
  const metric = (query.metric ?? 'referred_users') as TopMetric;
  const by = (query.by ?? 'referrer') as TopBy;
  const limit = query.limit === undefined ? 10 : Number(query.limit);
  const rows = await readTop(tenant, path.campaign_id, by, metric, limit);
  const body: TopList = rows.map((row, i) =>
    row.referrer_id !== undefined
      ? { rank: i + 1, referrer_id: row.referrer_id, value: row.value }
      : {
          rank: i + 1,
          referral_link: row.referral_link ?? null,
          referral_link_id: row.link_id!,
          referral_code: row.referral_code!,
          value: row.value,
        },
  );
  return { status: 200, body };
});
