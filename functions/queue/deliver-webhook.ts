/**
 * Consumer of the webhook first-attempt queue (FIFO, one message per invocation): signs and POSTs
 * each new event to its campaign's webhook URL once; a failure, or a campaign whose endpoint is in
 * the slow lane, is handed to the retry lane. See `lib/webhooks/lanes.ts` and `deliver.ts`.
 */
import { deliveryDepsFromEnv, deliveryHandler } from '../../lib/webhooks/handler.ts';

/**
 * Exported for the bench alone (`scripts/bench/webhooks.ts`), which runs this module in its own
 * process and takes `recordAttempt` away for a while to time deliveries without the attempt log.
 */
export const deps = deliveryDepsFromEnv();

export const handler = deliveryHandler('first-attempt', deps);
