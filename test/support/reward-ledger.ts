/**
 * An in-memory rewards ledger: the pure rules of `lib/domain/rewards.ts` applied with the same
 * conditional writes `lib/db/rewards.ts` makes in DynamoDB (a put only if absent; a change only if
 * each reward read is still in the state and version it was read in; a payout all or nothing), so
 * the property tests can run random sequences, concurrent ones included, and check the contract's
 * invariants after every step.
 *
 * Concurrency is modelled as interleavings: an operation is planned against the ledger as it is
 * (the reads), and committed later (the conditional write), possibly after another operation
 * committed in between; a commit whose conditions fail changes nothing, and the operation runs
 * again, as the storage code retries.
 */
import { ruleAmount } from '../../lib/domain/reward-rules.ts';
import {
  approveReward,
  balanceOf,
  type Conversion,
  type FamilyChange,
  payRewards,
  type ReviewReason,
  type Reward,
  type RewardCampaign,
  type RewardStatus,
  refundEffect,
  releaseReward,
  rewardsForConversion,
  rewardsForSignup,
  type Signup,
  selectPayout,
  voidReward,
} from '../../lib/domain/rewards.ts';

export interface Payout {
  id: string;
  recipient: string;
  amount: number;
  reward_ids: string[];
}

/** A conditional write: every read reward unchanged, every new id absent; then the changes. */
export interface Commit {
  read: Reward[];
  created: Reward[];
  changed: Reward[];
  payout?: Payout;
}

export type Outcome = 'committed' | 'exists' | 'conflict';

const ALLOWED: Record<RewardStatus, readonly RewardStatus[]> = {
  in_review: ['pending', 'voided'],
  pending: ['approved', 'voided'],
  approved: ['paid', 'voided'],
  paid: [],
  voided: [],
};

export const recipientKey = (r: Pick<Reward, 'recipient' | 'recipient_id'>) =>
  `${r.recipient}:${r.recipient_id}`;

export class RewardLedger {
  readonly rewards = new Map<string, Reward>();
  readonly payouts: Payout[] = [];
  readonly conversions = new Map<string, Conversion>();
  readonly signups = new Map<string, Signup & { reasons: ReviewReason[] }>();
  /** Amounts as they were created, per recipient: an append-only journal the balance must match. */
  readonly journal = new Map<string, number>();
  /** Every state each reward went through, in order. */
  readonly paths = new Map<string, RewardStatus[]>();
  readonly violations: string[] = [];
  private payoutSeq = 0;
  now: number;

  constructor(
    readonly campaign: RewardCampaign,
    start: number,
  ) {
    this.now = start;
  }

  commit(c: Commit): Outcome {
    for (const r of c.read) {
      const current = this.rewards.get(r.id);
      if (!current || current.status !== r.status || current.adjusted !== r.adjusted) return 'conflict';
    }
    if (c.created.some((r) => this.rewards.has(r.id))) {
      // A creation that finds its reward made already is done: the replay the key exists for.
      return c.read.length === 0 ? 'exists' : 'conflict';
    }
    for (const r of c.created) {
      this.rewards.set(r.id, r);
      this.paths.set(r.id, [r.status]);
      this.journal.set(recipientKey(r), (this.journal.get(recipientKey(r)) ?? 0) + r.amount);
    }
    for (const r of c.changed) {
      const before = this.rewards.get(r.id);
      if (!before) throw new Error(`changed a reward that does not exist: ${r.id}`);
      if (before.status !== r.status && !ALLOWED[before.status].includes(r.status)) {
        this.violations.push(`${r.id}: ${before.status} -> ${r.status}`);
      }
      if (before.amount !== r.amount) this.violations.push(`${r.id}: amount edited in place`);
      this.rewards.set(r.id, r);
      if (before.status !== r.status) this.paths.get(r.id)?.push(r.status);
    }
    if (c.payout) this.payouts.push(c.payout);
    return 'committed';
  }

  /** Creation exactly once: each reward put only if its id is absent (a replay finds it present). */
  private create(rewards: Reward[]): Commit[] {
    return rewards.map((r) => ({ read: [], created: [r], changed: [] }));
  }

  signup(signup: Signup, reasons: ReviewReason[]): Commit[] {
    const known = this.signups.get(signup.referred_user_id);
    const s = known ?? { ...signup, reasons };
    this.signups.set(s.referred_user_id, s);
    return this.create(rewardsForSignup(this.campaign, s, s.reasons));
  }

