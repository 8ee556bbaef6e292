import { storedAnswer } from '../../lib/db/idempotency.ts';
import { getStoredEvent, requestRedelivery } from '../../lib/db/webhook-events.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { RedeliverEvent } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...RedeliverEvent, storedAnswers: storedAnswer },
  async ({ tenant, path, idempotency }) => {
    const event = await getStoredEvent(tenant, path.event_id);
    const body = { event_id: event.event_id, status: 'queued' as const };
    await requestRedelivery(event, idempotency && { request: idempotency, body });
    return { status: 202, body };
  },
);
