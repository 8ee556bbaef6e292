/**
 * The rewards ledger's rules (contract, "Rewards"), as pure functions over plain objects: which
 * rewards a signup, a conversion or a refund creates, the state machine, balances and what a
 * payout takes. Storage (`lib/db/rewards.ts`) applies what these decide with conditional writes;
 * the property tests (`test/unit/rewards-ledger.test.ts`) run them against an in-memory ledger.
 * The decisions the contract leaves open are in docs/rewards.md.
 *
 * Vocabulary. A *reward* is created by a rule for a signup or conversion (amount > 0). An
 * *adjustment* is a negative reward a refund creates against one reward (its parent). While the
 * parent is unpaid, its adjustments *follow* it: they share its state and move with it (approve,
 * hold end, void, payout), so a payout never pays a reward without netting what was refunded of
 * it. An adjustment made after its parent was paid is a *clawback*: approved at once, netted
 * against the recipient's next payout. A *family* is a reward with its adjustments.
 */
import { ApiError } from './errors.ts';
import { adjustmentId, rewardId } from './reward-ids.ts';
import { DAY_MS, type RewardRecipient, type RewardRule, type RuleTerms, ruleAmount } from './reward-rules.ts';

export type RewardStatus = 'in_review' | 'pending' | 'approved' | 'paid' | 'voided';
export const REWARD_STATUSES: readonly RewardStatus[] = [
  'in_review',
  'pending',
  'approved',
  'paid',
  'voided',
];
export type ReviewReason = 'referrer_signups_per_hour' | 'repeat_visitor';

export interface Reward {
  id: string;
  campaign_id: string;
  kind: 'reward' | 'adjustment';
  /** An adjustment's parent reward; `null` for a reward. */
  adjusts: string | null;
  rule_id: string;
  /** The rule's terms when the reward was made: refunds recompute with them, whatever the rules are now. */
  terms: RuleTerms;
  recipient: RewardRecipient;
  recipient_id: string;
  source_type: 'referred_user' | 'conversion';
  source_id: string;
  /** Minor units: > 0 for a reward, < 0 for an adjustment. Never edited after creation. */
  amount: number;
  /** A reward's adjustments summed (all ever made, voided or not); 0 on an adjustment. */
  adjusted: number;
  currency: string;
  status: RewardStatus;
  created_ms: number;
  available_ms: number;
  review_reasons: ReviewReason[];
  payout_id: string | null;
  void_reason: string | null;
}

export interface RewardCampaign {
  id: string;
  currency: string;
  /** The rules in force when the source was committed (`rulesInForce`). */
  reward_rules: readonly RewardRule[];
}

export interface Signup {
  referred_user_id: string;
  /** `null` when the link has none: no referrer reward then. */
  referrer_id: string | null;
  created_ms: number;
}

export interface Conversion {
  id: string;
  referred_user_id: string;
  referrer_id: string | null;
  amount: number;
  refunded_amount: number;
  created_ms: number;
}

export interface ReviewSignals {
  /** Signups of the referrer in the hour up to this one, this one included. */
  referrerSignupsLastHour: number;
  reviewSignupsPerHour: number;
  /** The signup's click came from a visitor who already produced a signup on that link within 24 h. */
  repeatVisitor: boolean;
}

/** Why a signup's rewards wait for a person (contract, "Review"); empty: they do not. */
export function reviewReasons(signals: ReviewSignals): ReviewReason[] {
  const reasons: ReviewReason[] = [];
  if (signals.referrerSignupsLastHour > signals.reviewSignupsPerHour)
    reasons.push('referrer_signups_per_hour');
  if (signals.repeatVisitor) reasons.push('repeat_visitor');
  return reasons;
}

interface Earning {
  rule: RewardRule;
  recipientId: string;
  amount: number;
}

function newReward(
  campaign: RewardCampaign,
  source: { type: 'referred_user' | 'conversion'; id: string; createdMs: number },
  earning: Earning,
  reasons: readonly ReviewReason[],
): Reward {
  const { rule } = earning;
  return {
    id: rewardId({
      campaignId: campaign.id,
      recipient: rule.recipient,
      recipientId: earning.recipientId,
      ruleId: rule.id,
      sourceType: source.type,
      sourceId: source.id,
    }),
    campaign_id: campaign.id,
    kind: 'reward',
    adjusts: null,
    rule_id: rule.id,
    terms: { type: rule.type, amount: rule.amount },
    recipient: rule.recipient,
    recipient_id: earning.recipientId,
    source_type: source.type,
    source_id: source.id,
    amount: earning.amount,
    adjusted: 0,
    currency: campaign.currency,
    status: reasons.length > 0 ? 'in_review' : 'pending',
    created_ms: source.createdMs,
    // The hold counts from creation, also for a reward that waits in review.
    available_ms: source.createdMs + rule.hold_days * DAY_MS,
    review_reasons: [...reasons],
    payout_id: null,
    void_reason: null,
  };
}

