/**
 * A campaign's `reward_rules` (contract, "Rewards"): their validation, the amount a rule gives,
 * and which rules were in force when a signup or conversion was committed. Pure: no I/O.
 *
 * Money is integers in the currency's minor unit throughout; a percent rule is basis points, and
 * its product with an amount (up to 10^12 × 10^4) can pass 2^53, so it is computed in BigInt.
 */
import { type ErrorDetail, validationError } from './errors.ts';

export const MAX_REWARD_RULES = 10;
export const DEFAULT_HOLD_DAYS = 30;
export const MAX_HOLD_DAYS = 365;
export const MAX_BASIS_POINTS = 10_000;
/** The largest flat amount: the largest conversion amount the contract takes. */
export const MAX_FLAT_AMOUNT = 1_000_000_000_000;
export const MAX_FIRST_CONVERSIONS = 1_000_000;
export const DEFAULT_REVIEW_SIGNUPS_PER_HOUR = 20;
export const MAX_REVIEW_SIGNUPS_PER_HOUR = 100_000;
export const DAY_MS = 86_400_000;

export type RewardTrigger = 'referred_user' | 'conversion';
export type RewardRecipient = 'referrer' | 'referred_user';
export type RewardRuleType = 'flat' | 'percent';

export interface RewardRule {
  id: string;
  on: RewardTrigger;
  recipient: RewardRecipient;
  type: RewardRuleType;
  /** Minor units (`flat`) or basis points (`percent`). */
  amount: number;
  first_conversions?: number;
  hold_days: number;
}

/** A rule as a client sends it: `id` and `hold_days` may be left out. */
export type RewardRuleInput = Omit<RewardRule, 'id' | 'hold_days'> & { id?: string; hold_days?: number };

const ruleIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

const isInteger = (value: unknown, min: number, max: number): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;

/**
 * The rules of a create or PATCH body, checked and completed, or a 400 `validation_failed` that
 * lists every problem. The schema checks the shape too; this is what the schema cannot say (the
 * amount's range depends on `type`, `first_conversions` only on conversions, ids unique) and keeps
 * the rules safe when called with plain objects. A rule without `id` gets `rule_<position>`:
 * deterministic, so the same body gives the same ids (reward ids derive from them).
 */
export function rewardRulesInput(input: readonly RewardRuleInput[]): RewardRule[] {
  const details: ErrorDetail[] = [];
  const problem = (field: string, message: string) => details.push({ field, message });
  if (input.length > MAX_REWARD_RULES) problem('reward_rules', `must hold at most ${MAX_REWARD_RULES} rules`);
  const rules = input.map((rule, i): RewardRule => {
    const at = `reward_rules[${i}]`;
    const id = rule.id ?? `rule_${i + 1}`;
    if (!ruleIdPattern.test(id)) problem(`${at}.id`, 'must be 1-64 characters of A-Z a-z 0-9 _ -');
    if (rule.on !== 'referred_user' && rule.on !== 'conversion') {
      problem(`${at}.on`, 'must be referred_user or conversion');
    }
    if (rule.recipient !== 'referrer' && rule.recipient !== 'referred_user') {
      problem(`${at}.recipient`, 'must be referrer or referred_user');
    }
    if (rule.type === 'flat') {
      if (!isInteger(rule.amount, 1, MAX_FLAT_AMOUNT)) {
        problem(`${at}.amount`, `a flat amount must be an integer of minor units, 1 to ${MAX_FLAT_AMOUNT}`);
      }
    } else if (rule.type === 'percent') {
      if (rule.on !== 'conversion') problem(`${at}.type`, 'percent applies to conversions only');
      if (!isInteger(rule.amount, 1, MAX_BASIS_POINTS)) {
        problem(`${at}.amount`, `a percent amount must be basis points, 1 to ${MAX_BASIS_POINTS}`);
      }
    } else {
      problem(`${at}.type`, 'must be flat or percent');
    }
    if (rule.first_conversions !== undefined) {
      if (rule.on !== 'conversion') problem(`${at}.first_conversions`, 'applies to conversion rules only');
      if (!isInteger(rule.first_conversions, 1, MAX_FIRST_CONVERSIONS)) {
        problem(`${at}.first_conversions`, `must be an integer, 1 to ${MAX_FIRST_CONVERSIONS}`);
      }
    }
    const holdDays = rule.hold_days ?? DEFAULT_HOLD_DAYS;
    if (!isInteger(holdDays, 0, MAX_HOLD_DAYS))
      problem(`${at}.hold_days`, `must be an integer, 0 to ${MAX_HOLD_DAYS}`);
    return {
      id,
      on: rule.on,
      recipient: rule.recipient,
      type: rule.type,
      amount: rule.amount,
      ...(rule.first_conversions !== undefined ? { first_conversions: rule.first_conversions } : {}),
      hold_days: holdDays,
    };
  });
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    if (seen.has(rule.id)) problem(`reward_rules[${i}].id`, `repeats the id ${rule.id}`);
    seen.add(rule.id);
  });
  if (details.length > 0) throw validationError(details);
  return rules;
}

