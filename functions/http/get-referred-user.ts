import { getReferredUser } from '../../lib/db/referred-users.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetReferredUser } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(GetReferredUser, async ({ tenant, query }) => ({
  status: 200,
  body: await getReferredUser(tenant, query.campaign_id, query.referred_user_id),
}));
