import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/domain/errors.ts';
import { adjustmentId, parseRewardId, recipientHash, rewardId } from '../../lib/domain/reward-ids.ts';
import {
  DAY_MS,
  MAX_RULE_SETS,
  type RewardRule,
  rewardRulesInput,
  ruleAmount,
  rulesInForce,
  withRuleSet,
} from '../../lib/domain/reward-rules.ts';
import {
  approveReward,
  type Reward,
  refundEffect,
  releaseReward,
  rewardsForConversion,
  rewardsForSignup,
  selectPayout,
  voidReward,
} from '../../lib/domain/rewards.ts';

const CAMPAIGN = '3F0C2A9E-4B1D-4C5E-9F00-0123456789AB';
const T0 = Date.UTC(2026, 10, 27, 12);

function details(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return (err.details ?? []).map((d) => `${d.field}: ${d.message}`);
    throw err;
  }
  return [];
}

describe('reward_rules validation', () => {
  it('completes ids and hold days, and keeps what was given', () => {
    expect(
      rewardRulesInput([
        { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500 },
        {
          id: 'sale',
          on: 'conversion',
          recipient: 'referred_user',
          type: 'percent',
          amount: 1_000,
          first_conversions: 1,
          hold_days: 0,
        },
      ]),
    ).toEqual([
      { id: 'rule_1', on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 30 },
      {
        id: 'sale',
        on: 'conversion',
        recipient: 'referred_user',
        type: 'percent',
        amount: 1_000,
        first_conversions: 1,
        hold_days: 0,
      },
    ]);
  });

  it('refuses every rule outside the contract, naming each field', () => {
    const flat = { on: 'conversion', recipient: 'referrer', type: 'flat', amount: 1 } as const;
    expect(details(() => rewardRulesInput(Array.from({ length: 11 }, () => flat)))).toContain(
      'reward_rules: must hold at most 10 rules',
    );
    expect(details(() => rewardRulesInput([{ ...flat, type: 'percent', amount: 10_001 }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, type: 'percent', amount: 0 }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, type: 'percent', amount: 1.5 }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, amount: 0 }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, hold_days: 366 }]))).toEqual([
      'reward_rules[0].hold_days: must be an integer, 0 to 365',
    ]);
    expect(details(() => rewardRulesInput([{ ...flat, hold_days: -1 }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, on: 'referred_user', first_conversions: 1 }]))).toEqual(
      ['reward_rules[0].first_conversions: applies to conversion rules only'],
    );
    expect(
      details(() => rewardRulesInput([{ ...flat, on: 'referred_user', type: 'percent', amount: 100 }])),
    ).toEqual(['reward_rules[0].type: percent applies to conversions only']);
    expect(
      details(() =>
        rewardRulesInput([
          { ...flat, id: 'a' },
          { ...flat, id: 'a' },
        ]),
      ),
    ).toEqual(['reward_rules[1].id: repeats the id a']);
    expect(details(() => rewardRulesInput([{ ...flat, id: 'a b' }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([{ ...flat, on: 'visit' as 'conversion' }]))).toHaveLength(1);
    expect(details(() => rewardRulesInput([]))).toEqual([]);
    expect(details(() => rewardRulesInput(Array.from({ length: 10 }, () => flat)))).toEqual([]);
  });
});

