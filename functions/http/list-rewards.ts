import { listRewards } from '../../lib/db/rewards.ts';
import type { RewardStatus } from '../../lib/domain/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListRewards } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListRewards');

/** Endpoint 27: a campaign's rewards, newest first, of one state or recipient, or all. */
export const handler = httpHandler(ListRewards, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const { status, recipient_id } = query;
  const limit = limitOf(query);
  const page = await listRewards(tenant, campaign_id, {
    // The query schema's pattern admits the five states only.
    status: status as RewardStatus | undefined,
    recipientId: recipient_id,
    limit,
    cursor: query.cursor,
  });
  const filters: Record<string, string> = {
    ...(status !== undefined ? { status } : {}),
    ...(recipient_id !== undefined ? { recipient_id } : {}),
  };
  return listResult(page, { path: route.path, params: { campaign_id } }, limit, filters);
});
