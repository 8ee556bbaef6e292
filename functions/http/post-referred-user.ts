import { storedAnswer } from '../../lib/db/idempotency.ts';
import { createReferredUser } from '../../lib/db/referred-users.ts';
import { linkTargetOf } from '../../lib/domain/link-rules.ts';
import { CreateReferredUserBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

export const handler = httpHandler(
  { body: CreateReferredUserBody, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const referredUser = await createReferredUser(
      tenant,
      linkTargetOf(body),
      body.referred_user_id,
      idempotency,
    );
    countEvent(BusinessMetric.SignupsRecorded);
    return { status: 201, body: referredUser };
  },
);
