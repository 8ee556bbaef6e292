import { createLinkAction } from '../../lib/db/actions.ts';
import { checkMetadata, linkTargetOf } from '../../lib/domain/link-rules.ts';
import { CreateLinkActionBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler({ body: CreateLinkActionBody }, async ({ tenant, body }) => ({
  status: 201,
  body: await createLinkAction(tenant, linkTargetOf(body), {
    actionType: body.action_type,
    metadata: checkMetadata(body.metadata),
  }),
}));
