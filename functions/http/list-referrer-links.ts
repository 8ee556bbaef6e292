import { listLinks } from '../../lib/db/links.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListReferrerLinks } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListReferrerLinks');

export const handler = httpHandler(ListReferrerLinks, async ({ tenant, query, path }) => {
  const { campaign_id, referrer_id } = path;
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { referrerId: referrer_id, limit, cursor: query.cursor });
  return listResult(page, { path: route.path, params: { campaign_id, referrer_id } }, limit);
});
