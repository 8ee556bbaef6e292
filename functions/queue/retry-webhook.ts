/**
 * Consumer of the webhook retry queue (one message per invocation): every attempt after the first,
 * and the first attempts of endpoints in the slow lane. A failed attempt stays on the queue with
 * its visibility timeout set to the next retry delay (partial batch response). See
 * `lib/webhooks/lanes.ts` and `deliver.ts`.
 */
import { deliveryDepsFromEnv, deliveryHandler } from '../../lib/webhooks/handler.ts';

export const handler = deliveryHandler('retry', deliveryDepsFromEnv());
