/**
 * The rewards ledger's storage (lib/db/rewards.ts) on DynamoDB Local: creation exactly once under
 * replays, the scheduled release through the due index, refunds, balances, and payouts, two at
 * once. The endpoints (27-32) are not built yet, so the writes are called in-process on the run's
 * table, with campaigns made through the API (so deletion and its checks are the real ones), and
 * rewards from the pure rules with plain sources, as the stream consumers will call them.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { payoutFromItem } from '../../lib/db/entities/payout.ts';
import { rewardFromItem } from '../../lib/db/entities/reward.ts';
import { rewardRulesInput } from '../../lib/domain/reward-rules.ts';
import type { Conversion, Reward, RewardCampaign } from '../../lib/domain/rewards.ts';
import { eventually } from '../../tools/wait.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { createCampaign } from '../support/records.ts';
import { ledgerViolations, recipientKey } from '../support/reward-ledger.ts';
import { campaignItems, configureInProcessHandlers } from '../support/table.ts';

type Store = typeof import('../../lib/db/rewards.ts');
type Domain = typeof import('../../lib/domain/rewards.ts');
let store: Store;
let domain: Domain;

beforeAll(async () => {
  configureInProcessHandlers();
  store = await import('../../lib/db/rewards.ts');
  domain = await import('../../lib/domain/rewards.ts');
});

const tenant = TENANT_A.tenant;
const HOUR = 3_600_000;

async function campaignWith(rules: Parameters<typeof rewardRulesInput>[0]): Promise<RewardCampaign> {
  const { id } = await createCampaign();
  return { id, currency: 'USD', reward_rules: rewardRulesInput(rules) };
}

let sales = 0;
function sale(amount: number, createdMs: number, referredUser = 'bob'): Conversion {
  return {
    id: `${++sales}`,
    referred_user_id: referredUser,
    referrer_id: 'alice',
    amount,
    refunded_amount: 0,
    created_ms: createdMs,
  };
}

const rewardItemsOf = (campaignId: string) => campaignItems(tenant, campaignId, 'RW#');

/** Releases until the due index has nothing due left (other files' rewards included). */
async function releaseAll(nowMs: number): Promise<void> {
  for (let more = true; more; ) more = (await store.releaseDueRewards(nowMs)).more;
}

async function statusesOf(campaign: RewardCampaign, recipient: 'referrer' | 'referred_user', id: string) {
  const stored = await store.recipientRewards(tenant, campaign.id, recipient, id);
  return stored.map((s) => s.reward.status).sort();
}

