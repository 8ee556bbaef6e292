import { listCampaigns } from '../../lib/db/campaigns.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListCampaigns } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListCampaigns');

export const handler = httpHandler(ListCampaigns, async ({ tenant, query }) => {
  const limit = limitOf(query);
  const page = await listCampaigns(tenant, { limit, cursor: query.cursor });
  return listResult(page, { path: route.path, params: {} }, limit);
});