export function reviewSignupsPerHourInput(value: number): number {
  if (!isInteger(value, 1, MAX_REVIEW_SIGNUPS_PER_HOUR)) {
    throw validationError([
      {
        field: 'review_signups_per_hour',
        message: `must be an integer, 1 to ${MAX_REVIEW_SIGNUPS_PER_HOUR}`,
      },
    ]);
  }
  return value;
}

/** What a rule's reward is worth, the part of a rule a reward keeps (rules may change later). */
export type RuleTerms = Pick<RewardRule, 'type' | 'amount'>;

/**
 * The reward a rule gives for `base` minor units of sale (a signup rule has no base; pass 0 and
 * use a flat rule). Percent rounds down to the minor unit: the referrer never gets a fraction of a
 * cent more than the rate, and the rounding is the same every time the amount is computed again,
 * which refunds rely on (see `rewardsForRefund`). A flat reward on a sale stands while any of the
 * sale stands, and is nothing once it is refunded in full.
 */
export function ruleAmount(terms: RuleTerms, base: number): number {
  if (terms.type === 'flat') return base > 0 ? terms.amount : 0;
  if (base <= 0) return 0;
  return Number((BigInt(base) * BigInt(terms.amount)) / BigInt(MAX_BASIS_POINTS));
}

/**
 * One version of a campaign's rules and the instant it took effect. A campaign keeps the versions
 * of the last days (`withRuleSet`), so a signup or conversion replayed by the stream after a PATCH
 * is still rewarded by the rules in force when it was committed, under the same rule ids: a replay
 * then derives the same reward ids, and the conditional put refuses the second copy.
 */
export interface RuleSet {
  from_ms: number;
  rules: RewardRule[];
}

/** Versions superseded longer ago than this are dropped: the stream keeps records 24 h. */
export const RULE_SET_KEEP_MS = 2 * DAY_MS;
/** And never more than this many, so a campaign item stays small whatever the PATCH rate. */
export const MAX_RULE_SETS = 20;

export function rulesInForce(history: readonly RuleSet[], atMs: number): RewardRule[] {
  let found: RuleSet | undefined;
  for (const set of history) if (set.from_ms <= atMs && (!found || set.from_ms >= found.from_ms)) found = set;
  return found?.rules ?? [];
}

/** The history after a PATCH sets `rules` at `nowMs`. */
export function withRuleSet(history: readonly RuleSet[], rules: RewardRule[], nowMs: number): RuleSet[] {
  const sorted = [...history].filter((s) => s.from_ms < nowMs).sort((a, b) => a.from_ms - b.from_ms);
  const kept = sorted.filter((_, i) => {
    const supersededAt = i + 1 < sorted.length ? (sorted[i + 1] as RuleSet).from_ms : nowMs;
    return nowMs - supersededAt <= RULE_SET_KEEP_MS;
  });
  return [...kept, { from_ms: nowMs, rules }].slice(-MAX_RULE_SETS);
}
