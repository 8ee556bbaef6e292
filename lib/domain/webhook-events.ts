/**
 * Event-bearing items: the contract between the writers (link, referred user and action writes)
 * and the webhook pipeline (table stream -> queue -> delivery). Pure data, in the domain layer so
 * that the writers (`lib/db`) and the pipeline (`lib/webhooks`) share it without importing each other.
 *
 * Every item that should produce a webhook carries these attributes, written in the SAME
 * write as the record itself. The stream therefore holds an event if and only if the record was
 * committed, and the pipeline selects event items by `event_type` on INSERT. (An action of a
 * referred user is committed on its link's item first; the stream consumer then writes its
 * action item, these attributes included: see `lib/db/actions.ts`.)
 */
import { stringifyJson } from './json.ts';

export type WebhookEventType = 'action.created' | 'referred_user.created';

export interface EventAttributes {
  /** Stable, unique per event: becomes the Standard Webhooks `webhook-id` (dedupe key). */
  event_id: string;
  event_type: WebhookEventType;
  /** ISO-8601 UTC time of the event, the body's `timestamp`. */
  event_time: string;
  /**
   * The API object returned by the write (action or referred user), the body's `data`, as JSON
   * text: metadata in it is any JSON the client sent, which a DynamoDB map could not always hold
   * (numbers past 38 digits or 1e125, nesting past 32 levels), and the delivery sends these bytes.
   */
  event_json: string;
  tenant: string;
  campaign_id: string;
}

/** The webhook body, per the contract. */
export interface WebhookBody {
  type: WebhookEventType;
  timestamp: string;
  campaign_id: string;
  data: Record<string, unknown>;
}

export function eventAttributes(
  type: WebhookEventType,
  id: number,
  tenant: string,
  campaignId: string,
  data: Record<string, unknown>,
  now = new Date(),
): EventAttributes {
  const kind = type === 'action.created' ? 'action' : 'referred_user';
  return {
    event_id: `evt_${kind}_${id}`,
    event_type: type,
    event_time: now.toISOString(),
    event_json: stringifyJson(data),
    tenant,
    campaign_id: campaignId,
  };
}