describe('amounts', () => {
  it('rounds percent down to the minor unit, exactly beyond 2^53', () => {
    expect(ruleAmount({ type: 'percent', amount: 1_000 }, 999)).toBe(99);
    expect(ruleAmount({ type: 'percent', amount: 1 }, 9_999)).toBe(0);
    expect(ruleAmount({ type: 'percent', amount: 10_000 }, 1)).toBe(1);
    // 10^12 × 9,999 is past 2^53: a float product would be off.
    expect(ruleAmount({ type: 'percent', amount: 9_999 }, 999_999_999_999)).toBe(999_899_999_999);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e12 }), fc.integer({ min: 1, max: 10_000 }), (base, bps) => {
        const got = ruleAmount({ type: 'percent', amount: bps }, base);
        expect(BigInt(got) * 10_000n <= BigInt(base) * BigInt(bps)).toBe(true);
        expect(BigInt(got + 1) * 10_000n > BigInt(base) * BigInt(bps)).toBe(true);
      }),
    );
  });

  it('gives a flat amount while any of the sale stands', () => {
    expect(ruleAmount({ type: 'flat', amount: 500 }, 1)).toBe(500);
    expect(ruleAmount({ type: 'flat', amount: 500 }, 0)).toBe(0);
  });
});

describe('rules in force', () => {
  const a: RewardRule[] = [
    { id: 'a', on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 1, hold_days: 0 },
  ];
  const b: RewardRule[] = [{ ...(a[0] as RewardRule), id: 'b' }];

  it('rewards an event by the rules of its own instant, also when replayed after a change', () => {
    const history = withRuleSet(withRuleSet([], a, T0), b, T0 + 1_000);
    expect(rulesInForce(history, T0 - 1)).toEqual([]);
    expect(rulesInForce(history, T0 + 999)).toEqual(a);
    expect(rulesInForce(history, T0 + 1_000)).toEqual(b);
  });

  it('keeps the versions a replay can still need, and a bounded number', () => {
    const history = withRuleSet(withRuleSet([], a, T0), b, T0 + 1);
    expect(withRuleSet(history, a, T0 + 1 + 2 * DAY_MS)).toHaveLength(3);
    expect(withRuleSet(history, a, T0 + 2 + 2 * DAY_MS).map((s) => s.rules)).toEqual([b, a]);
    let many = history;
    for (let i = 2; i < 40; i++) many = withRuleSet(many, a, T0 + i);
    expect(many).toHaveLength(MAX_RULE_SETS);
  });
});

describe('reward ids', () => {
  const source = {
    campaignId: CAMPAIGN,
    recipient: 'referrer' as const,
    recipientId: 'alice#1',
    ruleId: 'rule_1',
    sourceType: 'conversion' as const,
    sourceId: '42',
  };

  it('derives the same id from the same rule and source, and another from anything else', () => {
    expect(rewardId(source)).toBe(rewardId({ ...source, campaignId: CAMPAIGN.toLowerCase() }));
    expect(rewardId(source)).toMatch(/^rw_[A-Za-z0-9_-]{54}$/);
    const others = [
      { ...source, ruleId: 'rule_2' },
      { ...source, sourceId: '43' },
      { ...source, sourceType: 'referred_user' as const },
      { ...source, recipient: 'referred_user' as const },
      { ...source, recipientId: 'alice' },
    ].map(rewardId);
    expect(new Set([rewardId(source), ...others]).size).toBe(6);
  });

  it('says where the reward is stored, and refuses anything else', () => {
    const id = rewardId(source);
    expect(parseRewardId(id)).toEqual({
      campaignId: CAMPAIGN.toLowerCase(),
      recipientHash: recipientHash('referrer', 'alice#1'),
      key: expect.stringMatching(/^[0-9a-f]{24}$/),
    });
    const adjustment = adjustmentId(id, 300);
    expect(adjustment).toBe(adjustmentId(id, 300));
    expect(adjustment).not.toBe(adjustmentId(id, 301));
    expect(parseRewardId(adjustment)?.recipientHash).toBe(recipientHash('referrer', 'alice#1'));
    for (const bad of ['', 'rw_', `${id}x`, id.slice(1), `rw_${'!'.repeat(54)}`, id.replace('rw_', 'rx_')]) {
      expect(parseRewardId(bad)).toBeUndefined();
    }
  });
});

