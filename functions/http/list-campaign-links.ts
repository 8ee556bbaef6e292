import { listLinks } from '../../lib/db/links.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListCampaignLinks } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListCampaignLinks');

export const handler = httpHandler(ListCampaignLinks, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { limit, cursor: query.cursor });
  return listResult(page, { path: route.path, params: { campaign_id } }, limit);
});
