/**
 * The webhook queue's message: what the stream consumer (AWS) or the stream poller (local stack)
 * puts on the queue and what the delivery handler reads. It is the event-bearing item's event
 * attributes (`events.ts`), unmarshalled, so delivery needs nothing but the campaign's current
 * URL and secret.
 */
import type { EventAttributes, WebhookBody, WebhookEventType } from './events.ts';

export type WebhookMessage = EventAttributes;

export const EVENT_TYPES: readonly WebhookEventType[] = ['action.created', 'referred_user.created'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The message's event, or the reason it is not one (the caller dead-letters it). */
export function parseWebhookMessage(
  body: string,
): { ok: true; message: WebhookMessage } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, error: 'message body is not JSON' };
  }
  if (!isObject(value)) return { ok: false, error: 'message body is not an object' };
  const { event_id, event_type, event_time, tenant, campaign_id, event_data } = value;
  const missing = Object.entries({ event_id, event_time, tenant, campaign_id })
    .filter(([, v]) => !isText(v))
    .map(([k]) => k);
  if (!EVENT_TYPES.includes(event_type as WebhookEventType)) missing.push('event_type');
  if (!isObject(event_data)) missing.push('event_data');
  if (missing.length > 0) return { ok: false, error: `message lacks ${missing.join(', ')}` };
  return {
    ok: true,
    message: {
      event_id: event_id as string,
      event_type: event_type as WebhookEventType,
      event_time: event_time as string,
      tenant: tenant as string,
      campaign_id: campaign_id as string,
      event_data: event_data as Record<string, unknown>,
    },
  };
}

/** The contract's body: `{type, timestamp, campaign_id, data}`. */
export function webhookBody(message: WebhookMessage): WebhookBody {
  return {
    type: message.event_type,
    timestamp: message.event_time,
    campaign_id: message.campaign_id,
    data: message.event_data,
  };
}