describe('rewards of a signup and a conversion', () => {
  const rules = rewardRulesInput([
    { id: 'join', on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 1 },
    {
      id: 'welcome',
      on: 'referred_user',
      recipient: 'referred_user',
      type: 'flat',
      amount: 200,
      hold_days: 0,
    },
    {
      id: 'sale',
      on: 'conversion',
      recipient: 'referrer',
      type: 'percent',
      amount: 1_000,
      first_conversions: 2,
    },
  ]);
  const campaign = { id: CAMPAIGN, currency: 'EUR', reward_rules: rules };

  it('pays both sides of a signup, and no referrer reward for a link without one', () => {
    const both = rewardsForSignup(campaign, {
      referred_user_id: 'bob',
      referrer_id: 'alice',
      created_ms: T0,
    });
    expect(both.map((r) => [r.rule_id, r.recipient_id, r.amount, r.status, r.available_ms - T0])).toEqual([
      ['join', 'alice', 500, 'pending', DAY_MS],
      ['welcome', 'bob', 200, 'pending', 0],
    ]);
    expect(
      rewardsForSignup(campaign, { referred_user_id: 'bob', referrer_id: null, created_ms: T0 }),
    ).toHaveLength(1);
    const flagged = rewardsForSignup(
      campaign,
      { referred_user_id: 'bob', referrer_id: 'alice', created_ms: T0 },
      ['repeat_visitor'],
    );
    expect(flagged.map((r) => [r.status, r.review_reasons])).toEqual([
      ['in_review', ['repeat_visitor']],
      ['in_review', ['repeat_visitor']],
    ]);
    expect(flagged.map((r) => r.id)).toEqual(both.map((r) => r.id));
  });

  it('rewards only the first conversions, and nothing that rounds to 0', () => {
    const sale = {
      id: '7',
      referred_user_id: 'bob',
      referrer_id: 'alice',
      amount: 1_999,
      refunded_amount: 0,
      created_ms: T0,
    };
    expect(rewardsForConversion(campaign, sale, 0).map((r) => [r.rule_id, r.amount, r.currency])).toEqual([
      ['sale', 199, 'EUR'],
    ]);
    expect(rewardsForConversion(campaign, sale, 1)).toHaveLength(1);
    expect(rewardsForConversion(campaign, sale, 2)).toEqual([]);
    expect(rewardsForConversion(campaign, { ...sale, amount: 9 }, 0)).toEqual([]);
  });
});