  convert(conversion: Conversion): Commit[] {
    const known = this.conversions.get(conversion.id);
    const c = known ?? conversion;
    this.conversions.set(c.id, c);
    // The referred user's conversions before this one, in commit order (a counter on the referred
    // user in storage); a replay finds the same number.
    const ofUser = [...this.conversions.values()].filter((o) => o.referred_user_id === c.referred_user_id);
    const prior = ofUser.findIndex((o) => o.id === c.id);
    return this.create(
      rewardsForConversion(this.campaign, c, prior, this.signups.get(c.referred_user_id)?.reasons),
    );
  }

  /** The conversion's own write (its refunded amount raised), as conv-sales does it, atomically. */
  refundConversion(id: string, amount: number): boolean {
    const c = this.conversions.get(id);
    if (!c || amount <= 0 || c.refunded_amount + amount > c.amount) return false;
    this.conversions.set(id, { ...c, refunded_amount: c.refunded_amount + amount });
    return true;
  }

  family(reward: Reward): FamilyChange {
    return { reward, adjustments: [...this.rewards.values()].filter((r) => r.adjusts === reward.id) };
  }

  /** What the refund's event does to the conversion's rewards (the stream's job), one commit each. */
  refundEffects(conversionId: string): Commit[] {
    const c = this.conversions.get(conversionId);
    if (!c) return [];
    const commits: Commit[] = [];
    for (const reward of this.rewards.values()) {
      if (
        reward.kind !== 'reward' ||
        reward.source_type !== 'conversion' ||
        reward.source_id !== conversionId
      )
        continue;
      const family = this.family(reward);
      const effect = refundEffect(family, c, this.now);
      if (!effect) continue;
      commits.push(
        effect.kind === 'void'
          ? { read: [reward, ...family.adjustments], created: [], changed: effect.changed }
          : { read: [reward], created: [effect.adjustment], changed: [effect.parent] },
      );
    }
    return commits;
  }

  approve(id: string): Commit | undefined {
    const reward = this.rewards.get(id);
    if (!reward) return undefined;
    const family = this.family(reward);
    const t = approveReward(family, this.now);
    return t.ok ? { read: [reward, ...family.adjustments], created: [], changed: t.changed } : undefined;
  }

  void(id: string): Commit | undefined {
    const reward = this.rewards.get(id);
    if (!reward) return undefined;
    const family = this.family(reward);
    const parent = reward.adjusts ? this.rewards.get(reward.adjusts) : undefined;
    const t = voidReward(family, parent, 'test');
    return t.ok
      ? {
          read: [reward, ...family.adjustments, ...(parent ? [parent] : [])],
          created: [],
          changed: t.changed,
        }
      : undefined;
  }

  /** The scheduled job: every due pending reward, one commit each. */
  release(): Commit[] {
    const commits: Commit[] = [];
    for (const reward of this.rewards.values()) {
      if (reward.kind !== 'reward' || reward.status !== 'pending' || reward.available_ms > this.now) continue;
      const family = this.family(reward);
      const t = releaseReward(family, this.now);
      if (t.ok) commits.push({ read: [reward, ...family.adjustments], created: [], changed: t.changed });
    }
    return commits;
  }

  recipientRewards(recipient: string): Reward[] {
    return [...this.rewards.values()].filter((r) => recipientKey(r) === recipient);
  }

  payout(recipient: string): Commit | undefined {
    const rewards = this.recipientRewards(recipient);
    const selection = selectPayout(rewards);
    if (!selection.ok) return undefined;
    const net = balanceOf(rewards).approved;
    if (selection.amount > net)
      this.violations.push(`payout of ${selection.amount} over the approved net ${net}`);
    const id = `po_${++this.payoutSeq}`;
    // The payout reads each reward it pays and each of their adjustments (a refund that adds one
    // in between must make the payout fail and run again, not pay a reward without it).
    const parents = selection.rewards.filter((r) => r.kind === 'reward');
    const read = [...selection.rewards, ...parents.flatMap((p) => this.family(p).adjustments)];
    return {
      read: [...new Map(read.map((r) => [r.id, r])).values()],
      created: [],
      changed: payRewards(selection.rewards, id),
      payout: { id, recipient, amount: selection.amount, reward_ids: selection.rewards.map((r) => r.id) },
    };
  }

