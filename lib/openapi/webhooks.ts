/**
 * The webhook payloads: `{ type, timestamp, campaign_id, data }` as `lib/domain/webhook-events.ts` defines
 * the body, with `data` the same Action or ReferredUser schema the API responds with.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Conversion } from '../domain/conversion-schemas.ts';
import { Action, ReferredUser } from '../domain/link-schemas.ts';
import { Reward } from '../domain/reward-schemas.ts';
import { Uuid } from '../domain/schemas.ts';
import { TEST_EVENT_TYPE, type WebhookBody, type WebhookEventType } from '../domain/webhook-events.ts';

function event<T extends WebhookEventType | typeof TEST_EVENT_TYPE, D extends TSchema>(
  type: T,
  data: D,
  description: string,
) {
  return Type.Object(
    {
      type: Type.Literal(type),
      timestamp: Type.String({ format: 'date-time', description: 'When the event happened (ISO-8601, UTC)' }),
      campaign_id: Uuid,
      data,
    },
    { additionalProperties: false, description },
  );
}

export const ActionCreatedEvent = event(
  'action.created',
  Action,
  'Sent for every action, visits included; `data` is the action.',
);
export const ReferredUserCreatedEvent = event(
  'referred_user.created',
  ReferredUser,
  'Sent for every signup; `data` is the referred user.',
);

export const ConversionCreatedEvent = event(
  'conversion.created',
  Conversion,
  'Sent for every conversion (sale); `data` is the conversion.',
);
export const ConversionRefundedEvent = event(
  'conversion.refunded',
  Conversion,
  'Sent for every refund, partial or whole; `data` is the conversion after it (`refunded_amount`, `status`).',
);

const rewardNote =
  ' An adjustment (`type: adjustment`, a negative amount a refund made) has the same events as a reward.';
export const RewardCreatedEvent = event(
  'reward.created',
  Reward,
  `A reward entered \`pending\`: made by a rule for a signup or a conversion, or approved out of review. Its hold ends at \`available_at\`. \`data\` is the reward.${rewardNote}`,
);
export const RewardFlaggedEvent = event(
  'reward.flagged',
  Reward,
  `A reward was made \`in_review\` (\`review_reasons\` say why): it waits for approve or void. \`data\` is the reward.${rewardNote}`,
);
export const RewardApprovedEvent = event(
  'reward.approved',
  Reward,
  `A reward became \`approved\` (its hold ended, or it was approved early): it is payable, and the next payout of its recipient includes it. A clawback (an adjustment of a paid reward) is approved when made. \`data\` is the reward.${rewardNote}`,
);
export const RewardPaidEvent = event(
  'reward.paid',
  Reward,
  `A payout included the reward (\`payout_id\`). \`data\` is the reward.${rewardNote}`,
);
export const RewardVoidedEvent = event(
  'reward.voided',
  Reward,
  `A reward was voided (\`void_reason\`: \`refunded\` for a full refund of its conversion, or the reason given to the API). \`data\` is the reward.${rewardNote}`,
);

export const WebhookTestEvent = event(
  TEST_EVENT_TYPE,
  Type.Object(
    {
      message: Type.String({ description: 'A fixed text saying this is a test' }),
    },
    { additionalProperties: false },
  ),
  'Sent only on demand by `POST /api/v1/campaign/webhook_test`, to check that the endpoint answers and verifies signatures; never retried and not in the events feed.',
);

/** Fails the type check when the payload schemas stop matching the body the delivery code sends. */
type Assert<T extends true> = T;
export type PayloadsMatchWebhookBody = Assert<
  Static<
    | typeof ActionCreatedEvent
    | typeof ReferredUserCreatedEvent
    | typeof ConversionCreatedEvent
    | typeof ConversionRefundedEvent
    | typeof RewardCreatedEvent
    | typeof RewardFlaggedEvent
    | typeof RewardApprovedEvent
    | typeof RewardPaidEvent
    | typeof RewardVoidedEvent
  > extends WebhookBody
    ? true
    : false
>;

export const webhookEvents = [
  {
    type: 'action.created',
    schema: ActionCreatedEvent,
    summary: 'An action was recorded',
    operationId: 'ActionCreatedWebhook',
  },
  {
    type: 'referred_user.created',
    schema: ReferredUserCreatedEvent,
    summary: 'A referred user signed up',
    operationId: 'ReferredUserCreatedWebhook',
  },
  {
    type: 'conversion.created',
    schema: ConversionCreatedEvent,
    summary: 'A conversion (sale) was recorded',
    operationId: 'ConversionCreatedWebhook',
  },
  {
    type: 'conversion.refunded',
    schema: ConversionRefundedEvent,
    summary: 'A conversion was refunded, in part or whole',
    operationId: 'ConversionRefundedWebhook',
  },
  {
    type: 'reward.created',
    schema: RewardCreatedEvent,
    summary: 'A reward was created (pending)',
    operationId: 'RewardCreatedWebhook',
  },
  {
    type: 'reward.flagged',
    schema: RewardFlaggedEvent,
    summary: 'A reward was created in review',
    operationId: 'RewardFlaggedWebhook',
  },
  {
    type: 'reward.approved',
    schema: RewardApprovedEvent,
    summary: 'A reward was approved (payable)',
    operationId: 'RewardApprovedWebhook',
  },
  {
    type: 'reward.paid',
    schema: RewardPaidEvent,
    summary: 'A reward was paid by a payout',
    operationId: 'RewardPaidWebhook',
  },
  {
    type: 'reward.voided',
    schema: RewardVoidedEvent,
    summary: 'A reward was voided',
    operationId: 'RewardVoidedWebhook',
  },
  {
    type: TEST_EVENT_TYPE,
    schema: WebhookTestEvent,
    summary: 'A test event, sent on demand',
    operationId: 'WebhookTestWebhook',
  },
] as const satisfies ReadonlyArray<{
  type: WebhookEventType | typeof TEST_EVENT_TYPE;
  schema: TSchema;
  summary: string;
  operationId: string;
}>;
