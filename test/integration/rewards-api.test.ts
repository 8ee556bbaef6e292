/**
 * Endpoints 27-32 through the local gateway on the run's DynamoDB Local: the reward list (states,
 * recipients, pages and cursors), approve, void, the balance, payouts (two at once among them) and
 * the payout list, each with its refusals and hostile input, and every access scoped by the key's
 * tenant. Rewards are made by the ledger's own writer (lib/db/rewards.ts, in-process on the run's
 * table), as the stream job will make them: the job is not part of this branch.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeSortKeyCursor } from '../../lib/db/table/cursor.ts';
import { rewardRulesInput } from '../../lib/domain/reward-rules.ts';
import type { Reward, RewardCampaign } from '../../lib/domain/rewards.ts';
import { eventually } from '../../tools/wait.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError, expectValidation } from '../support/assertions.ts';
import { createCampaign } from '../support/records.ts';
import { configureInProcessHandlers } from '../support/table.ts';

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

interface RewardBody {
  id: string;
  available_at: string;
  status: string;
  amount: number;
  recipient: string;
  recipient_id: string;
  created_at: string;
  payout_id: string | null;
  void_reason: string | null;
  currency: string;
}

/**
 * A campaign whose signups give the referrer 500 and the referred user 200, held a day: the
 * stack's own release (every 10 s) leaves them pending while a test runs.
 */
async function rewardCampaign(currency = 'EUR'): Promise<RewardCampaign> {
  const { id } = await createCampaign({ currency });
  return {
    id,
    currency,
    reward_rules: rewardRulesInput([
      { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 1 },
      { on: 'referred_user', recipient: 'referred_user', type: 'flat', amount: 200, hold_days: 1 },
    ]),
  };
}

/** The rewards of a signup of `user` referred by `referrer`, made `agoMs` ago (distinct times sort them). */
async function signup(
  campaign: RewardCampaign,
  user: string,
  referrer: string | null,
  agoMs = 0,
  reasons: Parameters<Domain['rewardsForSignup']>[2] = [],
): Promise<Reward[]> {
  const rewards = domain.rewardsForSignup(
    campaign,
    { referred_user_id: user, referrer_id: referrer, created_ms: Date.now() - agoMs },
    reasons,
  );
  expect(await store.createRewards(tenant, campaign.id, rewards)).toHaveLength(rewards.length);
  return rewards;
}

const referrerReward = (rewards: Reward[]) => rewards.find((r) => r.recipient === 'referrer') as Reward;

