import { listFeed } from '../../lib/db/webhook-events.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListEvents } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListEvents');

export const handler = httpHandler(ListEvents, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const limit = limitOf(query);
  const page = await listFeed(tenant, campaign_id, { limit, cursor: query.cursor });
  const result = listResult(page, { path: route.path, params: { campaign_id } }, limit);
  return { ...result, headers: { ...result.headers, 'x-poll-cursor': page.pollCursor } };
});
