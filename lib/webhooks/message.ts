/**
 * The webhook queue's message: what the stream consumer (AWS) or the stream poller (local stack)
 * puts on the queue and what the delivery handler reads. It is the event-bearing item's event
 * attributes (`lib/domain/webhook-events.ts`), unmarshalled, so delivery needs nothing but the campaign's current
 * URL and secret.
 */
import { stringifyJson } from '../domain/json.ts';
import {
  type AnyWebhookEventType,
  type EventAttributes,
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../domain/webhook-events.ts';

export type WebhookMessage = EventAttributes;

const EVENT_TYPES: readonly WebhookEventType[] = WEBHOOK_EVENT_TYPES;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** JSON text of an object, or undefined: the event's data must be one. */
function objectJson(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return isObject(JSON.parse(value)) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The event's data as JSON text: `event_json`, or `event_data` as an object from items and
 * messages written before the data was stored as text (still in a queue or a stream at deploy).
 */
export function eventJsonOf(fields: Record<string, unknown>): string | undefined {
  if (fields.event_json !== undefined) return objectJson(fields.event_json);
  return isObject(fields.event_data) ? stringifyJson(fields.event_data) : undefined;
}

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
  const { event_id, event_type, event_time, tenant, campaign_id, redelivery } = value;
  const event_json = eventJsonOf(value);
  const missing = Object.entries({ event_id, event_time, tenant, campaign_id })
    .filter(([, v]) => !isText(v))
    .map(([k]) => k);
  if (!EVENT_TYPES.includes(event_type as WebhookEventType)) missing.push('event_type');
  if (event_json === undefined) missing.push('event_json');
  if (missing.length > 0) return { ok: false, error: `message lacks ${missing.join(', ')}` };
  return {
    ok: true,
    message: {
      event_id: event_id as string,
      event_type: event_type as WebhookEventType,
      event_time: event_time as string,
      tenant: tenant as string,
      campaign_id: campaign_id as string,
      event_json: event_json as string,
      ...(typeof redelivery === 'string' ? { redelivery } : {}),
    },
  };
}

/**
 * The contract's body, `{type, timestamp, campaign_id, data}`, as the text that is signed and sent.
 * `data` is spliced in as stored: parsing and serializing it again could only lose (a nesting too
 * deep for the native serializer) or change it.
 */
/** What a body is made of: an event of the feed, or the on-demand `webhook.test`. */
export type SignableMessage = Pick<
  WebhookMessage,
  'event_id' | 'event_time' | 'campaign_id' | 'event_json'
> & {
  event_type: AnyWebhookEventType;
};

export function webhookBodyText(message: SignableMessage): string {
  const head = JSON.stringify({
    type: message.event_type,
    timestamp: message.event_time,
    campaign_id: message.campaign_id,
  });
  return `${head.slice(0, -1)},"data":${message.event_json}}`;
}
