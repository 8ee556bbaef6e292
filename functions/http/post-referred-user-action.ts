import { createReferredUserAction } from '../../lib/db/actions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { CreateUserActionBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

export const handler = httpHandler(
  { body: CreateUserActionBody, storedAnswers: storedAnswer },
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
    countEvent(BusinessMetric.ActionsRecorded);
    return { status: 201, body: action };
  },
);