async function approve(id: string): Promise<RewardBody> {
  const res = await api<RewardBody>('POST', `/api/v1/reward/${id}/approve`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Every page of a list, following `x-next-cursor`, with the pages' sizes. */
async function allPages<T>(
  path: string,
  limit: number,
  start?: string,
): Promise<{ items: T[]; sizes: number[] }> {
  const items: T[] = [];
  const sizes: number[] = [];
  let cursor: string | null = start ?? null;
  const sep = path.includes('?') ? '&' : '?';
  do {
    const res: Awaited<ReturnType<typeof api<T[]>>> = await api<T[]>(
      'GET',
      `${path}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(res.status, res.text).toBe(200);
    items.push(...res.body);
    sizes.push(res.body.length);
    cursor = res.headers.get('x-next-cursor');
    if (cursor) expect(res.headers.get('link')).toContain(`cursor=${encodeURIComponent(cursor)}`);
  } while (cursor && sizes.length < 50);
  return { items, sizes };
}

describe('GET /api/v1/rewards/{campaign_id} (endpoint 27)', () => {
  it('lists newest first, by state and by recipient, every reward once across pages', async () => {
    const campaign = await rewardCampaign();
    const made = [
      ...(await signup(campaign, 'u1', 'alice', 4 * HOUR)),
      ...(await signup(campaign, 'u2', 'alice', 3 * HOUR)),
      ...(await signup(campaign, 'u3', 'bob', 2 * HOUR)),
      ...(await signup(campaign, 'u4', null, 1 * HOUR)),
    ];
    expect(made).toHaveLength(7);
    const approved = await approve(referrerReward(made.slice(2, 4)).id);
    expect(approved.status).toBe('approved');
    const path = `/api/v1/rewards/${campaign.id}`;
    // The index is eventually consistent (DynamoDB Local's at once; AWS's within about a second).
    const all = await eventually('the seven rewards listed', async () => {
      const res = await api<RewardBody[]>('GET', path);
      return res.status === 200 && res.body.length === 7 ? res.body : undefined;
    });
    const times = all.map((r) => r.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(all.find((r) => r.id === approved.id)?.status).toBe('approved');
    expect(new Set(all.map((r) => r.currency))).toEqual(new Set(['EUR']));

    // Pages of 1, 2 and 3 through the merged states reach each reward once, in the same order.
    for (const limit of [1, 2, 3]) {
      const { items, sizes } = await allPages<RewardBody>(path, limit);
      expect(items.map((r) => r.id)).toEqual(all.map((r) => r.id));
      expect(Math.max(...sizes)).toBeLessThanOrEqual(limit);
    }

    const approvedOnly = await api<RewardBody[]>('GET', `${path}?status=approved`);
    expect(approvedOnly.body.map((r) => r.id)).toEqual([approved.id]);
    const pending = await api<RewardBody[]>('GET', `${path}?status=pending`);
    expect(pending.body).toHaveLength(6);
    expect((await api<RewardBody[]>('GET', `${path}?status=paid`)).body).toEqual([]);

    const alice = await allPages<RewardBody>(`${path}?recipient_id=alice`, 1);
    expect(alice.items.map((r) => r.recipient_id)).toEqual(['alice', 'alice']);
    const alicePending = await api<RewardBody[]>('GET', `${path}?recipient_id=alice&status=pending`);
    expect(alicePending.body.map((r) => r.id)).toEqual([alice.items[1]?.id]);
    // A referred user is a recipient too (double-sided rules).
    const u4 = await api<RewardBody[]>('GET', `${path}?recipient_id=u4`);
    expect(u4.body.map((r) => [r.recipient, r.amount])).toEqual([['referred_user', 200]]);
    // The filters stay in the next page's Link.
    const filtered = await api('GET', `${path}?status=pending&limit=1`);
    expect(filtered.headers.get('link')).toMatch(
      /^<\/api\/v1\/rewards\/[^?]+\?status=pending&limit=1&cursor=/,
    );
  });

  it('keeps its place when a reward changes state between two pages', async () => {
    const campaign = await rewardCampaign();
    for (const [i, user] of ['a', 'b', 'c'].entries())
      await signup(campaign, user, `r-${user}`, (3 - i) * HOUR);
    const path = `/api/v1/rewards/${campaign.id}`;
    const first = await api<RewardBody[]>('GET', `${path}?limit=2`);
    expect(first.body).toHaveLength(2);
    // The last one shown moves to another state's partition: the cursor still resumes after it.
    await approve(first.body[1]?.id as string);
    const cursor = first.headers.get('x-next-cursor') as string;
    const rest = await allPages<RewardBody>(path, 2, cursor);
    const seen = [...first.body, ...rest.items].map((r) => r.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toHaveLength(6);
  });

  it('refuses bad filters, limits and cursors, and knows no campaign of another tenant', async () => {
    const campaign = await rewardCampaign();
    const other = await rewardCampaign();
    await signup(campaign, 'u1', 'alice', 2 * HOUR);
    await signup(other, 'u1', 'alice', 2 * HOUR);
    const path = `/api/v1/rewards/${campaign.id}`;
    for (const status of ['bogus', 'PENDING', '', 'pending,paid', 'in_review ']) {
      expectValidation(await api('GET', `${path}?status=${encodeURIComponent(status)}`), 'status');
    }
    for (const limit of ['0', '1001', '-1', 'abc', '1.5', '']) {
      expectValidation(await api('GET', `${path}?limit=${limit}`), 'limit');
    }
    expectValidation(await api('GET', `${path}?recipient_id=${'x'.repeat(257)}`), 'recipient_id');
    const otherCursor = (await api('GET', `/api/v1/rewards/${other.id}?limit=1`)).headers.get(
      'x-next-cursor',
    );
    const pendingCursor = (await api('GET', `${path}?limit=1&status=pending`)).headers.get('x-next-cursor');
    const ownCursor = (await api('GET', `${path}?limit=1`)).headers.get('x-next-cursor') as string;
    expect(otherCursor && pendingCursor && ownCursor).toBeTruthy();
    const bad = [
      otherCursor as string,
      pendingCursor as string,
      ownCursor.slice(0, -3),
      'bm90IGEgY3Vyc29y',
      Buffer.from(JSON.stringify([3, `9999999999999#rw_${'A'.repeat(54)}`, 'x'])).toString('base64url'),
    ];
    for (const cursor of bad) {
      expectValidation(await api('GET', `${path}?cursor=${encodeURIComponent(cursor)}`), 'cursor');
    }
    // Of this list (its tag is not a secret) but naming a position no reward id can have.
    const forged = encodeSortKeyCursor(
      { kind: 'rewards', tenant, campaignId: campaign.id, filter: '[null,null]' },
      `0000000000001#rw_${'A'.repeat(53)}B`,
    );
    expectValidation(await api('GET', `${path}?cursor=${forged}`), 'cursor');
    // A payout list's cursor is not a reward list's.
    expectValidation(
      await api('GET', `/api/v1/payouts/${campaign.id}?cursor=${encodeURIComponent(ownCursor)}`),
      'cursor',
    );
    expectError(await api('GET', `/api/v1/rewards/${crypto.randomUUID()}`), 404, 'campaign_not_found');
    expectError(await api('GET', path, { key: TENANT_B.key }), 404, 'campaign_not_found');
    expectValidation(await api('GET', '/api/v1/rewards/not-a-uuid'), 'campaign_id');
  });
});

