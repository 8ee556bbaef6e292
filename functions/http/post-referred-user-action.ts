import { createReferredUserAction } from '../../lib/db/actions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { CreateReferredUserAction } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...CreateReferredUserAction, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const action = await createReferredUserAction(
      tenant,
      {
        campaignId: body.campaign_id,
        referredUserId: body.referred_user_id,
        actionType: body.action_type,
        metadata: body.metadata ?? {},
      },
      idempotency,
    );
    return { status: 201, body: action };
  },
);