describe('refunds, transitions and payouts', () => {
  const campaign = {
    id: CAMPAIGN,
    currency: 'USD',
    reward_rules: rewardRulesInput([
      { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1_000, hold_days: 10 },
    ]),
  };
  const sale = {
    id: '7',
    referred_user_id: 'bob',
    referrer_id: 'alice',
    amount: 10_000,
    refunded_amount: 0,
    created_ms: T0,
  };
  const [reward] = rewardsForConversion(campaign, sale, 0) as [Reward];

  it('lowers an unpaid reward by an adjustment that follows it, and voids it when all is refunded', () => {
    const partial = refundEffect(
      { reward, adjustments: [] },
      { amount: 10_000, refunded_amount: 2_505 },
      T0 + 5,
    );
    expect(partial?.kind).toBe('adjust');
    if (partial?.kind !== 'adjust') return;
    // 10 % of 7,495 is 749 (rounded down): the adjustment is 749 - 1,000.
    expect(partial.adjustment).toMatchObject({
      amount: -251,
      status: 'pending',
      available_ms: reward.available_ms,
      adjusts: reward.id,
    });
    expect(partial.parent.adjusted).toBe(-251);
    // A replay of the same refund changes nothing.
    expect(
      refundEffect(
        { reward: partial.parent, adjustments: [partial.adjustment] },
        { amount: 10_000, refunded_amount: 2_505 },
        T0 + 6,
      ),
    ).toBeUndefined();
    const full = refundEffect(
      { reward: partial.parent, adjustments: [partial.adjustment] },
      { amount: 10_000, refunded_amount: 10_000 },
      T0 + 7,
    );
    expect(full?.kind === 'void' && full.changed.map((r) => [r.kind, r.status, r.void_reason])).toEqual([
      ['reward', 'voided', 'refunded'],
      ['adjustment', 'voided', 'refunded'],
    ]);
  });

  it('claws back a paid reward with an approved adjustment', () => {
    const paid: Reward = { ...reward, status: 'paid', payout_id: 'po_1' };
    const effect = refundEffect(
      { reward: paid, adjustments: [] },
      { amount: 10_000, refunded_amount: 10_000 },
      T0 + 99,
    );
    expect(effect?.kind === 'adjust' && effect.adjustment).toMatchObject({
      amount: -1_000,
      status: 'approved',
      available_ms: T0 + 99,
    });
  });

  it('moves a reward through its states, its followers with it', () => {
    const follower: Reward = {
      ...reward,
      id: adjustmentId(reward.id, 1),
      kind: 'adjustment',
      adjusts: reward.id,
      amount: -1,
    };
    const inReview: Reward = { ...reward, status: 'in_review', adjusted: -1 };
    const approved = approveReward(
      { reward: inReview, adjustments: [{ ...follower, status: 'in_review' }] },
      T0,
    );
    expect(approved.ok && approved.changed.map((r) => r.status)).toEqual(['pending', 'pending']);
    expect(releaseReward({ reward, adjustments: [] }, reward.available_ms - 1)).toEqual({
      ok: false,
      error: 'not_due',
    });
    const released = releaseReward({ reward, adjustments: [follower] }, reward.available_ms);
    expect(released.ok && released.changed.map((r) => r.status)).toEqual(['approved', 'approved']);
    const early = approveReward({ reward, adjustments: [] }, T0 + 1);
    expect(early.ok && early.changed[0]).toMatchObject({ status: 'approved', available_ms: T0 + 1 });
    expect(approveReward({ reward: { ...reward, status: 'approved' }, adjustments: [] }, T0)).toEqual({
      ok: false,
      error: 'invalid_state',
    });
    expect(voidReward({ reward: { ...reward, status: 'paid' }, adjustments: [] }, undefined, 'x')).toEqual({
      ok: false,
      error: 'reward_paid',
    });
    expect(voidReward({ reward: follower, adjustments: [] }, reward, 'x')).toEqual({
      ok: false,
      error: 'follows_reward',
    });
    const forgiven = voidReward(
      { reward: { ...follower, status: 'approved' }, adjustments: [] },
      { ...reward, status: 'paid' },
      'x',
    );
    expect(forgiven.ok && forgiven.changed.map((r) => [r.status, r.void_reason])).toEqual([['voided', 'x']]);
  });

  it('nets clawbacks first, pays nothing when they exceed what is approved, and at most 98 rewards', () => {
    const approved = (n: number, amount: number, extra: Partial<Reward> = {}): Reward => ({
      ...reward,
      id: `r${n}`,
      amount,
      status: 'approved',
      available_ms: T0 + n,
      ...extra,
    });
    const parent = approved(0, 1_000, { status: 'paid' });
    const clawback = approved(50, -300, { kind: 'adjustment', adjusts: 'r0' });
    const a = approved(1, 200);
    const b = approved(2, 400);
    expect(selectPayout([parent, clawback, a, b])).toMatchObject({ ok: true, amount: 300, hasMore: false });
    expect(selectPayout([parent, clawback, a])).toEqual({ ok: false, error: 'nothing_to_pay' });
    expect(selectPayout([parent])).toEqual({ ok: false, error: 'nothing_to_pay' });
    const many = Array.from({ length: 150 }, (_, i) => approved(i + 1, 10, { id: `m${i}` }));
    const first = selectPayout([parent, clawback, ...many]);
    expect(first.ok && [first.rewards.length, first.rewards[0]?.id, first.amount, first.hasMore]).toEqual([
      98,
      'r50',
      97 * 10 - 300,
      true,
    ]);
  });
});
