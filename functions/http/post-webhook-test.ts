import { config } from '../../lib/config.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { TestWebhook } from '../../lib/operations/compiled.ts';
import { sendTestEvent } from '../../lib/webhooks/test-event.ts';

const policy = { allowPrivate: config.allowPrivateWebhooks };

// No stored answers: a test writes nothing but its log line, and each call sends one test event,
// so an Idempotency-Key is ignored here.
export const handler = httpHandler(TestWebhook, async ({ tenant, query }) => ({
  status: 200,
  body: await sendTestEvent(tenant, query.id, policy),
}));