const recipientIdOf = (rule: RewardRule, s: { referrer_id: string | null; referred_user_id: string }) =>
  rule.recipient === 'referrer' ? s.referrer_id : s.referred_user_id;

/**
 * The rewards a signup earns: one per `referred_user` rule, none for a referrer when the link has
 * none. Creation time is the signup's, so a replay builds the very same rewards.
 */
export function rewardsForSignup(
  campaign: RewardCampaign,
  signup: Signup,
  reasons: readonly ReviewReason[] = [],
): Reward[] {
  const source = {
    type: 'referred_user' as const,
    id: signup.referred_user_id,
    createdMs: signup.created_ms,
  };
  return campaign.reward_rules.flatMap((rule) => {
    if (rule.on !== 'referred_user') return [];
    const recipientId = recipientIdOf(rule, signup);
    const amount = ruleAmount(rule, 1);
    return recipientId && amount > 0
      ? [newReward(campaign, source, { rule, recipientId, amount }, reasons)]
      : [];
  });
}

/**
 * The rewards a conversion earns: one per `conversion` rule whose `first_conversions` (if any)
 * still counts it. `priorConversionCount` is how many conversions the referred user had before
 * this one, refunded ones included (a refunded sale was still a sale; a rule does not pay again
 * for the next one). A percent rule that rounds to 0 creates nothing. `reasons` are those of the
 * referred user's signup: a sale of a signup under review waits in review too.
 */
export function rewardsForConversion(
  campaign: RewardCampaign,
  conversion: Conversion,
  priorConversionCount: number,
  reasons: readonly ReviewReason[] = [],
): Reward[] {
  const source = { type: 'conversion' as const, id: conversion.id, createdMs: conversion.created_ms };
  return campaign.reward_rules.flatMap((rule) => {
    if (rule.on !== 'conversion') return [];
    if (rule.first_conversions !== undefined && priorConversionCount >= rule.first_conversions) return [];
    const recipientId = recipientIdOf(rule, conversion);
    const amount = ruleAmount(rule, conversion.amount);
    return recipientId && amount > 0
      ? [newReward(campaign, source, { rule, recipientId, amount }, reasons)]
      : [];
  });
}

export type FamilyChange = { reward: Reward; adjustments: Reward[] };

/** What a refund does to one reward of its conversion. */
export type RefundEffect =
  /** Nothing of the reward is left to earn while it is unpaid: it and its adjustments are voided. */
  | { kind: 'void'; changed: Reward[] }
  /** A new adjustment; `parent` is the reward with `adjusted` raised by it. */
  | { kind: 'adjust'; parent: Reward; adjustment: Reward };

const UNPAID: readonly RewardStatus[] = ['in_review', 'pending', 'approved'];
export const isUnpaid = (r: Reward) => UNPAID.includes(r.status);

/**
 * What a refund of `conversion` (its `refunded_amount` already raised) does to one of its
 * rewards, given the reward's adjustments. The reward and its adjustments must always sum to what
 * the rule gives on the sale's net amount (`ruleAmount(terms, amount - refunded_amount)`), so the
 * adjustment is the difference: rounding never drifts across partial refunds, and a replayed
 * refund (difference 0) creates nothing. Unpaid and worth nothing now: void the family. Unpaid:
 * an adjustment that follows the reward. Paid: a clawback, approved now.
 */
export function refundEffect(
  family: FamilyChange,
  conversion: Pick<Conversion, 'amount' | 'refunded_amount'>,
  nowMs: number,
): RefundEffect | undefined {
  const { reward } = family;
  if (reward.kind !== 'reward' || reward.source_type !== 'conversion' || reward.status === 'voided')
    return undefined;
  const due = ruleAmount(reward.terms, conversion.amount - conversion.refunded_amount);
  const difference = due - (reward.amount + reward.adjusted);
  if (difference >= 0) return undefined;
  if (isUnpaid(reward) && due === 0) {
    return { kind: 'void', changed: voidAll(family, 'refunded') };
  }
  const clawback = reward.status === 'paid';
  const adjustment: Reward = {
    ...reward,
    id: adjustmentId(reward.id, conversion.refunded_amount),
    kind: 'adjustment',
    adjusts: reward.id,
    amount: difference,
    adjusted: 0,
    status: clawback ? 'approved' : reward.status,
    created_ms: nowMs,
    available_ms: clawback ? nowMs : reward.available_ms,
    review_reasons: clawback ? [] : reward.review_reasons,
    payout_id: null,
    void_reason: null,
  };
  return { kind: 'adjust', parent: { ...reward, adjusted: reward.adjusted + difference }, adjustment };
}

