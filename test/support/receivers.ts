/**
 * Webhook receivers for a test file, closed when it ends. Apart from `tools/webhook-receiver.ts`
 * so that the bench, which uses the receiver outside vitest, does not import vitest.
 */
import { afterAll } from 'vitest';
import { type Responder, startWebhookReceiver, type WebhookReceiver } from '../../tools/webhook-receiver.ts';

/**
 * A `receiver(respond?)` for a test file (or a `describe`, where it is called): each receiver it
 * starts is closed by the `afterAll` it registers there.
 */
export function receiversClosedAfterAll(): (respond?: Responder) => Promise<WebhookReceiver> {
  const started: WebhookReceiver[] = [];
  afterAll(async () => {
    await Promise.all(started.map((r) => r.close()));
  });
  return async (respond) => {
    const rx = await startWebhookReceiver(respond);
    started.push(rx);
    return rx;
  };
}
