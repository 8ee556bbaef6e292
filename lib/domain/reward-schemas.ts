/** Schemas of the rewards ledger's endpoints (27-32; see `schemas.ts` for the conventions). */
import { type Static, Type } from '@sinclair/typebox';
import { ListQuery, UserId } from './link-schemas.ts';
import { Text } from './schema-kinds.ts';
import { Timestamp, Uuid } from './schemas.ts';

/** What `rewardId` makes (`lib/domain/reward-ids.ts`): `rw_` and 54 characters of base64url. */
export const REWARD_ID_PATTERN = '^rw_[A-Za-z0-9_-]{54}$';
/** What a payout's id is (`lib/db/rewards.ts`): `po_` and 22 characters of base64url. */
export const PAYOUT_ID_PATTERN = '^po_[A-Za-z0-9_-]{22}$';

const RewardId = Type.String({
  pattern: REWARD_ID_PATTERN,
  description: 'A reward id, as the API gave it (`rw_` and 54 characters).',
});

const Recipient = Type.Union([Type.Literal('referrer'), Type.Literal('referred_user')], {
  description: "Who earns it: the link's referrer, or the referred user (a double-sided rule).",
});

const Status = Type.Union(
  [
    Type.Literal('in_review'),
    Type.Literal('pending'),
    Type.Literal('approved'),
    Type.Literal('paid'),
    Type.Literal('voided'),
  ],
  {
    description:
      '`in_review` (waits for approve or void), `pending` (in its hold), `approved` (payable), `paid` (in a payout) or `voided`.',
  },
);

/** A status as a query value (a pattern: the validators describe patterns). */
const StatusFilter = Type.String({
  pattern: '^(?:in_review|pending|approved|paid|voided)$',
  description: 'Only the rewards in this state: `in_review`, `pending`, `approved`, `paid` or `voided`.',
  examples: ['in_review'],
});

const MinorUnits = (description: string) => Type.Integer({ description });

export const Reward = Type.Object(
  {
    id: Type.String({ pattern: REWARD_ID_PATTERN }),
    created_at: Timestamp,
    campaign_id: Uuid,
    rule_id: Type.String({ description: 'The rule that made it.' }),
    recipient: Recipient,
    recipient_id: Type.String({ description: 'The `referrer_id` or the `referred_user_id`.' }),
    source_type: Type.Union([Type.Literal('referred_user'), Type.Literal('conversion')]),
    source_id: Type.String({
      description: 'The signup (its `referred_user_id`) or the conversion (its id).',
    }),
    type: Type.Union([Type.Literal('reward'), Type.Literal('adjustment')], {
      description: '`adjustment`: a negative reward a refund made against the reward `adjusts`.',
    }),
    adjusts: Type.Union([Type.String({ pattern: REWARD_ID_PATTERN }), Type.Null()]),
    amount: MinorUnits('In minor units of `currency`: positive for a reward, negative for an adjustment.'),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    status: Status,
    available_at: { ...Timestamp, description: "When its hold ends (created + the rule's `hold_days`)." },
    review_reasons: Type.Array(
      Type.Union([Type.Literal('referrer_signups_per_hour'), Type.Literal('repeat_visitor')]),
    ),
    payout_id: Type.Union([Type.String({ pattern: PAYOUT_ID_PATTERN }), Type.Null()]),
    void_reason: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type Reward = Static<typeof Reward>;
export const RewardList = Type.Array(Reward);

export const RewardsPath = Type.Object({ campaign_id: Uuid });
export const RewardsQuery = Type.Object(
  {
    ...ListQuery.properties,
    status: Type.Optional(StatusFilter),
    recipient_id: Type.Optional({
      ...UserId,
      description: 'Only the rewards of this recipient (a referrer or a referred user: both kinds).',
    }),
  },
  { additionalProperties: true },
);

export const RewardPath = Type.Object({ id: RewardId });

export const VoidRewardBody = Type.Object(
  {
    reason: Text({
      minLength: 1,
      maxLength: 256,
      noControl: true,
      description: 'Why it is voided (kept as `void_reason`), 1-256 characters.',
    }),
  },
  { additionalProperties: false },
);
export type VoidRewardBody = Static<typeof VoidRewardBody>;

export const BalancePath = Type.Object({ campaign_id: Uuid, recipient_id: UserId });
export const BalanceQuery = Type.Object(
  {
    recipient: Type.Optional(
      Type.String({
        pattern: '^(?:referrer|referred_user)$',
        description:
          'Which kind of recipient `recipient_id` is: `referrer` (when omitted) or `referred_user`.',
        default: 'referrer',
      }),
    ),
  },
  { additionalProperties: true },
);

export const Balance = Type.Object(
  {
    in_review: MinorUnits('Waiting for approve or void.'),
    pending: MinorUnits('In their hold.'),
    approved: MinorUnits(
      'Payable now, net of clawbacks (negative when the clawbacks owed exceed what is approved).',
    ),
    paid: MinorUnits('Paid by payouts.'),
    voided: MinorUnits('Voided (additive): the five parts sum to every amount ever made for the recipient.'),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  },
  { additionalProperties: false },
);

export const CreatePayoutBody = Type.Object(
  {
    campaign_id: Uuid,
    recipient: Recipient,
    recipient_id: UserId,
    reference: Type.Optional(
      Type.Union([
        Text({
          minLength: 1,
          maxLength: 256,
          noControl: true,
          description:
            'Your reference of the payment made elsewhere (a transfer id, a gift card), 1-256 characters.',
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
export type CreatePayoutBody = Static<typeof CreatePayoutBody>;

export const Payout = Type.Object(
  {
    id: Type.String({ pattern: PAYOUT_ID_PATTERN }),
    created_at: Timestamp,
    campaign_id: Uuid,
    recipient: Recipient,
    recipient_id: Type.String(),
    amount: Type.Integer({ minimum: 1, description: 'The sum of its rewards, in minor units.' }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    reward_ids: Type.Array(Type.String({ pattern: REWARD_ID_PATTERN })),
    reference: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);
export type Payout = Static<typeof Payout>;
export const PayoutList = Type.Array(Payout);

/** Endpoint 31's answer: the payout, and whether approved rewards are left for another one. */
export const PayoutCreated = Type.Object(
  {
    ...Payout.properties,
    has_more: Type.Boolean({
      description:
        'More approved rewards wait than one payout takes (98): record another payout for the rest.',
    }),
  },
  { additionalProperties: false },
);

export const PayoutsPath = Type.Object({ campaign_id: Uuid });
export const PayoutsQuery = Type.Object(
  {
    ...ListQuery.properties,
    recipient_id: Type.Optional({ ...UserId, description: 'Only the payouts of this recipient.' }),
  },
  { additionalProperties: true },
);
