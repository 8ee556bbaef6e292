import { createLinkAction } from '../../lib/db/actions.ts';
import { linkTargetOf } from '../../lib/domain/link-rules.ts';
import { CreateLinkActionBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

export const handler = httpHandler({ body: CreateLinkActionBody }, async ({ tenant, body }) => {
  const action = await createLinkAction(tenant, linkTargetOf(body), {
    actionType: body.action_type,
    metadata: body.metadata ?? {},
  });
  countEvent(BusinessMetric.ActionsRecorded);
  return { status: 201, body: action };
});
