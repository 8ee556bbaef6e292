import { createLinkAction } from '../../lib/db/actions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { linkTargetOf } from '../../lib/domain/link-rules.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { CreateLinkAction } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...CreateLinkAction, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const action = await createLinkAction(
      tenant,
      linkTargetOf(body),
      { actionType: body.action_type, metadata: body.metadata ?? {} },
      idempotency,
    );
    return { status: 201, body: action };
  },
);
