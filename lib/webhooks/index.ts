/**
 * What other code (scripts, the benchmark, tools) may need from the webhook pipeline. Lambda
 * functions import the specific modules instead, to keep their bundles small.
 */
export {
  type AttemptResult,
  attemptDelivery,
  deliverFirstAttempts,
  deliverRetries,
  type WebhookTarget,
} from './deliver.ts';
export { type EventAttributes, eventAttributes, type WebhookBody, type WebhookEventType } from './events.ts';
export { parseWebhookMessage, type WebhookMessage, webhookBodyText } from './message.ts';
export {
  type ReceivedRequest,
  type Responder,
  startWebhookReceiver,
  type WebhookReceiver,
} from './receiver.ts';
export { DEFAULT_RETRY_DELAYS, nextDelaySeconds, parseRetryAfter, retryDelaysFrom } from './schedule.ts';
export { signDelivery, verifyDelivery } from './sign.ts';
export { blockedCategory, checkDestination, isBlockedAddress } from './ssrf.ts';
export { enqueueStreamRecords, messageFromStreamRecord } from './stream.ts';
