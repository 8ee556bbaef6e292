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

export type WebhookEventType =
  | 'action.created'
  | 'referred_user.created'
  | 'conversion.created'
  | 'conversion.refunded'
  | RewardEventType;

/**
 * A reward's events: each names the state the reward (or adjustment) entered, in the write that
 * made the change (`lib/db/entities/reward.ts`): `in_review` is `reward.flagged`, `pending`
 * `reward.created` (at creation, or out of review by approve), then `reward.approved`,
 * `reward.paid`, `reward.voided`.
 */
export type RewardEventType =
  | 'reward.created'
  | 'reward.approved'
  | 'reward.voided'
  | 'reward.paid'
  | 'reward.flagged';

/** The event types a campaign can subscribe to (`webhook_events`), in the order the API lists them. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'action.created',
  'referred_user.created',
  'conversion.created',
  'conversion.refunded',
  'reward.created',
  'reward.approved',
  'reward.voided',
  'reward.paid',
  'reward.flagged',
];

export const isWebhookEventType = (t: unknown): t is WebhookEventType =>
  typeof t === 'string' && (WEBHOOK_EVENT_TYPES as readonly string[]).includes(t);

/** Sent only on demand (`POST /api/v1/campaign/webhook_test`): never in the feed, never retried. */
export const TEST_EVENT_TYPE = 'webhook.test';
export type AnyWebhookEventType = WebhookEventType | typeof TEST_EVENT_TYPE;

/** Days the events feed and the delivery log keep an item (DynamoDB TTL). */
export const WEBHOOK_HISTORY_DAYS = 30;
export const WEBHOOK_HISTORY_SECONDS = WEBHOOK_HISTORY_DAYS * 24 * 60 * 60;

/** How long deliveries also carry the signature of the secret replaced by a rotation. */
export const PREVIOUS_SECRET_SECONDS = 24 * 60 * 60;

/** A URL that failed every attempt this long is disabled (unless `WEBHOOK_DISABLE_AFTER_SECONDS`). */
export const DISABLE_AFTER_SECONDS = 3 * 24 * 60 * 60;

/** Whether a campaign's webhook sends an event of `type` now: enabled, and subscribed to the type. */
export const webhookSends = (target: { disabled?: boolean; events?: readonly string[] }, type: string) =>
  !target.disabled && (target.events === undefined || target.events.includes(type));

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
  /**
   * Set only on a redelivery request (`POST /api/v1/events/{id}/redeliver`): a fresh attempt of a
   * past event, not a new event. It keeps the event out of the feed and makes the first-attempt
   * queue's deduplication id differ from the event's own.
   */
  redelivery?: string;
}

/** The webhook body, per the contract. */
export interface WebhookBody {
  type: WebhookEventType;
  timestamp: string;
  campaign_id: string;
  data: Record<string, unknown>;
}

/**
 * An action's event id: `evt_action_<action id>_<campaign id>`. With the campaign in it, a
 * redelivery reads the action item itself by key, so an action's event needs no lookup item of its
 * own (1 WRU per visit and per action). A referred user's event, `evt_referred_user_<id>`, and an
 * action's written before this form (`evt_action_<id>`) are found through their lookup item.
 */
export const actionEventId = (actionId: number, campaignId: string) =>
  `evt_action_${actionId}_${campaignId.toLowerCase()}`;
const ACTION_EVENT_ID =
  /^evt_action_([1-9][0-9]{0,15})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The action and campaign an action's event id names, or undefined for an id of another form. */
export function parseActionEventId(eventId: string): { actionId: number; campaignId: string } | undefined {
  const m = ACTION_EVENT_ID.exec(eventId);
  return m ? { actionId: Number(m[1]), campaignId: m[2]! } : undefined;
}

/** Whether an event is found by id through a lookup item (else through its action item). */
export const hasLookupItem = (eventId: string) => parseActionEventId(eventId) === undefined;

export function eventAttributes(
  type: 'action.created' | 'referred_user.created',
  id: number,
  tenant: string,
  campaignId: string,
  data: Record<string, unknown>,
  now = new Date(),
): EventAttributes {
  const eventId = type === 'action.created' ? actionEventId(id, campaignId) : `evt_referred_user_${id}`;
  return eventAttributesWithId(type, eventId, tenant, campaignId, data, now);
}

/**
 * A conversion's events: `evt_conversion_<conversion id>` for its creation and
 * `evt_refund_<conversion id>_<refund number>` for each refund (the conversion id already names
 * the campaign, so each is unique in the tenant). Found by id through their lookup items, which
 * the feed writes, like a signup's.
 */
export const conversionEventId = (conversionId: string, refundNumber?: number) =>
  refundNumber === undefined
    ? `evt_conversion_${conversionId}`
    : `evt_refund_${conversionId}_${refundNumber}`;

/**
 * A reward's event for entering `status`: a reward enters each state at most once (the states
 * form no cycle), so the reward and the state name the event, and a replayed or retried write
 * of the same change carries the same id (the receivers' and the feed's dedupe key).
 */
export const rewardEventId = (rewardId: string, status: string) => `evt_reward_${status}_${rewardId}`;

const REWARD_EVENT_OF_STATUS: Record<string, RewardEventType> = {
  in_review: 'reward.flagged',
  pending: 'reward.created',
  approved: 'reward.approved',
  paid: 'reward.paid',
  voided: 'reward.voided',
};

/** The event of a reward entering `status`. */
export function rewardEventType(status: string): RewardEventType {
  const type = REWARD_EVENT_OF_STATUS[status];
  if (!type) throw new Error(`no reward event for the state ${status}`);
  return type;
}

export function eventAttributesWithId(
  type: WebhookEventType,
  eventId: string,
  tenant: string,
  campaignId: string,
  data: Record<string, unknown>,
  now = new Date(),
): EventAttributes {
  return {
    event_id: eventId,
    event_type: type,
    event_time: now.toISOString(),
    event_json: stringifyJson(data),
    tenant,
    campaign_id: campaignId,
  };
}

/**
 * Marks an action item written from its link's record (`materializeLinkAction`): its event was
 * fed from that record already (`eventRecordsOf` in `lib/webhooks/link-action-events.ts`), so
 * its own INSERT is no event record (`isEventRecord`), only a contribution to the rollups.
 */
export const EVENT_FROM_LINK = 'event_from_link';