describe('POST /api/v1/reward/{id}/approve and /void (endpoints 28, 29)', () => {
  it('moves a reward from review to its hold, then ends the hold; refuses what cannot move', async () => {
    const campaign = await rewardCampaign();
    const reward = referrerReward(await signup(campaign, 'u1', 'alice', 0, ['repeat_visitor']));
    const pending = await approve(reward.id);
    expect(pending).toMatchObject({ id: reward.id, status: 'pending', amount: 500, currency: 'EUR' });
    const approved = await approve(reward.id);
    expect(approved.status).toBe('approved');
    // Its hold (a day) ended now.
    expect(approved.available_at < pending.available_at).toBe(true);
    expectError(await api('POST', `/api/v1/reward/${reward.id}/approve`), 409, 'reward_not_approvable');
    const voided = await api<RewardBody>('POST', `/api/v1/reward/${reward.id}/void`, {
      body: { reason: 'duplicate account' },
    });
    expect(voided.status, voided.text).toBe(200);
    expect(voided.body).toMatchObject({ status: 'voided', void_reason: 'duplicate account' });
    expectError(await api('POST', `/api/v1/reward/${reward.id}/approve`), 409, 'reward_voided');
    expectError(
      await api('POST', `/api/v1/reward/${reward.id}/void`, { body: { reason: 'again' } }),
      409,
      'reward_voided',
    );
  });

  it('refuses to void a paid reward (409 reward_paid)', async () => {
    const campaign = await rewardCampaign();
    const reward = referrerReward(await signup(campaign, 'u1', 'alice'));
    await approve(reward.id);
    const payout = await api('POST', '/api/v1/payout', {
      body: { campaign_id: campaign.id, recipient: 'referrer', recipient_id: 'alice' },
    });
    expect(payout.status, payout.text).toBe(201);
    expectError(
      await api('POST', `/api/v1/reward/${reward.id}/void`, { body: { reason: 'fraud' } }),
      409,
      'reward_paid',
    );
    expectError(await api('POST', `/api/v1/reward/${reward.id}/approve`), 409, 'reward_paid');
  });

  it('finds no reward of another tenant, of a deleted campaign, or of a forged or truncated id', async () => {
    const campaign = await rewardCampaign();
    const reward = referrerReward(await signup(campaign, 'u1', 'alice'));
    const asB = { key: TENANT_B.key };
    expectError(await api('POST', `/api/v1/reward/${reward.id}/approve`, asB), 404, 'reward_not_found');
    expectError(
      await api('POST', `/api/v1/reward/${reward.id}/void`, { ...asB, body: { reason: 'x' } }),
      404,
      'reward_not_found',
    );
    // Well formed but naming nothing: another recipient's hash, a flipped character.
    const flipped = `${reward.id.slice(0, -1)}${reward.id.endsWith('A') ? 'B' : 'A'}`;
    expectError(await api('POST', `/api/v1/reward/${flipped}/approve`), 404, 'reward_not_found');
    expectError(await api('POST', `/api/v1/reward/rw_${'A'.repeat(54)}/approve`), 404, 'reward_not_found');
    for (const id of [
      reward.id.slice(0, -1),
      `${reward.id}A`,
      'rw_',
      'cv_x',
      reward.id.replace('rw_', 'RW_'),
    ]) {
      expectValidation(await api('POST', `/api/v1/reward/${encodeURIComponent(id)}/approve`), 'id');
    }
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`)).status).toBe(204);
    expectError(await api('POST', `/api/v1/reward/${reward.id}/approve`), 404, 'reward_not_found');
  });

  it('takes a reason of 1-256 characters and no other field', async () => {
    const campaign = await rewardCampaign();
    const reward = referrerReward(await signup(campaign, 'u1', 'alice'));
    const voidWith = (body: unknown) => api('POST', `/api/v1/reward/${reward.id}/void`, { body });
    expectValidation(await voidWith({ reason: 'x'.repeat(257) }), 'reason');
    expectValidation(await voidWith({ reason: '' }), 'reason');
    expectValidation(await voidWith({ reason: 'a\u0000b' }), 'reason');
    expectValidation(await voidWith({ reason: 42 }), 'reason');
    expectValidation(await voidWith({}), 'reason');
    expectValidation(await voidWith({ reason: 'ok', status: 'paid' }), 'status');
    expectError(await voidWith([]), 400, 'invalid_json');
    // Code points, not UTF-16 units: 256 emoji are a reason.
    const ok = await voidWith({ reason: '😀'.repeat(256) });
    expect(ok.status, ok.text).toBe(200);
  });

  it('answers a retry with the same Idempotency-Key from the first answer', async () => {
    const campaign = await rewardCampaign();
    const reward = referrerReward(await signup(campaign, 'u1', 'alice', 0, ['repeat_visitor']));
    const key = crypto.randomUUID();
    const first = await api('POST', `/api/v1/reward/${reward.id}/approve`, { idempotencyKey: key });
    const again = await api('POST', `/api/v1/reward/${reward.id}/approve`, { idempotencyKey: key });
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // The retry changed nothing: the reward is still pending, not approved.
    const listed = await api<RewardBody[]>('GET', `/api/v1/rewards/${campaign.id}?recipient_id=alice`);
    expect(listed.body[0]?.status).toBe('pending');
    const voidKey = crypto.randomUUID();
    const voided = await api('POST', `/api/v1/reward/${reward.id}/void`, {
      idempotencyKey: voidKey,
      body: { reason: 'a' },
    });
    expect(voided.status).toBe(200);
    const replay = await api('POST', `/api/v1/reward/${reward.id}/void`, {
      idempotencyKey: voidKey,
      body: { reason: 'a' },
    });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expectError(
      await api('POST', `/api/v1/reward/${reward.id}/void`, {
        idempotencyKey: voidKey,
        body: { reason: 'b' },
      }),
      422,
      'idempotency_key_reused',
    );
  });
});

describe('GET /api/v1/balance/{campaign_id}/{recipient_id} (endpoint 30)', () => {
  it("sums a recipient's rewards by state in the campaign's currency", async () => {
    const campaign = await rewardCampaign('JPY');
    const r1 = referrerReward(await signup(campaign, 'u1', 'alice', 0, ['repeat_visitor']));
    const r2 = referrerReward(await signup(campaign, 'u2', 'alice'));
    const r3 = referrerReward(await signup(campaign, 'u3', 'alice'));
    const r4 = referrerReward(await signup(campaign, 'u4', 'alice'));
    await signup(campaign, 'u5', 'alice');
    await approve(r2.id);
    await approve(r3.id);
    expect(
      (
        await api('POST', '/api/v1/payout', {
          body: { campaign_id: campaign.id, recipient: 'referrer', recipient_id: 'alice' },
        })
      ).status,
    ).toBe(201);
    await approve(r4.id);
    await api('POST', `/api/v1/reward/${r1.id}/void`, { body: { reason: 'review' } });
    const res = await api('GET', `/api/v1/balance/${campaign.id}/alice`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      in_review: 0,
      pending: 500,
      approved: 500,
      paid: 1000,
      voided: 500,
      currency: 'JPY',
    });
    // The referred user's side, and the same id as the other kind, are apart.
    const user = await api('GET', `/api/v1/balance/${campaign.id}/u1?recipient=referred_user`);
    expect(user.body).toMatchObject({ in_review: 200, pending: 0, approved: 0, paid: 0 });
    const nobody = await api('GET', `/api/v1/balance/${campaign.id}/alice?recipient=referred_user`);
    expect(nobody.body).toEqual({
      in_review: 0,
      pending: 0,
      approved: 0,
      paid: 0,
      voided: 0,
      currency: 'JPY',
    });
    const encoded = await api('GET', `/api/v1/balance/${campaign.id}/${encodeURIComponent('a/b ?#é')}`);
    expect(encoded.status).toBe(200);
  });

  it('refuses a bad recipient kind or id and knows no campaign of another tenant', async () => {
    const campaign = await rewardCampaign();
    const path = `/api/v1/balance/${campaign.id}/alice`;
    expectValidation(await api('GET', `${path}?recipient=admin`), 'recipient');
    expectValidation(await api('GET', `/api/v1/balance/${campaign.id}/${'x'.repeat(257)}`), 'recipient_id');
    expectError(await api('GET', path, { key: TENANT_B.key }), 404, 'campaign_not_found');
    expectError(await api('GET', `/api/v1/balance/${crypto.randomUUID()}/alice`), 404, 'campaign_not_found');
  });
});

describe('POST /api/v1/payout and GET /api/v1/payouts/{campaign_id} (endpoints 31, 32)', () => {
  it("pays a recipient's approved rewards once, and lists the payouts newest first", async () => {
    const campaign = await rewardCampaign();
    const a = referrerReward(await signup(campaign, 'u1', 'alice', 2 * HOUR));
    const b = referrerReward(await signup(campaign, 'u2', 'alice', HOUR));
    const held = referrerReward(await signup(campaign, 'u3', 'alice'));
    await approve(a.id);
    await approve(b.id);
    const body = {
      campaign_id: campaign.id,
      recipient: 'referrer',
      recipient_id: 'alice',
      reference: 'tr_1',
    };
    const paid = await api('POST', '/api/v1/payout', { body });
    expect(paid.status, paid.text).toBe(201);
    expect(paid.body).toMatchObject({
      campaign_id: campaign.id,
      recipient: 'referrer',
      recipient_id: 'alice',
      amount: 1000,
      currency: 'EUR',
      reference: 'tr_1',
      has_more: false,
    });
    expect([...paid.body.reward_ids].sort()).toEqual([a.id, b.id].sort());
    expect(paid.body.reward_ids).not.toContain(held.id);
    expectError(await api('POST', '/api/v1/payout', { body }), 422, 'nothing_to_pay');
    const listed = await api<RewardBody[]>('GET', `/api/v1/rewards/${campaign.id}?status=paid`);
    expect(listed.body.map((r) => r.payout_id)).toEqual([paid.body.id, paid.body.id]);

    await approve(held.id);
    const second = await api('POST', '/api/v1/payout', { body: { ...body, reference: null } });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ amount: 500, reward_ids: [held.id], reference: null });
    const bob = referrerReward(await signup(campaign, 'u4', 'bob'));
    await approve(bob.id);
    const third = await api('POST', '/api/v1/payout', { body: { ...body, recipient_id: 'bob' } });
    expect(third.status).toBe(201);

    const path = `/api/v1/payouts/${campaign.id}`;
    const all = await api('GET', path);
    expect(all.body.map((p: { id: string }) => p.id)).toEqual([third.body.id, second.body.id, paid.body.id]);
    for (const limit of [1, 2]) {
      expect((await allPages<{ id: string }>(path, limit)).items.map((p) => p.id)).toEqual(
        all.body.map((p: { id: string }) => p.id),
      );
    }
    const alice = await eventually('alice\u2019s payouts in the index', async () => {
      const page = await allPages<{ id: string; recipient_id: string }>(`${path}?recipient_id=alice`, 1);
      return page.items.length === 2 ? page.items : undefined;
    });
    expect(alice.map((p) => p.id)).toEqual([second.body.id, paid.body.id]);
    expect((await api('GET', `${path}?recipient_id=nobody`)).body).toEqual([]);
    const aliceCursor = (await api('GET', `${path}?recipient_id=alice&limit=1`)).headers.get('x-next-cursor');
    expectValidation(
      await api('GET', `${path}?cursor=${encodeURIComponent(aliceCursor as string)}`),
      'cursor',
    );
  });

  it('two payouts at once pay each reward once, and their amounts sum to what was approved', async () => {
    const campaign = await rewardCampaign();
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const reward = referrerReward(await signup(campaign, `u${i}`, 'carol', (6 - i) * HOUR));
      await approve(reward.id);
      ids.push(reward.id);
    }
    const body = { campaign_id: campaign.id, recipient: 'referrer', recipient_id: 'carol' };
    const answers = await Promise.all([
      api('POST', '/api/v1/payout', { body }),
      api('POST', '/api/v1/payout', { body }),
    ]);
    const statuses = answers.map((r) => r.status).sort();
    expect([
      [201, 201],
      [201, 422],
    ]).toContainEqual(statuses);
    const paid = answers.filter((r) => r.status === 201).map((r) => r.body);
    for (const r of answers.filter((r) => r.status !== 201)) expectError(r, 422, 'nothing_to_pay');
    const paidIds = paid.flatMap((p) => p.reward_ids as string[]);
    expect(paidIds.sort()).toEqual([...ids].sort());
    expect(paid.reduce((sum, p) => sum + p.amount, 0)).toBe(3000);
    const balance = await api('GET', `/api/v1/balance/${campaign.id}/carol`);
    expect(balance.body).toMatchObject({ approved: 0, paid: 3000, pending: 0 });
  });

  it('replays a payout for the same Idempotency-Key and records it once', async () => {
    const campaign = await rewardCampaign();
    await approve(referrerReward(await signup(campaign, 'u1', 'dave')).id);
    const body = { campaign_id: campaign.id, recipient: 'referrer', recipient_id: 'dave' };
    const key = crypto.randomUUID();
    const first = await api('POST', '/api/v1/payout', { body, idempotencyKey: key });
    expect(first.status).toBe(201);
    // Another reward approved meanwhile is not paid by the retry: it answers what the first did.
    await approve(referrerReward(await signup(campaign, 'u2', 'dave')).id);
    const again = await api('POST', '/api/v1/payout', { body, idempotencyKey: key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await api('GET', `/api/v1/payouts/${campaign.id}`)).body).toHaveLength(1);
    expectError(
      await api('POST', '/api/v1/payout', { body: { ...body, reference: 'x' }, idempotencyKey: key }),
      422,
      'idempotency_key_reused',
    );
  });

  it('refuses bad bodies, an unknown campaign and another tenant\u2019s', async () => {
    const campaign = await rewardCampaign();
    await approve(referrerReward(await signup(campaign, 'u1', 'erin')).id);
    const body = { campaign_id: campaign.id, recipient: 'referrer', recipient_id: 'erin' };
    const post = (b: unknown, key?: string) => api('POST', '/api/v1/payout', { body: b, key });
    expectValidation(await post({ ...body, amount: 5 }), 'amount');
    expectValidation(await post({ ...body, recipient: 'admin' }), 'recipient');
    expectValidation(await post({ ...body, recipient_id: '' }), 'recipient_id');
    expectValidation(await post({ ...body, recipient_id: 'x'.repeat(257) }), 'recipient_id');
    expectValidation(await post({ ...body, reference: 'x'.repeat(257) }), 'reference');
    expectValidation(await post({ ...body, reference: 'a\nb' }), 'reference');
    expectValidation(await post({ ...body, campaign_id: 'nope' }), 'campaign_id');
    expectValidation(await post({ campaign_id: campaign.id, recipient_id: 'erin' }), 'recipient');
    expectError(await post({ ...body, campaign_id: crypto.randomUUID() }), 404, 'campaign_not_found');
    expectError(await post(body, TENANT_B.key), 404, 'campaign_not_found');
    expectError(
      await api('GET', `/api/v1/payouts/${campaign.id}`, { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    // Nothing was paid by any of them.
    const balance = await api('GET', `/api/v1/balance/${campaign.id}/erin`);
    expect(balance.body).toMatchObject({ approved: 500, paid: 0 });
    for (const limit of ['0', '1001', 'x']) {
      expectValidation(await api('GET', `/api/v1/payouts/${campaign.id}?limit=${limit}`), 'limit');
    }
  });
});
