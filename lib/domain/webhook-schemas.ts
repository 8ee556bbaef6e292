/**
 * Request and response schemas of the webhook operations (endpoints 18–22): the delivery log,
 * the events feed, redelivery, the test event and the secret rotation.
 */

import { Type } from '@sinclair/typebox';
import { Conversion } from './conversion-schemas.ts';
import { Action, ListQuery, ReferredUser } from './link-schemas.ts';
import { Reward } from './reward-schemas.ts';
import { Uuid } from './schemas.ts';

export const WebhookDeliveriesQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(
      Type.String({
        pattern: '^(succeeded|failed|pending)$',
        description:
          'An attempt status: succeeded (a 2xx), failed (no attempt follows it) or pending (failed, with a next attempt scheduled)',
      }),
    ),
  },
  { additionalProperties: true },
);

export const EventIdPath = Type.Object({
  event_id: Type.String({
    pattern:
      '^(?:evt_[a-z_]{1,32}_[1-9][0-9]{0,15}(_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?|evt_conversion_cv_[A-Za-z0-9_-]{40}|evt_refund_cv_[A-Za-z0-9_-]{40}_[1-9][0-9]{0,5})$',
    description:
      'An event id, the webhook-id of its deliveries: evt_action_<action id>_<campaign id> (e.g. evt_action_5531_3f0c2a9e-4b1d-4c5e-9f00-0123456789ab; evt_action_<action id> for actions recorded before this form), evt_referred_user_<referred user id>, evt_conversion_<conversion id> or evt_refund_<conversion id>_<refund number>',
  }),
});

const Timestamp = Type.String({ format: 'date-time', description: 'ISO-8601, UTC' });

export const DeliveryAttempt = Type.Object(
  {
    id: Type.String({ description: 'The attempt' }),
    event_id: Type.String({ description: 'The event: the `webhook-id` of the request' }),
    event_type: Type.Union([
      Type.Literal('action.created'),
      Type.Literal('referred_user.created'),
      Type.Literal('conversion.created'),
      Type.Literal('conversion.refunded'),
      Type.Literal('reward.created'),
      Type.Literal('reward.flagged'),
      Type.Literal('reward.approved'),
      Type.Literal('reward.paid'),
      Type.Literal('reward.voided'),
      Type.Literal('webhook.test'),
    ]),
    attempt: Type.Integer({
      minimum: 1,
      description: "The attempt's number for this event, 1 for the first",
    }),
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('pending')], {
      description:
        '`succeeded`: a 2xx. `pending`: failed, and the next attempt is due at `next_attempt_at`. `failed`: failed and nothing follows (the last attempt, a 410, a redirect is not followed but retried).',
    }),
    attempted_at: Timestamp,
    url: Type.String({ description: 'Where it was sent' }),
    status_code: Type.Union([Type.Integer(), Type.Null()], {
      description:
        "The receiver's HTTP status; null when none came (timeout, connection error, refused address)",
    }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed; null on success' }),
    duration_ms: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When the next attempt is due, if any',
    }),
  },
  { additionalProperties: false },
);

export const DeliveryAttemptList = Type.Array(DeliveryAttempt);

const eventOf = (
  type: string,
  data: typeof Action | typeof ReferredUser | typeof Conversion | typeof Reward,
) =>
  Type.Object(
    {
      id: Type.String({ description: 'The event id, the `webhook-id` of its deliveries' }),
      type: Type.Literal(type),
      timestamp: Timestamp,
      campaign_id: Uuid,
      data,
    },
    { additionalProperties: false },
  );

export const FeedEvent = Type.Union(
  [
    eventOf('action.created', Action),
    eventOf('referred_user.created', ReferredUser),
    eventOf('conversion.created', Conversion),
    eventOf('conversion.refunded', Conversion),
    eventOf('reward.created', Reward),
    eventOf('reward.flagged', Reward),
    eventOf('reward.approved', Reward),
    eventOf('reward.paid', Reward),
    eventOf('reward.voided', Reward),
  ],
  {
    description: 'An event: exactly the body of its webhook, with its `id`.',
  },
);
export const FeedEventList = Type.Array(FeedEvent);

export const RedeliveryAccepted = Type.Object(
  {
    event_id: Type.String(),
    status: Type.Literal('queued', {
      description: 'The new delivery is queued; it shows in the delivery log.',
    }),
  },
  { additionalProperties: false },
);

export const WebhookTestResult = Type.Object(
  {
    delivered: Type.Boolean({ description: 'The endpoint answered a 2xx' }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    duration_ms: Type.Integer({ minimum: 0 }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
