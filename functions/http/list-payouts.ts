import { listPayouts } from '../../lib/db/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListPayouts } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListPayouts');

/** Endpoint 32: a campaign's payouts, newest first, all or one recipient's. */
export const handler = httpHandler(ListPayouts, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const { recipient_id } = query;
  const limit = limitOf(query);
  const page = await listPayouts(tenant, campaign_id, {
    recipientId: recipient_id,
    limit,
    cursor: query.cursor,
  });
  const filters: Record<string, string> = recipient_id !== undefined ? { recipient_id } : {};
  return listResult(page, { path: route.path, params: { campaign_id } }, limit, filters);
});
