import { getReferredUser } from '../../lib/db/referred-users.ts';
import { GetReferredUserQuery } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler(
  { requiredQuery: ['campaign_id', 'referred_user_id'], query: GetReferredUserQuery },
  async ({ tenant, query }) => ({
    status: 200,
    body: await getReferredUser(tenant, query.campaign_id, query.referred_user_id),
  }),
);
