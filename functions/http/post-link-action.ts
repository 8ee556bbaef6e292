import { createLinkAction } from '../../lib/db/actions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { linkTargetOf } from '../../lib/domain/link-rules.ts';
import { CreateLinkActionBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

export const handler = httpHandler(
  { body: CreateLinkActionBody, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const action = await createLinkAction(
      tenant,
      linkTargetOf(body),
      { actionType: body.action_type, metadata: body.metadata ?? {} },
      idempotency,
    );
    countEvent(BusinessMetric.ActionsRecorded);
    return { status: 201, body: action };
  },
);
