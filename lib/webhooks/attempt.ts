/**
 * One delivery attempt: check the destination (SSRF rules), sign, POST. Apart from `deliver.ts`
 * (the lanes, which need SQS) so that the API's test event bundles no SQS client.
 */

import { postWebhook } from './http.ts';
import type { SignableMessage } from './message.ts';
import { parseRetryAfter } from './schedule.ts';
import { signDelivery } from './sign.ts';
import { checkDestination, type Resolver } from './ssrf.ts';

export interface WebhookTarget {
  url: string;
  secret: string;
  /** Every secret to sign with (the current one, and a rotated-out one for 24 h); `[secret]` when absent. */
  secrets?: readonly string[];
  /** The campaign's endpoint (this URL) is in the slow lane. */
  slowLane?: boolean;
  /** The event types the campaign has subscribed to; all when absent. */
  events?: readonly string[];
  /** The webhook is disabled: nothing is sent (the events stay in the feed). */
  disabled?: boolean;
  /** Since when (ISO) this URL has failed every attempt; absent when its last attempt succeeded. */
  failingSince?: string;
}

export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone' }
  | { outcome: 'failed'; error: string; status?: number; retryAfterSeconds?: number };

/** Sign and POST one event to one target: the single attempt, usable on its own (bench, tools). */
export async function attemptDelivery(
  message: SignableMessage,
  target: WebhookTarget,
  options: { allowPrivate: boolean; resolve?: Resolver; timeoutMs?: number; now?: Date },
): Promise<AttemptResult> {
  const destination = await checkDestination(target.url, options);
  if (!destination.ok) return { outcome: 'failed', error: `destination refused: ${destination.message}` };
  const signed = signDelivery(message, target.secrets ?? target.secret, options.now ?? new Date());
  const result = await postWebhook(destination, signed.headers, signed.body, options.timeoutMs);
  if (result.kind === 'error') return { outcome: 'failed', error: result.error };
  const { status } = result;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone' };
  const error = status >= 300 && status < 400 ? `HTTP ${status} redirect (not followed)` : `HTTP ${status}`;
  const retryAfterSeconds = status === 429 || status === 503 ? parseRetryAfter(result.retryAfter) : undefined;
  return { outcome: 'failed', error, status, retryAfterSeconds };
}
