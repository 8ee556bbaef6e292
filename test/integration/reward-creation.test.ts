/**
 * Rewards made by the stream (issue 30): a signup and a sale through the real API, on the run's
 * stack (its reward stream poller runs `functions/stream/create-rewards.ts`), make the rewards of
 * the campaign's rules once; refunds void, adjust and claw back; a referrer over
 * `review_signups_per_hour` puts a signup's rewards in review; every state change is a webhook.
 * A replayed batch is the consumer's handler run again in this process on the very records
 * (their items as the stream carried them), against the same DynamoDB Local.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../tools/wait.ts';
import { api, TENANT_A } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import { BROWSER_UA, createCampaign, createLink, createReferredUser } from '../support/records.ts';
import { campaignItems, configureInProcessHandlers, table } from '../support/table.ts';

configureInProcessHandlers();
const receiver = receiversClosedAfterAll();

type Rule = Record<string, unknown>;
type StoredReward = {
  id: string;
  currency: string;
  kind: string;
  status: string;
  amount: number;
  recipient: string;
  recipient_id: string;
  rule_id: string;
  source_type: string;
  source_id: string;
  review_reasons: string[];
  void_reason: string | null;
  adjusts: string | null;
};

const referrerShare: Rule = {
  id: 'share',
  on: 'conversion',
  recipient: 'referrer',
  type: 'percent',
  amount: 1000,
};
const welcome: Rule = {
  id: 'welcome',
  on: 'referred_user',
  recipient: 'referred_user',
  type: 'flat',
  amount: 300,
};
const signupBonus: Rule = {
  id: 'bonus',
  on: 'referred_user',
  recipient: 'referrer',
  type: 'flat',
  amount: 500,
};

async function campaignWithRules(rules: Rule[], more: Record<string, unknown> = {}) {
  const campaign = await createCampaign({ name: 'rewards', currency: 'EUR', reward_rules: rules, ...more });
  const link = await createLink(campaign.id, { referrer_id: `ref-${randomUUID().slice(0, 8)}` });
  return { campaign, link };
}

const rewardsOf = async (campaignId: string) =>
  (await campaignItems(TENANT_A.tenant, campaignId, 'RW#')) as unknown as StoredReward[];

const convert = async (campaignId: string, referredUserId: string, amount: number) => {
  const res = await api<{ id: string }>('POST', '/api/v1/conversion', {
    body: { campaign_id: campaignId, referred_user_id: referredUserId, amount },
  });
  expect(res.status, res.text).toBe(201);
  return res.body;
};
const refund = async (id: string, amount?: number) => {
  const res = await api(
    'POST',
    `/api/v1/conversion/${id}/refund`,
    amount === undefined ? {} : { body: { amount } },
  );
  expect(res.status, res.text).toBe(200);
};

/** The stream records of items as they are in the table now (NEW_IMAGE), numbered from `from`. */
async function recordsOf(keys: Array<{ PK: string; SK: string }>, eventName: 'INSERT' | 'MODIFY', from = 1) {
  const records: DynamoDBRecord[] = [];
  for (const [i, key] of keys.entries()) {
    const { Item } = await table().db.send(new GetCommand({ TableName: table().name, Key: key }));
    if (!Item) throw new Error(`no item at ${key.PK} ${key.SK}`);
    records.push({
      eventName,
      dynamodb: {
        // biome-ignore lint/suspicious/noExplicitAny: the SDK's and Lambda's AttributeValue types differ nominally.
        NewImage: marshall(Item, { removeUndefinedValues: true }) as any,
        SequenceNumber: String(from + i).padStart(21, '0'),
      },
    });
  }
  return records;
}

const consumer = async () =>
  (await import('../../functions/stream/create-rewards.ts')).handler as (e: {
    Records: DynamoDBRecord[];
  }) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }>;

