/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), through the reference
 * `standardwebhooks` package so that what we send is exactly what its `verify` accepts.
 */
import { Webhook } from 'standardwebhooks';
import { type SignableMessage, webhookBodyText } from './message.ts';

interface SignedDelivery {
  /** Serialised once per attempt: the bytes signed are the bytes sent. */
  body: string;
  headers: {
    'content-type': 'application/json';
    'webhook-id': string;
    'webhook-timestamp': string;
    'webhook-signature': string;
  };
}

/**
 * Headers and body of one delivery attempt. `webhook-id` is the event id, the same on every
 * retry (the consumer's dedupe key); `webhook-timestamp` is the attempt's time, so a retry is
 * never rejected as stale by the receiver's replay window.
 */
export function signDelivery(
  message: SignableMessage,
  secret: string | readonly string[],
  now = new Date(),
): SignedDelivery {
  const body = webhookBodyText(message);
  // After a rotation, one signature per secret, space-separated (Standard Webhooks): a receiver
  // verifying with either the old or the new secret accepts the delivery.
  const secrets = typeof secret === 'string' ? [secret] : secret;
  const signature = secrets.map((s) => new Webhook(s).sign(message.event_id, now, body)).join(' ');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': message.event_id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    },
  };
}

/**
 * Verify a received delivery the way a customer would; returns the parsed body or throws
 * `WebhookVerificationError`. For tests, the bench and anything that receives our webhooks.
 */
export function verifyDelivery(
  secret: string,
  body: string,
  headers: Record<string, string | string[] | undefined>,
): unknown {
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  return new Webhook(secret).verify(body, flat);
}
