import { createReferredUserAction } from '../../lib/db/actions.ts';
import { checkMetadata } from '../../lib/domain/link-rules.ts';
import { CreateUserActionBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler({ body: CreateUserActionBody }, async ({ tenant, body }) => ({
  status: 201,
  body: await createReferredUserAction(tenant, {
    campaignId: body.campaign_id,
    referredUserId: body.referred_user_id,
    actionType: body.action_type,
    metadata: checkMetadata(body.metadata),
  }),
}));
