/**
 * Verify a received delivery the way a customer would, with the reference Standard Webhooks
 * package: the parsed body, or it throws `WebhookVerificationError`. For tests, the bench and
 * anything that receives our webhooks; no function imports it (what they sign is `sign.ts`).
 */
import { Webhook } from 'standardwebhooks';

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
