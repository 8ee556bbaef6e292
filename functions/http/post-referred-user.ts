import { storedAnswer } from '../../lib/db/idempotency.ts';
import { createReferredUser } from '../../lib/db/referred-users.ts';
import { signupTargetOf } from '../../lib/domain/link-rules.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent, metricsMiddleware } from '../../lib/observability/metrics.ts';
import { CreateReferredUser } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...CreateReferredUser, storedAnswers: storedAnswer, metrics: metricsMiddleware() },
  async ({ tenant, body, idempotency }) => {
    const referredUser = await createReferredUser(
      tenant,
      signupTargetOf(body),
      body.referred_user_id,
      idempotency,
    );
    countEvent(BusinessMetric.SignupsRecorded);
    return { status: 201, body: referredUser };
  },
);
