/**
 * Consumer of the webhook first-attempt queue (FIFO, one message per invocation): signs and POSTs
 * each new event to its campaign's webhook URL once; a failure, or a campaign whose endpoint is in
 * the slow lane, is handed to the retry lane. See `lib/webhooks/lanes.ts` and `deliver.ts`.
 */
import { deliveryDepsFromEnv, deliveryHandler } from '../../lib/webhooks/handler.ts';

export const handler = deliveryHandler('first-attempt', deliveryDepsFromEnv());