/** The rewards of a family that move with the reward: itself and the adjustments in its state. */
const followers = (family: FamilyChange) =>
  family.adjustments.filter((a) => a.status === family.reward.status);

function voidAll(family: FamilyChange, reason: string): Reward[] {
  return [family.reward, ...followers(family)].map((r) => ({ ...r, status: 'voided', void_reason: reason }));
}

export type TransitionError =
  /** The reward is paid: it can no longer be voided (a refund claws it back instead). */
  | 'reward_paid'
  /** The reward is not in a state this change starts from. */
  | 'invalid_state'
  /** An adjustment that follows its reward: approve or void the reward. */
  | 'follows_reward'
  /** `pending` whose hold has not ended (the scheduled release only). */
  | 'not_due';

export type Transition = { ok: true; changed: Reward[] } | { ok: false; error: TransitionError };

const fail = (error: TransitionError): Transition => ({ ok: false, error });

/**
 * Endpoint 28 on a reward: `in_review` → `pending` (its hold still counted from creation), or
 * `pending` → `approved` now (ends the hold early). Its following adjustments move with it.
 */
export function approveReward(family: FamilyChange, nowMs: number): Transition {
  const { reward } = family;
  if (reward.kind === 'adjustment') return fail('follows_reward');
  const moving = [reward, ...followers(family)];
  if (reward.status === 'in_review') {
    return { ok: true, changed: moving.map((r) => ({ ...r, status: 'pending' })) };
  }
  if (reward.status === 'pending') {
    return {
      ok: true,
      changed: moving.map((r) => ({
        ...r,
        status: 'approved',
        available_ms: Math.min(r.available_ms, nowMs),
      })),
    };
  }
  return fail('invalid_state');
}

/** The scheduled change: a `pending` reward whose `available_at` has passed becomes `approved`. */
export function releaseReward(family: FamilyChange, nowMs: number): Transition {
  const { reward } = family;
  if (reward.kind === 'adjustment') return fail('follows_reward');
  if (reward.status !== 'pending') return fail('invalid_state');
  if (reward.available_ms > nowMs) return fail('not_due');
  return { ok: true, changed: [reward, ...followers(family)].map((r) => ({ ...r, status: 'approved' })) };
}

/**
 * Endpoint 29. A reward `in_review`, `pending` or `approved` is voided with its following
 * adjustments; a paid one is 409 `reward_paid`. A clawback (an adjustment of a paid reward) may
 * be voided while unpaid: the business forgives that debt. An adjustment that follows its reward
 * cannot be voided alone (that would pay the refunded part).
 */
export function voidReward(family: FamilyChange, parent: Reward | undefined, reason: string): Transition {
  const { reward } = family;
  if (reward.status === 'paid') return fail('reward_paid');
  if (reward.status === 'voided') return fail('invalid_state');
  if (reward.kind === 'adjustment') {
    if (parent?.status !== 'paid') return fail('follows_reward');
    return { ok: true, changed: [{ ...reward, status: 'voided', void_reason: reason }] };
  }
  return { ok: true, changed: voidAll(family, reason) };
}

export type Balance = Record<RewardStatus, number>;

/**
 * Endpoint 30: a recipient's rewards and adjustments summed by state. With `voided` (additive to
 * the contract), the parts sum to every amount ever created for the recipient. `approved` can be
 * negative: clawbacks larger than what is approved are owed back.
 */
export function balanceOf(rewards: Iterable<Pick<Reward, 'status' | 'amount'>>): Balance {
  const balance: Balance = { in_review: 0, pending: 0, approved: 0, paid: 0, voided: 0 };
  for (const r of rewards) balance[r.status] += r.amount;
  return balance;
}

/**
 * The most rewards one payout pays: a payout is one DynamoDB transaction (at most 100 items) of
 * the payout item, the campaign's check and one conditional update per reward.
 */
export const MAX_PAYOUT_REWARDS = 98;

