import type { AttemptStatus } from '../../lib/db/webhook-attempts.ts';
import { listAttempts } from '../../lib/db/webhook-attempts.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListWebhookDeliveries } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListWebhookDeliveries');

export const handler = httpHandler(ListWebhookDeliveries, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const limit = limitOf(query);
  const status = query.status as AttemptStatus | undefined;
  const page = await listAttempts(tenant, campaign_id, { limit, cursor: query.cursor, status });
  return listResult(page, { path: route.path, params: { campaign_id } }, limit, status ? { status } : {});
});
