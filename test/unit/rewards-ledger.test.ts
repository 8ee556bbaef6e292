/**
 * The rewards ledger's invariants (contract, "Rewards") as properties: random sequences of
 * signups, conversions, partial and full refunds, replays, approvals, voids, hold expiries and
 * payouts, some of them interleaved (two operations planned on the same state, committed one after
 * the other), run through the pure rules on the in-memory ledger of test/support/reward-ledger.ts.
 * On a failure fast-check prints the seed and the shrunk sequence.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DAY_MS, type RewardRuleInput, rewardRulesInput } from '../../lib/domain/reward-rules.ts';
import { balanceOf, type ReviewReason } from '../../lib/domain/rewards.ts';
import { type Commit, RewardLedger, recipientKey } from '../support/reward-ledger.ts';

const CAMPAIGN = '3f0c2a9e-4b1d-4c5e-9f00-0123456789ab';
const START = Date.UTC(2026, 10, 27, 12);
const REFERRERS = ['alice', 'bob', null] as const;
const USERS = ['u1', 'u2', 'u3', 'u4', 'u5'] as const;

const ruleArb: fc.Arbitrary<RewardRuleInput> = fc.oneof(
  fc.record({
    on: fc.constant('referred_user' as const),
    recipient: fc.constantFrom('referrer' as const, 'referred_user' as const),
    type: fc.constant('flat' as const),
    amount: fc.integer({ min: 1, max: 5_000 }),
    hold_days: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record(
    {
      on: fc.constant('conversion' as const),
      recipient: fc.constantFrom('referrer' as const, 'referred_user' as const),
      type: fc.constantFrom('flat' as const, 'percent' as const),
      amount: fc.integer({ min: 1, max: 10_000 }),
      first_conversions: fc.integer({ min: 1, max: 3 }),
      hold_days: fc.integer({ min: 0, max: 3 }),
    },
    { requiredKeys: ['on', 'recipient', 'type', 'amount', 'hold_days'] },
  ),
);

type Step =
  | { op: 'signup'; user: number; referrer: number; reasons: ReviewReason[] }
  | { op: 'convert'; user: number; amount: number }
  | { op: 'replay'; pick: number }
  | { op: 'refund'; pick: number; part: number }
  | { op: 'approve'; pick: number }
  | { op: 'void'; pick: number }
  | { op: 'advance'; ms: number }
  | { op: 'payout'; recipient: number }
  | { op: 'together'; first: Concurrent; second: Concurrent };

type Concurrent =
  | { op: 'payout'; recipient: number }
  | { op: 'approve'; pick: number }
  | { op: 'void'; pick: number }
  | { op: 'refund'; pick: number; part: number };

const pick = fc.nat({ max: 1_000 });
const recipient = fc.nat({ max: 20 });
const concurrentArb: fc.Arbitrary<Concurrent> = fc.oneof(
  fc.record({ op: fc.constant('payout' as const), recipient }),
  fc.record({ op: fc.constant('approve' as const), pick }),
  fc.record({ op: fc.constant('void' as const), pick }),
  fc.record({ op: fc.constant('refund' as const), pick, part: fc.integer({ min: 1, max: 4 }) }),
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('signup' as const),
      user: fc.nat({ max: USERS.length - 1 }),
      referrer: fc.nat({ max: REFERRERS.length - 1 }),
      reasons: fc.subarray<ReviewReason>(['referrer_signups_per_hour', 'repeat_visitor']),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('convert' as const),
      user: fc.nat({ max: USERS.length - 1 }),
      amount: fc.oneof(fc.integer({ min: 1, max: 100_000 }), fc.constant(1_000_000_000_000)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('replay' as const), pick }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('refund' as const), pick, part: fc.integer({ min: 1, max: 4 }) }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('approve' as const), pick }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('void' as const), pick }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 1, max: 3_600_000 }), fc.integer({ min: 1, max: 2 * DAY_MS })),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('payout' as const), recipient }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('together' as const),
      first: concurrentArb,
      second: concurrentArb,
    }),
  },
);

const at = <T>(items: readonly T[], i: number): T | undefined =>
  items.length ? items[i % items.length] : undefined;

function recipients(ledger: RewardLedger): string[] {
  return [...new Set([...ledger.rewards.values()].map(recipientKey))].sort();
}

/** The plan of a step that can race another: what it reads now, to commit later. */
function plan(ledger: RewardLedger, step: Concurrent): () => Commit[] {
  const ids = [...ledger.rewards.keys()].sort();
  const conversions = [...ledger.conversions.keys()].sort();
  switch (step.op) {
    case 'payout': {
      const who = at(recipients(ledger), step.recipient);
      return () => [who ? ledger.payout(who) : undefined].filter((c): c is Commit => c !== undefined);
    }
    case 'approve': {
      const id = at(ids, step.pick);
      return () => [id ? ledger.approve(id) : undefined].filter((c): c is Commit => c !== undefined);
    }
    case 'void': {
      const id = at(ids, step.pick);
      return () => [id ? ledger.void(id) : undefined].filter((c): c is Commit => c !== undefined);
    }
    case 'refund': {
      // The conversion's own write happens now (its counter is exact on its own: conv-sales); the
      // race is between the effects on its rewards.
      const id = at(conversions, step.pick);
      const c = id ? ledger.conversions.get(id) : undefined;
      if (id && c) {
        const left = c.amount - c.refunded_amount;
        ledger.refundConversion(id, step.part === 4 ? left : Math.max(1, Math.floor((left * step.part) / 4)));
      }
      return () => (id ? ledger.refundEffects(id) : []);
    }
  }
}