export type PayoutSelection =
  | { ok: true; rewards: Reward[]; amount: number; hasMore: boolean }
  | { ok: false; error: 'nothing_to_pay' };

/**
 * What a payout of the recipient's `rewards` (all of them, any state) takes. Units move whole: an
 * approved reward with its approved adjustments, or one clawback. Nothing when the approved net is
 * 0 or less (clawbacks owed exceed what is approved: paying would pay money owed back). Up to
 * `limit` rewards: clawbacks first, oldest first, then rewards, oldest hold end first; when more
 * are approved, `hasMore` says so and the rest waits for the next payout. The amount is never
 * more than the approved net: a selection that would leave clawbacks behind and pay more than the
 * net is refused too (`nothing_to_pay`), a case of 97+ clawbacks owed at once.
 */
export function selectPayout(rewards: readonly Reward[], limit = MAX_PAYOUT_REWARDS): PayoutSelection {
  const byId = new Map(rewards.map((r) => [r.id, r]));
  const approved = rewards.filter((r) => r.status === 'approved');
  const units = new Map<string, Reward[]>();
  for (const r of approved) {
    const parent = r.adjusts ? byId.get(r.adjusts) : undefined;
    const unitId = r.kind === 'adjustment' && parent?.status === 'approved' ? parent.id : r.id;
    units.set(unitId, [...(units.get(unitId) ?? []), r]);
  }
  const sum = (rs: readonly Reward[]) => rs.reduce((s, r) => s + r.amount, 0);
  const net = sum(approved);
  if (net <= 0) return { ok: false, error: 'nothing_to_pay' };
  const oldest = (a: Reward[], b: Reward[]) =>
    (a[0] as Reward).available_ms - (b[0] as Reward).available_ms ||
    ((a[0] as Reward).id < (b[0] as Reward).id ? -1 : 1);
  // A unit's first entry is its reward (a clawback is alone), which dates the unit.
  const ordered = [...units.values()].map((u) =>
    u.sort((a, b) => Number(a.kind === 'adjustment') - Number(b.kind === 'adjustment')),
  );
  const clawbacks = ordered.filter((u) => sum(u) < 0).sort(oldest);
  const earned = ordered.filter((u) => sum(u) >= 0).sort(oldest);
  const selected: Reward[] = [];
  for (const unit of [...clawbacks, ...earned]) {
    if (selected.length + unit.length > limit) break;
    selected.push(...unit);
  }
  const amount = sum(selected);
  if (amount <= 0 || amount > net) return { ok: false, error: 'nothing_to_pay' };
  return { ok: true, rewards: selected, amount, hasMore: selected.length < approved.length };
}

/** The rewards of a payout, paid. */
export function payRewards(rewards: readonly Reward[], payoutId: string): Reward[] {
  return rewards.map((r) => ({ ...r, status: 'paid', payout_id: payoutId }));
}

export type LedgerErrorCode = TransitionError | 'nothing_to_pay' | 'reward_not_found' | 'campaign_not_found';

/**
 * A ledger operation refused, by the code a handler maps to the contract's error
 * (`ledgerApiError`). `status` is the reward's state when a transition was refused.
 */
export class LedgerError extends Error {
  constructor(
    readonly code: LedgerErrorCode,
    readonly status?: RewardStatus,
  ) {
    super(code);
    this.name = 'LedgerError';
  }
}

/** The contract's error for a refused ledger operation (endpoints 28, 29 and 31). */
export function ledgerApiError(err: LedgerError): ApiError {
  switch (err.code) {
    case 'reward_not_found':
      return new ApiError('reward_not_found', 'No such reward.');
    case 'campaign_not_found':
      return new ApiError('campaign_not_found', 'No such campaign.');
    case 'nothing_to_pay':
      return new ApiError('nothing_to_pay', 'Nothing approved to pay to this recipient.');
    case 'follows_reward':
      return new ApiError(
        'adjustment_follows_reward',
        'This adjustment follows its reward; approve or void the reward.',
      );
    case 'reward_paid':
      return new ApiError('reward_paid', 'This reward is paid; a paid reward cannot be voided.');
    case 'invalid_state':
      if (err.status === 'paid') return new ApiError('reward_paid', 'This reward is paid.');
      if (err.status === 'voided') return new ApiError('reward_voided', 'This reward is voided.');
      return new ApiError(
        'reward_not_approvable',
        `This reward is ${err.status ?? 'not approvable'} already.`,
      );
    case 'not_due':
      // Only the scheduled release asks for a due reward.
      throw new Error('not_due from an endpoint');
  }
}
