import { rotateWebhookSecret } from '../../lib/db/campaigns.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { RotateWebhookSecret } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...RotateWebhookSecret, storedAnswers: storedAnswer },
  async ({ tenant, query, idempotency }) => ({
    status: 200,
    body: await rotateWebhookSecret(tenant, query.id, idempotency),
  }),
);