describe('reward_rules on the campaign', () => {
  it('are completed on create, shown on every read, and versioned by PATCH', async () => {
    const { campaign } = await campaignWithRules([{ ...referrerShare, id: undefined, hold_days: 0 }]);
    const got = await api('GET', `/api/v1/campaign?id=${campaign.id}`);
    expect(got.body.reward_rules).toEqual([
      { id: 'rule_1', on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1000, hold_days: 0 },
    ]);
    expect(got.body.review_signups_per_hour).toBe(20);
    const patched = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { reward_rules: [welcome], review_signups_per_hour: 3 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.reward_rules).toEqual([{ ...welcome, hold_days: 30 }]);
    expect(patched.body.review_signups_per_hour).toBe(3);
    const list = await api<Array<{ id: string; reward_rules: unknown }>>(
      'GET',
      '/api/v1/campaigns?limit=100',
    );
    expect(list.body.find((c) => c.id === campaign.id)?.reward_rules).toEqual([
      { ...welcome, hold_days: 30 },
    ]);
    // The history keeps both versions, the older one for events committed before the PATCH.
    const { Item } = await table().db.send(
      new GetCommand({
        TableName: table().name,
        Key: { PK: `T#${TENANT_A.tenant}#C#${campaign.id}`, SK: 'CAMPAIGN' },
      }),
    );
    expect(Item?.reward_rule_sets).toHaveLength(2);
  });

  it('refuses what the rules say no to, 400 validation_failed, never 5xx', async () => {
    const bad: unknown[] = [
      [{ ...referrerShare, amount: 10_001 }],
      [{ ...welcome, type: 'percent', amount: 10 }],
      [{ ...welcome, first_conversions: 1 }],
      [referrerShare, referrerShare],
      Array.from({ length: 11 }, (_, i) => ({ ...welcome, id: `r${i}` })),
      [{ ...welcome, hold_days: 366 }],
      [{ ...welcome, amount: 0 }],
      [{ ...welcome, amount: 1.5 }],
      [{ ...welcome, id: 'has space' }],
      [{ ...welcome, on: 'visit' }],
      [{ ...welcome, extra: true }],
      [null],
      'all',
      { 0: welcome },
    ];
    const { campaign } = await campaignWithRules([]);
    for (const reward_rules of bad) {
      expectError(
        await api('POST', '/api/v1/campaign', { body: { url: 'x.example', name: 'n', reward_rules } }),
        400,
        'validation_failed',
      );
      expectError(
        await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { reward_rules } }),
        400,
        'validation_failed',
      );
    }
    for (const review_signups_per_hour of [0, -1, 1.5, '20', null, 100_001]) {
      expectError(
        await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { review_signups_per_hour } }),
        400,
        'validation_failed',
      );
    }
  });
});

