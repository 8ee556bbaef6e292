import { config } from '../../lib/config.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { TestWebhook } from '../../lib/operations/compiled.ts';
import { sendTestEvent } from '../../lib/webhooks/test-event.ts';

const policy = { allowPrivate: config.allowPrivateWebhooks };

export const handler = httpHandler(
  { ...TestWebhook, storedAnswers: storedAnswer },
  async ({ tenant, query, idempotency }) => ({
    status: 200,
    body: await sendTestEvent(tenant, query.id, policy, new Date(), idempotency),
  }),
);
