/**
 * The schemas of a campaign's reward fields (`reward_rules`, `review_signups_per_hour`) and of the
 * reward object the `reward.*` webhooks carry. The schema checks each rule's shape and ranges;
 * what depends on several fields (a percent's basis points, `first_conversions` on conversion
 * rules only, unique ids) is `rewardRulesInput` of `reward-rules.ts`, whose errors are the same
 * 400 `validation_failed`.
 */
import { Type } from '@sinclair/typebox';
import {
  DEFAULT_HOLD_DAYS,
  DEFAULT_REVIEW_SIGNUPS_PER_HOUR,
  MAX_FIRST_CONVERSIONS,
  MAX_FLAT_AMOUNT,
  MAX_HOLD_DAYS,
  MAX_REVIEW_SIGNUPS_PER_HOUR,
  MAX_REWARD_RULES,
} from './reward-rules.ts';

const RuleId = Type.String({
  pattern: '^[A-Za-z0-9_-]{1,64}$',
  description: "1-64 characters of `A-Z a-z 0-9 _ -`, unique among the campaign's rules.",
});
const RuleOn = Type.String({
  pattern: '^(referred_user|conversion)$',
  description: 'What the rule rewards: `referred_user` (a signup) or `conversion` (a sale).',
});
const RuleRecipient = Type.String({
  pattern: '^(referrer|referred_user)$',
  description: 'Who gets the reward: `referrer` (none when the link has no referrer) or `referred_user`.',
});
const RuleType = Type.String({
  pattern: '^(flat|percent)$',
  description: "`flat` (minor units) or `percent` (basis points of a conversion's amount, conversions only).",
});
const RuleAmount = Type.Integer({
  minimum: 1,
  maximum: MAX_FLAT_AMOUNT,
  description:
    'Minor units for `flat` (1 to 10^12); basis points for `percent` (1 to 10,000: 1000 is 10 %), rounded down to the minor unit.',
});
const FirstConversions = Type.Integer({
  minimum: 1,
  maximum: MAX_FIRST_CONVERSIONS,
  description:
    "Conversion rules only: rewards each referred user's first N conversions (refunded ones count).",
});
const HoldDays = Type.Integer({
  minimum: 0,
  maximum: MAX_HOLD_DAYS,
  description: `Days a reward stays \`pending\` (the refund window) before it is \`approved\`. ${DEFAULT_HOLD_DAYS} by default.`,
});

/** A rule as a client sends it (`id` and `hold_days` may be left out). */
export const RewardRuleInputSchema = Type.Object(
  {
    id: Type.Optional(RuleId),
    on: RuleOn,
    recipient: RuleRecipient,
    type: RuleType,
    amount: RuleAmount,
    first_conversions: Type.Optional(FirstConversions),
    hold_days: Type.Optional(HoldDays),
  },
  { additionalProperties: false },
);

// No `maxItems`: the generated validators do not take it; `rewardRulesInput` refuses more (400).
export const RewardRulesInput = Type.Array(RewardRuleInputSchema, {
  description: `At most ${MAX_REWARD_RULES} rules. A rule without \`id\` is \`rule_<position>\` (1-based). A change applies to signups and conversions after it; \`[]\` ends the rewards.`,
});

export const ReviewSignupsPerHour = Type.Integer({
  minimum: 1,
  maximum: MAX_REVIEW_SIGNUPS_PER_HOUR,
  description: `A signup whose referrer has more signups than this in the last hour (this one included) puts its rewards \`in_review\`. ${DEFAULT_REVIEW_SIGNUPS_PER_HOUR} by default.`,
});

/** A rule as the campaign shows it: every field set. */
export const RewardRule = Type.Object(
  {
    id: RuleId,
    on: Type.Union([Type.Literal('referred_user'), Type.Literal('conversion')]),
    recipient: Type.Union([Type.Literal('referrer'), Type.Literal('referred_user')]),
    type: Type.Union([Type.Literal('flat'), Type.Literal('percent')]),
    amount: RuleAmount,
    first_conversions: Type.Optional(FirstConversions),
    hold_days: HoldDays,
  },
  { additionalProperties: false },
);