describe('rewards made by the stream', () => {
  it("a signup and a sale make their rules' rewards, once", async () => {
    const { campaign, link } = await campaignWithRules([welcome, signupBonus, referrerShare]);
    await createReferredUser(link.referral_code, 'buyer');
    const sale = await convert(campaign.id, 'buyer', 4999);
    const rewards = await eventually('three rewards', async () => {
      const found = await rewardsOf(campaign.id);
      return found.length === 3 ? found : undefined;
    });
    const by = (rule: string) => rewards.find((r) => r.rule_id === rule)!;
    expect(by('welcome')).toMatchObject({ recipient: 'referred_user', recipient_id: 'buyer', amount: 300 });
    expect(by('bonus')).toMatchObject({ recipient: 'referrer', recipient_id: link.referrer_id, amount: 500 });
    expect(by('share')).toMatchObject({
      recipient: 'referrer',
      amount: 499, // 10 % of 49.99 rounded down
      source_type: 'conversion',
      source_id: sale.id,
      status: 'pending',
      review_reasons: [],
    });

    // The batch again, as Lambda hands over a batch whose answer was lost: nothing new.
    const pk = `T#${TENANT_A.tenant}#C#${campaign.id}`;
    const records = await recordsOf(
      [
        { PK: pk, SK: 'RU#buyer' },
        { PK: pk, SK: (await campaignItems(TENANT_A.tenant, campaign.id, 'CV#'))[0]!.SK as string },
      ],
      'INSERT',
    );
    const handler = await consumer();
    expect((await handler({ Records: records })).batchItemFailures).toEqual([]);
    expect((await handler({ Records: [...records].reverse() })).batchItemFailures).toEqual([]);
    expect((await rewardsOf(campaign.id)).map((r) => r.id).sort()).toEqual(rewards.map((r) => r.id).sort());
  });

  it('a signup reward locks the campaign currency, as a first sale does', async () => {
    const { campaign, link } = await campaignWithRules([welcome]);
    // Before any reward, the currency may change.
    expect(
      (await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { currency: 'USD' } })).status,
    ).toBe(200);
    await createReferredUser(link.referral_code, 'locker');
    const [reward] = await eventually('the reward', async () => {
      const found = await rewardsOf(campaign.id);
      return found.length === 1 ? found : undefined;
    });
    expect(reward).toMatchObject({ currency: 'USD' });
    expectError(
      await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { currency: 'EUR' } }),
      409,
      'currency_locked',
    );
  });

  it("first_conversions rewards a referred user's first N sales only", async () => {
    const { campaign, link } = await campaignWithRules([{ ...referrerShare, first_conversions: 2 }]);
    await createReferredUser(link.referral_code, 'repeat');
    for (const amount of [1000, 2000, 3000]) await convert(campaign.id, 'repeat', amount);
    // The third conversion's record is handled after the first two (stream order per campaign).
    const rewards = await eventually('two rewards and the third sale handled', async () => {
      const found = await rewardsOf(campaign.id);
      const conversions = await campaignItems(TENANT_A.tenant, campaign.id, 'CV#');
      return found.length === 2 && conversions.every((c) => c.amount === 3000 || c.reward_ids)
        ? found
        : undefined;
    });
    expect(rewards.map((r) => r.amount).sort()).toEqual([100, 200]);
  });

  it('refunds void, adjust and claw back', async () => {
    const { campaign, link } = await campaignWithRules([referrerShare]);
    await createReferredUser(link.referral_code, 'refunder');
    const whole = await convert(campaign.id, 'refunder', 10_000);
    const part = await convert(campaign.id, 'refunder', 10_000);
    await eventually('two rewards', async () =>
      (await rewardsOf(campaign.id)).length === 2 ? true : undefined,
    );
    await refund(whole.id);
    await refund(part.id, 2_550);
    const after = await eventually('a void and an adjustment', async () => {
      const found = await rewardsOf(campaign.id);
      return found.length === 3 && found.some((r) => r.status === 'voided') ? found : undefined;
    });
    const voided = after.find((r) => r.source_id === whole.id)!;
    expect(voided).toMatchObject({ status: 'voided', void_reason: 'refunded', amount: 1000 });
    const adjustment = after.find((r) => r.kind === 'adjustment')!;
    // 10 % of the net 74.50 is 7.45: the 10.00 reward is lowered by 2.55.
    expect(adjustment).toMatchObject({ amount: -255, status: 'pending', source_id: part.id });

    // Paid, then refunded: a clawback, approved at once. (The payout as endpoint 31 records it.)
    const { recordPayout, approveRewardById } = await import('../../lib/db/rewards.ts');
    const partReward = after.find((r) => r.source_id === part.id && r.kind === 'reward')!;
    await approveRewardById(TENANT_A.tenant, partReward.id, Date.now());
    await recordPayout(TENANT_A.tenant, {
      campaignId: campaign.id,
      recipient: 'referrer',
      recipientId: link.referrer_id!,
      reference: null,
      nowMs: Date.now(),
    });
    await refund(part.id, 7_450);
    const clawed = await eventually('a clawback', async () => {
      const found = await rewardsOf(campaign.id);
      return found.find((r) => r.kind === 'adjustment' && r.status === 'approved');
    });
    expect(clawed.amount).toBe(-745);

    // Every refund record again: nothing new.
    const handler = await consumer();
    const count = (await rewardsOf(campaign.id)).length;
    const conversionKeys = (await campaignItems(TENANT_A.tenant, campaign.id, 'CV#')).map((c) => ({
      PK: c.PK as string,
      SK: c.SK as string,
    }));
    const replay = await recordsOf(conversionKeys, 'MODIFY');
    expect((await handler({ Records: replay })).batchItemFailures).toEqual([]);
    expect((await rewardsOf(campaign.id)).length).toBe(count);
  });

  it("a referrer over review_signups_per_hour: the signup's rewards wait in review, and so do its sales'", async () => {
    const { campaign, link } = await campaignWithRules([signupBonus, referrerShare], {
      review_signups_per_hour: 2,
    });
    for (const user of ['u1', 'u2', 'u3']) await createReferredUser(link.referral_code, user);
    await convert(campaign.id, 'u3', 1000);
    const rewards = await eventually('four rewards', async () => {
      const found = await rewardsOf(campaign.id);
      return found.length === 4 ? found : undefined;
    });
    const ofSignup = (user: string) => rewards.find((r) => r.source_id === user)!;
    expect(ofSignup('u1').status).toBe('pending');
    expect(ofSignup('u2').status).toBe('pending');
    expect(ofSignup('u3')).toMatchObject({
      status: 'in_review',
      review_reasons: ['referrer_signups_per_hour'],
    });
    expect(rewards.find((r) => r.source_type === 'conversion')).toMatchObject({
      status: 'in_review',
      review_reasons: ['referrer_signups_per_hour'],
    });
  });

  it('repeat_visitor: a signup whose click came from a visitor who signed up on the link within 24 h', async () => {
    const { campaign, link } = await campaignWithRules([welcome], { click_ids: true });
    // Another browser (user agent) is another visitor, by the same daily-keyed hash.
    const click = async (userAgent: string) => {
      const res = await api('GET', `/r/${link.referral_code}`, {
        key: null,
        headers: { 'user-agent': userAgent },
      });
      expect(res.status, res.text).toBe(302);
      return new URL(res.headers.get('location') ?? '').searchParams.get('rfclid')!;
    };
    const signUp = async (user: string, clickId: string) => {
      const res = await api('POST', '/api/v1/referred_user', {
        body: { click_id: clickId, referred_user_id: user },
      });
      expect(res.status, res.text).toBe(201);
    };
    const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    await signUp('v1', await click(BROWSER_UA));
    await signUp('v2', await click(BROWSER_UA));
    await signUp('v3', await click(firefox));
    const rewards = await eventually('three rewards', async () => {
      const found = await rewardsOf(campaign.id);
      return found.length === 3 ? found : undefined;
    });
    const of = (user: string) => rewards.find((r) => r.source_id === user)!;
    expect(of('v1')).toMatchObject({ status: 'pending', review_reasons: [] });
    expect(of('v2')).toMatchObject({ status: 'in_review', review_reasons: ['repeat_visitor'] });
    expect(of('v3')).toMatchObject({ status: 'pending', review_reasons: [] });
    // No IP address anywhere: the referred user keeps the visitor hash, an HMAC under the day's key.
    const users = await campaignItems(TENANT_A.tenant, campaign.id, 'RU#');
    for (const user of users) {
      // (Its event's link has the stack's own address in `share_url`: that is no visitor's.)
      const { event_json: _, ...stored } = user;
      expect(JSON.stringify(stored)).not.toContain('127.0.0.1');
      expect(user.visitor).toMatch(/^[A-Za-z0-9_-]{22}$/);
    }
    // The replayed signups find themselves in the marker: the same answers, nothing new.
    const handler = await consumer();
    const records = await recordsOf(
      users.map((u) => ({ PK: u.PK as string, SK: u.SK as string })),
      'INSERT',
    );
    expect((await handler({ Records: records })).batchItemFailures).toEqual([]);
    expect((await rewardsOf(campaign.id)).length).toBe(3);
  });

  it("a record that cannot be handled is reported alone; the batch's other campaigns go on", async () => {
    const handler = await consumer();
    const { campaign, link } = await campaignWithRules([welcome]);
    await table().db.send(
      new PutCommand({ TableName: table().name, Item: { PK: 'x', SK: 'y', type: 'referred_user' } }),
    );
    const bad = await recordsOf([{ PK: 'x', SK: 'y' }], 'INSERT', 7);
    const good = await createReferredUser(link.referral_code, 'ok');
    expect(good.referred_user_id).toBe('ok');
    const goodRecord = await recordsOf(
      [{ PK: `T#${TENANT_A.tenant}#C#${campaign.id}`, SK: 'RU#ok' }],
      'INSERT',
      8,
    );
    const res = await handler({ Records: [...bad, ...goodRecord] });
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: bad[0]!.dynamodb!.SequenceNumber }]);
    await eventually('the good one rewarded', async () =>
      (await rewardsOf(campaign.id)).length === 1 ? true : undefined,
    );
  });
});