  /** Plans and commits, running a conflicting plan again, as the storage code retries. */
  run(plan: () => Commit | Commit[] | undefined): void {
    for (let attempt = 0; attempt < 5; attempt++) {
      const commits = [plan()].flat().filter((c): c is Commit => c !== undefined);
      if (commits.map((c) => this.commit(c)).every((o) => o !== 'conflict')) return;
    }
    this.violations.push('an operation kept conflicting with nothing running beside it');
  }

  /** The contract's invariants and this ledger's own; a list of what is broken (empty: none). */
  check(): string[] {
    return [
      ...this.violations,
      ...ledgerViolations({
        rewards: [...this.rewards.values()],
        payouts: this.payouts,
        conversions: this.conversions,
        journal: this.journal,
        paths: this.paths,
      }),
    ];
  }
}

/**
 * The contract's ledger invariants over a ledger's state, wherever it was read from (this model,
 * or DynamoDB in test/integration/rewards-ledger.test.ts): `journal` is what was created per
 * recipient, as the creators reported it; `paths` the states each reward went through, if known.
 */
export function ledgerViolations(ledger: {
  rewards: readonly Reward[];
  payouts: readonly Payout[];
  conversions: ReadonlyMap<string, Conversion>;
  journal: ReadonlyMap<string, number>;
  paths?: ReadonlyMap<string, RewardStatus[]>;
}): string[] {
  const broken: string[] = [];
  const all = ledger.rewards;
  const byId = new Map(all.map((r) => [r.id, r]));
  for (const [recipient, created] of ledger.journal) {
    const b = balanceOf(all.filter((r) => recipientKey(r) === recipient));
    const parts = b.in_review + b.pending + b.approved + b.paid + b.voided;
    if (parts !== created) broken.push(`${recipient}: balance parts ${parts} != created ${created}`);
    const paidOut = ledger.payouts.filter((p) => p.recipient === recipient).reduce((s, p) => s + p.amount, 0);
    if (b.paid !== paidOut) broken.push(`${recipient}: paid ${b.paid} != payouts ${paidOut}`);
  }
  const paidIn = new Map<string, string>();
  for (const p of ledger.payouts) {
    let sum = 0;
    for (const id of p.reward_ids) {
      const r = byId.get(id);
      if (paidIn.has(id)) broken.push(`${id} paid twice (${paidIn.get(id)}, ${p.id})`);
      paidIn.set(id, p.id);
      if (r?.status !== 'paid' || r.payout_id !== p.id) broken.push(`${id} in ${p.id} but not paid by it`);
      sum += r?.amount ?? 0;
    }
    if (sum !== p.amount) broken.push(`${p.id}: amount ${p.amount} != its rewards ${sum}`);
    if (p.amount <= 0) broken.push(`${p.id}: amount ${p.amount} is not positive`);
  }
  for (const r of all) {
    const path = ledger.paths?.get(r.id) ?? [];
    if (r.status === 'paid' && paidIn.get(r.id) !== r.payout_id) broken.push(`${r.id} paid outside a payout`);
    if (path.includes('voided') && path.indexOf('voided') !== path.length - 1)
      broken.push(`${r.id} left voided`);
    if (path.includes('paid') && path.includes('voided')) broken.push(`${r.id} paid and voided`);
    if (r.status !== 'paid' && r.payout_id !== null) broken.push(`${r.id} has a payout but is ${r.status}`);
    if (r.kind === 'reward' ? r.amount <= 0 : r.amount >= 0) broken.push(`${r.id}: ${r.kind} of ${r.amount}`);
    if (r.kind !== 'reward') continue;
    const adjustments = all.filter((a) => a.adjusts === r.id);
    const adjusted = adjustments.reduce((s, a) => s + a.amount, 0);
    if (adjusted !== r.adjusted)
      broken.push(`${r.id}: adjusted ${r.adjusted} != its adjustments ${adjusted}`);
    if (r.status !== 'paid' && adjustments.some((a) => a.status !== r.status)) {
      broken.push(`${r.id} (${r.status}) has an adjustment in another state`);
    }
    const c = r.source_type === 'conversion' ? ledger.conversions.get(r.source_id) : undefined;
    if (c && r.status !== 'voided') {
      // Never pay what was refunded: the reward and its adjustments are what the rule gives on the net sale.
      const due = ruleAmount(r.terms, c.amount - c.refunded_amount);
      if (r.amount + r.adjusted !== due)
        broken.push(`${r.id}: nets ${r.amount + r.adjusted}, the rule gives ${due}`);
    }
  }
  return broken;
}