function apply(ledger: RewardLedger, step: Step, counter: { conversions: number }): void {
  switch (step.op) {
    case 'signup': {
      const user = USERS[step.user] as string;
      const referrer = REFERRERS[step.referrer] ?? null;
      ledger.run(() =>
        ledger.signup(
          { referred_user_id: user, referrer_id: referrer, created_ms: ledger.now },
          step.reasons,
        ),
      );
      return;
    }
    case 'convert': {
      const user = USERS[step.user] as string;
      const signup = ledger.signups.get(user);
      if (!signup) return;
      const id = `cv_${++counter.conversions}`;
      ledger.run(() =>
        ledger.convert({
          id,
          referred_user_id: user,
          referrer_id: signup.referrer_id,
          amount: step.amount,
          refunded_amount: 0,
          created_ms: ledger.now,
        }),
      );
      return;
    }
    case 'replay': {
      // A stream batch replayed, or a consumer killed mid-batch and run again: every source's
      // rewards and every refund's effects computed and written again.
      for (const s of ledger.signups.values()) ledger.run(() => ledger.signup(s, s.reasons));
      for (const c of ledger.conversions.values()) {
        ledger.run(() => ledger.convert(c));
        ledger.run(() => ledger.refundEffects(c.id));
      }
      return;
    }
    case 'advance': {
      ledger.now += step.ms;
      // The scheduled release runs every minute: after a step it has caught up.
      ledger.run(() => ledger.release());
      const late = [...ledger.rewards.values()].filter(
        (r) => r.kind === 'reward' && r.status === 'pending' && r.available_ms <= ledger.now,
      );
      expect(late.map((r) => r.id)).toEqual([]);
      return;
    }
    case 'together': {
      const first = plan(ledger, step.first);
      const second = plan(ledger, step.second);
      const firstCommits = first();
      const secondCommits = second();
      // Each plan's commits, the first's before the second's; a conflicting one runs again.
      for (const [commits, again] of [
        [firstCommits, first],
        [secondCommits, second],
      ] as const) {
        if (commits.map((c) => ledger.commit(c)).includes('conflict')) ledger.run(again);
      }
      return;
    }
    default: {
      const run = plan(ledger, step);
      ledger.run(run);
    }
  }
}

describe('the rewards ledger, as properties over random sequences', () => {
  it('keeps every invariant of the contract after every step', () => {
    fc.assert(
      fc.property(
        fc.array(ruleArb, { minLength: 1, maxLength: 4 }),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        (rules, steps) => {
          const ledger = new RewardLedger(
            { id: CAMPAIGN, currency: 'USD', reward_rules: rewardRulesInput(rules) },
            START,
          );
          const counter = { conversions: 0 };
          for (const step of steps) {
            apply(ledger, step, counter);
            expect(ledger.check()).toEqual([]);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('pays each reward once when two payouts of one recipient run at the same time', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 120 }),
        (amounts) => {
          const ledger = new RewardLedger(
            {
              id: CAMPAIGN,
              currency: 'USD',
              reward_rules: rewardRulesInput([
                { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1_000, hold_days: 0 },
              ]),
            },
            START,
          );
          ledger.run(() =>
            ledger.signup({ referred_user_id: 'u1', referrer_id: 'alice', created_ms: START }, []),
          );
          for (const [i, amount] of amounts.entries()) {
            ledger.run(() =>
              ledger.convert({
                id: `cv_${i}`,
                referred_user_id: 'u1',
                referrer_id: 'alice',
                amount,
                refunded_amount: 0,
                created_ms: START + i,
              }),
            );
          }
          ledger.now += 1_000;
          ledger.run(() => ledger.release());
          const approved = balanceOf(ledger.recipientRewards('referrer:alice')).approved;
          const a = ledger.payout('referrer:alice');
          const b = ledger.payout('referrer:alice');
          if (!a || !b) return; // nothing approved (every percent rounded to 0)
          expect(ledger.commit(a)).toBe('committed');
          // The loser's conditions fail on every reward the winner paid: it runs again on what is left.
          expect(ledger.commit(b)).toBe('conflict');
          if (amounts.length <= 98) expect(ledger.payout('referrer:alice')).toBeUndefined();
          // Over 98 rewards, the rest waits for the next payouts, 98 at most each.
          for (let next = ledger.payout('referrer:alice'); next; next = ledger.payout('referrer:alice')) {
            expect(ledger.commit(next)).toBe('committed');
          }
          expect(ledger.check()).toEqual([]);
          expect(ledger.payouts.reduce((s, p) => s + p.amount, 0)).toBe(approved);
          expect(ledger.payouts.every((p) => p.reward_ids.length <= 98)).toBe(true);
          expect(ledger.payouts).toHaveLength(
            Math.ceil(ledger.payouts.flatMap((p) => p.reward_ids).length / 98),
          );
        },
      ),
      { numRuns: 100 },
    );
  });
});