describe('reward events', () => {
  it('every state change is a webhook: created, flagged, approved, voided, paid', async () => {
    const rx = await receiver();
    const { campaign, link } = await campaignWithRules([{ ...signupBonus, hold_days: 0 }], {
      review_signups_per_hour: 1,
    });
    const hooked = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
      body: { webhook_url: rx.url },
    });
    expect(hooked.status).toBe(200);
    await createReferredUser(link.referral_code, 'e1');
    await createReferredUser(link.referral_code, 'e2'); // the second in the hour: in review
    const types = async () =>
      rx.requests.map(
        (r) => JSON.parse(r.body) as { type: string; data: { source_id: string; status: string } },
      );
    await eventually('created and flagged', async () => {
      const t = (await types()).map((e) => `${e.type}:${e.data.source_id}`);
      return t.includes('reward.created:e1') && t.includes('reward.flagged:e2') ? true : undefined;
    });
    const rewards = await rewardsOf(campaign.id);
    const { voidRewardById, recordPayout } = await import('../../lib/db/rewards.ts');
    await voidRewardById(TENANT_A.tenant, rewards.find((r) => r.source_id === 'e2')!.id, 'fraud');
    // Hold 0: the release approves e1's reward at its next run (10 s locally).
    await eventually(
      'approved',
      async () => ((await types()).some((e) => e.type === 'reward.approved') ? true : undefined),
      30_000,
    );
    await recordPayout(TENANT_A.tenant, {
      campaignId: campaign.id,
      recipient: 'referrer',
      recipientId: link.referrer_id!,
      reference: 'test',
      nowMs: Date.now(),
    });
    const all = await eventually('voided and paid', async () => {
      const t = (await types()).map((e) => e.type);
      return t.includes('reward.voided') && t.includes('reward.paid') ? t : undefined;
    });
    expect(all.filter((t) => t.startsWith('reward.')).sort()).toEqual([
      'reward.approved',
      'reward.created',
      'reward.flagged',
      'reward.paid',
      'reward.voided',
    ]);
    // And the feed has them, once each (its writer is another stream reader: it may come later).
    const feedTypes = async () =>
      (await api<Array<{ type: string }>>('GET', `/api/v1/events/${campaign.id}?limit=100`)).body
        .map((e) => e.type)
        .filter((t) => t.startsWith('reward.'));
    await eventually('the five in the feed', async () =>
      (await feedTypes()).length >= 5 ? true : undefined,
    );
    expect((await feedTypes()).sort()).toEqual([
      'reward.approved',
      'reward.created',
      'reward.flagged',
      'reward.paid',
      'reward.voided',
    ]);
  });
});