describe('reward creation', () => {
  it('creates each reward exactly once, however often and however concurrently a source is replayed', async () => {
    const campaign = await campaignWith([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500 },
      { on: 'referred_user', recipient: 'referred_user', type: 'flat', amount: 200 },
    ]);
    const rewards = domain.rewardsForSignup(campaign, {
      referred_user_id: 'bob',
      referrer_id: 'alice',
      created_ms: Date.now(),
    });
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => store.createRewards(tenant, campaign.id, rewards)),
    );
    // Exactly one run created both (they go in one transaction); the others found them.
    expect(runs.map((r) => r.length).sort()).toEqual([0, 0, 0, 0, 0, 2]);
    expect(await store.createRewards(tenant, campaign.id, rewards)).toEqual([]);
    const items = await rewardItemsOf(campaign.id);
    expect(items.map((i) => [i.recipient_id, i.amount, i.status]).sort()).toEqual([
      ['alice', 500, 'pending'],
      ['bob', 200, 'pending'],
    ]);
    // Pending rewards wait in the due index until their hold ends.
    expect(items.every((i) => i.GSI1PK === 'REWARDS_DUE' && String(i.GSI1SK).endsWith(String(i.id)))).toBe(
      true,
    );
  });

  it('creates nothing for a campaign deleted meanwhile, and keeps tenants apart', async () => {
    const campaign = await campaignWith([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500 },
    ]);
    const [reward] = domain.rewardsForSignup(campaign, {
      referred_user_id: 'bob',
      referrer_id: 'alice',
      created_ms: Date.now(),
    });
    expect(await store.createRewards(TENANT_B.tenant, campaign.id, [reward as Reward])).toEqual([]);
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`)).status).toBe(204);
    expect(await store.createRewards(tenant, campaign.id, [reward as Reward])).toEqual([]);
    expect(await rewardItemsOf(campaign.id)).toEqual([]);
  });
});

describe('the scheduled release', () => {
  it('approves a pending reward once its hold ends, through the due index, and nothing before', async () => {
    const campaign = await campaignWith([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 1 },
    ]);
    const createdMs = Date.now() - 2 * HOUR;
    const [due] = domain.rewardsForSignup(campaign, {
      referred_user_id: 'u1',
      referrer_id: 'alice',
      created_ms: createdMs - 24 * HOUR,
    });
    const [held] = domain.rewardsForSignup(campaign, {
      referred_user_id: 'u2',
      referrer_id: 'alice',
      created_ms: createdMs,
    });
    await store.createRewards(tenant, campaign.id, [due as Reward, held as Reward]);
    await releaseAll(Date.now());
    const byId = new Map((await rewardItemsOf(campaign.id)).map((i) => [i.id, i]));
    expect(byId.get(due?.id)).toMatchObject({ status: 'approved' });
    // Out of the index once it left pending; the held one is still in it.
    expect(byId.get(due?.id)).not.toHaveProperty('GSI1PK');
    expect(byId.get(held?.id)).toMatchObject({ status: 'pending', GSI1PK: 'REWARDS_DUE' });
    await releaseAll(createdMs + 24 * HOUR);
    expect(await statusesOf(campaign, 'referrer', 'alice')).toEqual(['approved', 'approved']);
  });
});

describe('the local stack', () => {
  it('runs the release on its own timer: a reward due now is approved without anyone asking', async () => {
    const campaign = await campaignWith([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 0 },
    ]);
    const [reward] = domain.rewardsForSignup(campaign, {
      referred_user_id: 'bob',
      referrer_id: 'carol',
      created_ms: Date.now(),
    });
    await store.createRewards(tenant, campaign.id, [reward as Reward]);
    // Within the local interval (10 s) and a run's time; the deployed schedule is every minute.
    await eventually(
      'the reward released by the stack',
      async () => ((await statusesOf(campaign, 'referrer', 'carol'))[0] === 'approved' ? true : undefined),
      30_000,
      250,
    );
  });
});

describe('approve, void and refunds', () => {
  it('approves from review, voids, refuses a paid reward, and finds no reward of another tenant', async () => {
    // A day's hold: the stack's own release must not end it before the second approve does.
    const campaign = await campaignWith([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 1 },
    ]);
    const [reward] = domain.rewardsForSignup(
      campaign,
      { referred_user_id: 'bob', referrer_id: 'alice', created_ms: Date.now() },
      ['repeat_visitor'],
    ) as [Reward];
    await store.createRewards(tenant, campaign.id, [reward]);
    await expect(store.approveRewardById(TENANT_B.tenant, reward.id, Date.now())).rejects.toMatchObject({
      code: 'reward_not_found',
    });
    await expect(store.approveRewardById(tenant, 'rw_nothing', Date.now())).rejects.toMatchObject({
      code: 'reward_not_found',
    });
    expect(await store.approveRewardById(tenant, reward.id, Date.now())).toMatchObject({ status: 'pending' });
    expect(await store.approveRewardById(tenant, reward.id, Date.now())).toMatchObject({
      status: 'approved',
    });
    const { payout } = await store.recordPayout(tenant, {
      campaignId: campaign.id,
      recipient: 'referrer',
      recipientId: 'alice',
      reference: 'tr_1',
      nowMs: Date.now(),
    });
    expect(payout).toMatchObject({ amount: 500, reward_ids: [reward.id], reference: 'tr_1' });
    await expect(store.voidRewardById(tenant, reward.id, 'fraud')).rejects.toMatchObject({
      code: 'reward_paid',
    });
  });

  it('lowers a held reward by an adjustment, voids it on a full refund, and claws back a paid one', async () => {
    const campaign = await campaignWith([
      { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1_000, hold_days: 0 },
    ]);
    const now = Date.now();
    const first = sale(10_000, now);
    const second = sale(5_000, now);
    const [a] = domain.rewardsForConversion(campaign, first, 0) as [Reward];
    const [b] = domain.rewardsForConversion(campaign, second, 1) as [Reward];
    await store.createRewards(tenant, campaign.id, [a]);
    await store.createRewards(tenant, campaign.id, [b]);
    // A partial refund during the hold, applied twice (a replay): one adjustment.
    const partial = { ...first, refunded_amount: 2_505 };
    expect(await store.applyRefund(tenant, [a.id], partial, now)).toHaveLength(1);
    expect(await store.applyRefund(tenant, [a.id], partial, now)).toEqual([]);
    // The family moves whole: released together, paid together.
    await releaseAll(now);
    const { payout } = await store.recordPayout(tenant, {
      campaignId: campaign.id,
      recipient: 'referrer',
      recipientId: 'alice',
      reference: null,
      nowMs: now,
    });
    expect(payout.amount).toBe(749 + 500);
    expect(payout.reward_ids).toHaveLength(3);
    // A full refund of a paid sale: a clawback, approved, netted against the next payout.
    const clawed = await store.applyRefund(tenant, [b.id], { ...second, refunded_amount: 5_000 }, now);
    expect(clawed.map((r) => [r.amount, r.status])).toEqual([[-500, 'approved']]);
    expect(await store.rewardBalance(tenant, campaign.id, 'referrer', 'alice')).toEqual({
      in_review: 0,
      pending: 0,
      approved: -500,
      paid: 1_249,
      voided: 0,
    });
    await expect(
      store.recordPayout(tenant, {
        campaignId: campaign.id,
        recipient: 'referrer',
        recipientId: 'alice',
        reference: null,
        nowMs: now,
      }),
    ).rejects.toMatchObject({ code: 'nothing_to_pay' });
    // A full refund during the hold voids the reward.
    const third = sale(8_000, now + 1);
    const [c] = domain.rewardsForConversion(
      {
        ...campaign,
        reward_rules: rewardRulesInput([
          { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1_000, hold_days: 5 },
        ]),
      },
      third,
      2,
    ) as [Reward];
    await store.createRewards(tenant, campaign.id, [c]);
    await store.applyRefund(tenant, [c.id], { ...third, refunded_amount: 8_000 }, now);
    const voided = (await store.recipientRewards(tenant, campaign.id, 'referrer', 'alice')).find(
      (s) => s.reward.id === c.id,
    );
    expect(voided?.reward).toMatchObject({ status: 'voided', void_reason: 'refunded' });
    expect((await rewardItemsOf(campaign.id)).find((i) => i.id === c.id)).not.toHaveProperty('GSI1PK');
  });
});

describe('payouts', () => {
  async function approvedRewards(count: number): Promise<{ campaign: RewardCampaign; total: number }> {
    const campaign = await campaignWith([
      { on: 'conversion', recipient: 'referrer', type: 'flat', amount: 100, hold_days: 0 },
    ]);
    const createdMs = Date.now() - HOUR;
    const rewards = Array.from({ length: count }, (_, i) =>
      domain.rewardsForConversion(campaign, sale(1_000, createdMs + i), 0),
    ).flat();
    for (let i = 0; i < rewards.length; i += 10)
      await store.createRewards(tenant, campaign.id, rewards.slice(i, i + 10));
    await releaseAll(Date.now());
    return { campaign, total: rewards.reduce((s, r) => s + r.amount, 0) };
  }

  const request = (campaign: RewardCampaign) => ({
    campaignId: campaign.id,
    recipient: 'referrer' as const,
    recipientId: 'alice',
    reference: null,
    nowMs: Date.now(),
  });

  it('pays each reward once when two payouts of one recipient run at the same time', async () => {
    const { campaign, total } = await approvedRewards(30);
    const results = await Promise.allSettled([
      store.recordPayout(tenant, request(campaign)),
      store.recordPayout(tenant, request(campaign)),
    ]);
    const paid = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.payout] : []));
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(paid).toHaveLength(1);
    expect(refused.map((e) => e.code)).toEqual(['nothing_to_pay']);
    expect(paid[0]?.amount).toBe(total);
    const items = await rewardItemsOf(campaign.id);
    expect(items.every((i) => i.status === 'paid' && i.payout_id === paid[0]?.id)).toBe(true);
    const payouts = await campaignItems(tenant, campaign.id, 'PO#');
    expect(payouts.map((p) => p.amount)).toEqual([total]);
  });

  it('refuses the second of two payouts read before either was written, and pays what is left', async () => {
    const { campaign, total } = await approvedRewards(3);
    // Both read the same three approved rewards before either writes: the interleaving a race
    // may or may not produce, made certain.
    const first = await store.planPayout(tenant, request(campaign));
    const second = await store.planPayout(tenant, request(campaign));
    expect(second.payout.reward_ids).toEqual(first.payout.reward_ids);
    expect(await store.commitPayout(tenant, first)).toBe(true);
    expect(await store.commitPayout(tenant, second)).toBe(false);
    await expect(store.recordPayout(tenant, request(campaign))).rejects.toMatchObject({
      code: 'nothing_to_pay',
    });
    expect(await campaignItems(tenant, campaign.id, 'PO#')).toHaveLength(1);
    expect(await store.rewardBalance(tenant, campaign.id, 'referrer', 'alice')).toMatchObject({
      approved: 0,
      paid: total,
    });
  });

  it('pays more than 98 approved rewards over several payouts, 98 at most each, none twice', async () => {
    const { campaign, total } = await approvedRewards(130);
    const results = await Promise.all([
      store.recordPayout(tenant, request(campaign)),
      store.recordPayout(tenant, request(campaign)),
    ]);
    // The loser of the race ran again on what was left: 98 and 32, in some order.
    expect(results.map((r) => r.payout.reward_ids.length).sort((x, y) => x - y)).toEqual([32, 98]);
    expect(results.map((r) => r.hasMore).sort()).toEqual([false, true]);
    const ids = results.flatMap((r) => r.payout.reward_ids);
    expect(new Set(ids).size).toBe(130);
    expect(results.reduce((s, r) => s + r.payout.amount, 0)).toBe(total);
    await expect(store.recordPayout(tenant, request(campaign))).rejects.toMatchObject({
      code: 'nothing_to_pay',
    });
    expect(await store.rewardBalance(tenant, campaign.id, 'referrer', 'alice')).toMatchObject({
      approved: 0,
      paid: total,
    });
  });
});

describe('random sequences on DynamoDB Local', () => {
  type Step =
    | { op: 'signup'; user: number; referrer: number }
    | { op: 'convert'; user: number; amount: number }
    | { op: 'refund'; pick: number; part: number }
    | { op: 'approve' | 'void'; pick: number }
    | { op: 'advance'; hours: number }
    | { op: 'payouts'; recipient: number }
    | { op: 'replay' };
  const USERS = ['u1', 'u2', 'u3'];
  const REFERRERS = ['alice', 'bob', null];
  const pick = fc.nat({ max: 100 });
  const stepArb: fc.Arbitrary<Step> = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('signup' as const),
        user: fc.nat({ max: 2 }),
        referrer: fc.nat({ max: 2 }),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('convert' as const),
        user: fc.nat({ max: 2 }),
        amount: fc.integer({ min: 1, max: 50_000 }),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('refund' as const),
        pick,
        part: fc.integer({ min: 1, max: 4 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('approve' as const, 'void' as const), pick }) },
    {
      weight: 2,
      arbitrary: fc.record({ op: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 30 }) }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('payouts' as const), recipient: pick }) },
    { weight: 1, arbitrary: fc.constant({ op: 'replay' as const }) },
  );

  it('keep the ledger invariants, with two payouts at once and replays', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 10, maxLength: 40 }), async (steps) => {
        const campaign = await campaignWith([
          { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 0 },
          { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1_250, hold_days: 1 },
          {
            on: 'conversion',
            recipient: 'referred_user',
            type: 'flat',
            amount: 300,
            first_conversions: 1,
            hold_days: 0,
          },
        ]);
        let now = Date.now();
        const journal = new Map<string, number>();
        const record = (made: readonly Reward[]) => {
          for (const r of made) journal.set(recipientKey(r), (journal.get(recipientKey(r)) ?? 0) + r.amount);
        };
        const signups = new Map<
          string,
          { referred_user_id: string; referrer_id: string | null; created_ms: number }
        >();
        const conversions = new Map<string, Conversion>();
        const rewardIdsOf = new Map<string, string[]>();
        const ids: string[] = [];
        const create = async (rewards: Reward[]) => {
          const made = await store.createRewards(tenant, campaign.id, rewards);
          record(made);
          ids.push(...made.map((r) => r.id));
        };
        for (const step of steps) {
          switch (step.op) {
            case 'signup': {
              const user = USERS[step.user] as string;
              const s = signups.get(user) ?? {
                referred_user_id: user,
                referrer_id: REFERRERS[step.referrer] ?? null,
                created_ms: now,
              };
              signups.set(user, s);
              await create(domain.rewardsForSignup(campaign, s));
              break;
            }
            case 'convert': {
              const s = signups.get(USERS[step.user] as string);
              if (!s) break;
              const c = { ...sale(step.amount, now, s.referred_user_id), referrer_id: s.referrer_id };
              const prior = [...conversions.values()].filter(
                (o) => o.referred_user_id === c.referred_user_id,
              ).length;
              conversions.set(c.id, c);
              const rewards = domain.rewardsForConversion(campaign, c, prior);
              rewardIdsOf.set(
                c.id,
                rewards.map((r) => r.id),
              );
              await create(rewards);
              break;
            }
            case 'refund': {
              const all = [...conversions.values()];
              const c = all[step.pick % Math.max(1, all.length)];
              if (!c || c.refunded_amount === c.amount) break;
              const left = c.amount - c.refunded_amount;
              const after = {
                ...c,
                refunded_amount:
                  c.refunded_amount +
                  (step.part === 4 ? left : Math.max(1, Math.floor((left * step.part) / 4))),
              };
              conversions.set(c.id, after);
              const made = await store.applyRefund(tenant, rewardIdsOf.get(c.id) ?? [], after, now);
              record(made);
              ids.push(...made.map((r) => r.id));
              break;
            }
            case 'approve':
            case 'void': {
              const id = ids[step.pick % Math.max(1, ids.length)];
              if (!id) break;
              const run =
                step.op === 'approve'
                  ? store.approveRewardById(tenant, id, now)
                  : store.voidRewardById(tenant, id, 'test');
              await run.catch((err) => {
                if (!(err instanceof domain.LedgerError)) throw err;
              });
              break;
            }
            case 'advance':
              now += step.hours * HOUR;
              await releaseAll(now);
              break;
            case 'payouts': {
              const recipients = [...journal.keys()].sort();
              const who = recipients[step.recipient % Math.max(1, recipients.length)];
              if (!who) break;
              const [recipient, recipientId] = who.split(':') as ['referrer' | 'referred_user', string];
              const req = { campaignId: campaign.id, recipient, recipientId, reference: null, nowMs: now };
              const results = await Promise.allSettled([
                store.recordPayout(tenant, req),
                store.recordPayout(tenant, req),
              ]);
              for (const r of results) {
                if (r.status === 'rejected' && !(r.reason instanceof domain.LedgerError)) throw r.reason;
              }
              break;
            }
            case 'replay':
              for (const s of signups.values()) await create(domain.rewardsForSignup(campaign, s));
              for (const c of conversions.values()) {
                const prior = [...conversions.values()].filter(
                  (o) => o.referred_user_id === c.referred_user_id && Number(o.id) < Number(c.id),
                ).length;
                await create(domain.rewardsForConversion(campaign, { ...c, refunded_amount: 0 }, prior));
                record(await store.applyRefund(tenant, rewardIdsOf.get(c.id) ?? [], c, now));
              }
              break;
          }
        }
        const rewards = (await rewardItemsOf(campaign.id)).map((item) => rewardFromItem(item).reward);
        const payouts = (await campaignItems(tenant, campaign.id, 'PO#')).map((item) => {
          const p = payoutFromItem(item);
          return {
            id: p.id,
            recipient: `${p.recipient}:${p.recipient_id}`,
            amount: p.amount,
            reward_ids: p.reward_ids,
          };
        });
        expect(ledgerViolations({ rewards, payouts, conversions, journal })).toEqual([]);
        for (const who of journal.keys()) {
          const [recipient, recipientId] = who.split(':') as ['referrer' | 'referred_user', string];
          expect(await store.rewardBalance(tenant, campaign.id, recipient, recipientId)).toEqual(
            domain.balanceOf(rewards.filter((r) => recipientKey(r) === who)),
          );
        }
      }),
      { numRuns: 25 },
    );
  }, 300_000);
});
