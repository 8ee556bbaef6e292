import { listLinks } from '../../lib/db/links.ts';
import { CampaignLinksPath, ListQuery } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { compileValidator } from '../../lib/http/validate.ts';
import { routeNamed } from '../../lib/routes.ts';

const validatePath = compileValidator(CampaignLinksPath);
const route = routeNamed('ListCampaignLinks');

export const handler = httpHandler({ query: ListQuery }, async ({ tenant, query, path }) => {
  const { campaign_id } = validatePath(path);
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { limit, cursor: query.cursor });
  return listResult(page, { path: route.path, params: { campaign_id } }, limit);
});
