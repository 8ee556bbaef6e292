import { listLinks } from '../../lib/db/links.ts';
import { ListQuery, ReferrerLinksPath } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { compileValidator } from '../../lib/http/validate.ts';
import { routeNamed } from '../../lib/routes.ts';

const validatePath = compileValidator(ReferrerLinksPath);
const route = routeNamed('ListReferrerLinks');

export const handler = httpHandler({ query: ListQuery }, async ({ tenant, query, path }) => {
  const { campaign_id, referrer_id } = validatePath(path);
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { referrerId: referrer_id, limit, cursor: query.cursor });
  return listResult(page, { path: route.path, params: { campaign_id, referrer_id } }, limit);
});
