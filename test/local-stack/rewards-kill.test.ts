/**
 * The rewards ledger survives kill -9 (issue 30): `npm start` killed (Node and its JVM, the whole
 * process group) while sales are being recorded, so while the stream job creates their rewards,
 * and again while payouts are being recorded; started again on the same DATA_DIR, every sale the
 * table holds has exactly its rewards (none lost, none twice), and after the payouts are retried
 * with their Idempotency-Keys every reward is paid exactly once, each payout's amount is the sum of
 * its rewards and every balance adds up. A real `npm start`; every wait is on state.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/ports.ts';
import { eventually, mapLimit } from '../../tools/wait.ts';
import { type Api, type ApiResponse, apiAt, postAsClient } from '../support/api.ts';
import {
  cleanUpStacks,
  killGroup,
  ready,
  START_TIMEOUT,
  start,
  tempDataDir,
} from '../support/stack-process.ts';

afterAll(cleanUpStacks);

const KEY = 'rewards-kill-key-00000000000000001';
const REFERRERS = 6;
const SIGNUP_REWARD = 100;
const SALE_PERCENT_BP = 1_000;

async function startOn(dataDir: string) {
  const s = await start({ DATA_DIR: dataDir, DEV_API_KEYS: `acme:${KEY}`, PORT: String(await freePort()) });
  return { s, ...(await ready(s)) };
}

interface Reward {
  id: string;
  recipient: string;
  recipient_id: string;
  source_type: string;
  source_id: string;
  rule_id: string;
  amount: number;
  status: string;
  payout_id: string | null;
}

/** Every item of a list, page after page (newest first, `x-next-cursor`). */
async function all<T>(api: Api, path: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page: string = `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    let res: ApiResponse<T[]> = await api<T[]>('GET', page);
    // A 503 says retry (DynamoDB Local, just restarted on a loaded machine, answered too slowly):
    // as a client would, for up to a minute.
    for (let tries = 0; res.status === 503 && tries < 120; tries++) {
      await new Promise((r) => setTimeout(r, 500));
      res = await api<T[]>('GET', page);
    }
    expect(res.status, res.text).toBe(200);
    items.push(...res.body);
    cursor = res.headers.get('x-next-cursor');
  } while (cursor);
  return items;
}

describe('rewards across kill -9 and a restart on the same DATA_DIR', () => {
  it(
    'creates each reward once from what the table holds, and pays each reward once',
    async () => {
      const dir = tempDataDir();
      let stack = await startOn(dir);
      let api = apiAt(stack.baseUrl, KEY);
      const campaign = await postAsClient(api, '/api/v1/campaign', {
        url: 'example.com/kill',
        name: 'Rewards under kill',
        // No review hold: each referrer brings a dozen signups within the minute.
        review_signups_per_hour: 1_000,
        reward_rules: [
          {
            id: 'signup',
            on: 'referred_user',
            recipient: 'referrer',
            type: 'flat',
            amount: SIGNUP_REWARD,
            hold_days: 0,
          },
          {
            id: 'share',
            on: 'conversion',
            recipient: 'referrer',
            type: 'percent',
            amount: SALE_PERCENT_BP,
            hold_days: 0,
          },
        ],
      });
      expect(campaign.status, campaign.text).toBe(201);
      const campaignId = campaign.body.id as string;
      const codes = await mapLimit(Array.from({ length: REFERRERS }), REFERRERS, async (_, i) => {
        const link = await postAsClient(api, '/api/v1/referral_link', {
          campaign_id: campaignId,
          referrer_id: `referrer-${i}`,
        });
        expect(link.status, link.text).toBe(201);
        return link.body.referral_code as string;
      });

      // 1. Signups and sales from 12 clients; the stack is killed after 60 answers, mid-load.
      let stop = false;
      let answered = 0;
      let n = 0;
      const base = stack.baseUrl;
      const one = async () => {
        const i = n++;
        const user = `buyer-${i}`;
        try {
          const signup = await postAsClient(
            apiAt(base, KEY),
            '/api/v1/referred_user',
            { referral_code: codes[i % REFERRERS], referred_user_id: user },
            { abandon: () => stop },
          );
          expect(signup.status, signup.text).toBe(201);
          const sale = await postAsClient(
            apiAt(base, KEY),
            '/api/v1/conversion',
            { campaign_id: campaignId, referred_user_id: user, amount: 1_000 + i * 37 },
            { abandon: () => stop },
          );
          expect(sale.status, sale.text).toBe(201);
          answered++;
        } catch (err) {
          // No answer: the stack is gone. Committed or not; the table says which, below.
          if (!(err instanceof TypeError) || !stop) throw err;
        }
      };
      const loops = Array.from({ length: 12 }, async () => {
        while (!stop) await one();
      });
      await eventually(
        '60 signups with their sales answered',
        async () => (answered >= 60 ? true : undefined),
        180_000,
      );
      stop = true;
      await killGroup(stack.s, dir);
      await Promise.all(loops);

      // 2. Restarted: the stream job goes on from where it was; every signup and sale in the table
      // gets exactly its rewards, approved (hold 0) by the scheduled release.
      stack = await startOn(dir);
      api = apiAt(stack.baseUrl, KEY);
      const users = await all<{ referred_user_id: string }>(api, `/api/v1/referred_users/${campaignId}`);
      const sales = await all<{ id: string; amount: number }>(api, `/api/v1/conversions/${campaignId}`);
      expect(users.length).toBeGreaterThanOrEqual(60);
      expect(sales.length).toBeGreaterThanOrEqual(60);
      const expected =
        users.length * SIGNUP_REWARD +
        sales.reduce((a, s) => a + Math.floor((s.amount * SALE_PERCENT_BP) / 10_000), 0);
      const rewards = await eventually(
        'every signup and sale rewarded, and released',
        async () => {
          const listed = await all<Reward>(api, `/api/v1/rewards/${campaignId}`);
          const done =
            listed.length === users.length + sales.length && listed.every((r) => r.status === 'approved');
          return done ? listed : undefined;
        },
        120_000,
      );
      const sources = rewards.map((r) => `${r.rule_id}:${r.source_type}:${r.source_id}`);
      expect(new Set(sources).size, 'one reward per rule and source').toBe(rewards.length);
      expect(new Set(rewards.map((r) => r.id)).size).toBe(rewards.length);
      expect(rewards.reduce((a, r) => a + r.amount, 0)).toBe(expected);

      // 3. Payouts of every referrer at once, two per referrer, killed mid-way; then retried with
      // the same keys on the restarted stack, as a client that got no answer does.
      const keys = codes.map((_, i) => [`payout-${i}-a`, `payout-${i}-b`]);
      const payout = async (target: Api, i: number, key: string) =>
        target('POST', '/api/v1/payout', {
          body: {
            campaign_id: campaignId,
            recipient: 'referrer',
            recipient_id: `referrer-${i}`,
            reference: key,
          },
          idempotencyKey: key,
        });
      let firstAnswer = false;
      const first = keys.flatMap((pair, i) =>
        pair.map((key) =>
          payout(api, i, key).finally(() => {
            firstAnswer = true;
          }),
        ),
      );
      // Settled from the start: the payouts the kill cuts off reject while it runs.
      const settled = Promise.allSettled(first);
      await eventually('a first payout answered', async () => (firstAnswer ? true : undefined), 60_000);
      await killGroup(stack.s, dir);
      await settled;
      stack = await startOn(dir);
      api = apiAt(stack.baseUrl, KEY);
      const answers = await mapLimit(
        keys.flatMap((pair, i) => pair.map((key) => ({ i, key }))),
        4,
        async ({ i, key }) => {
          for (;;) {
            const res = await payout(api, i, key);
            if (
              res.status !== 503 &&
              !(res.status === 409 && res.body?.error?.code === 'idempotency_key_in_progress')
            )
              return res;
            await new Promise((r) => setTimeout(r, 300));
          }
        },
      );
      for (const res of answers) {
        expect([201, 422], res.text).toContain(res.status);
        if (res.status === 422) expect(res.body.error.code).toBe('nothing_to_pay');
      }

      // 4. The invariants: every reward paid, in exactly one payout, whose amount is its rewards'.
      const paid = await all<Reward>(api, `/api/v1/rewards/${campaignId}`);
      const payouts = await all<{ id: string; amount: number; reward_ids: string[] }>(
        api,
        `/api/v1/payouts/${campaignId}`,
      );
      expect(paid.every((r) => r.status === 'paid')).toBe(true);
      const inPayouts = payouts.flatMap((p) => p.reward_ids);
      expect(new Set(inPayouts).size, 'no reward in two payouts').toBe(inPayouts.length);
      expect(new Set(inPayouts)).toEqual(new Set(paid.map((r) => r.id)));
      const amountOf = new Map(paid.map((r) => [r.id, r.amount]));
      for (const p of payouts)
        expect(p.amount).toBe(p.reward_ids.reduce((a, id) => a + (amountOf.get(id) ?? NaN), 0));
      expect(payouts.reduce((a, p) => a + p.amount, 0)).toBe(expected);
      for (let i = 0; i < REFERRERS; i++) {
        const balance = await api('GET', `/api/v1/balance/${campaignId}/referrer-${i}?recipient=referrer`);
        expect(balance.status, balance.text).toBe(200);
        const mine = paid.filter((r) => r.recipient_id === `referrer-${i}`).reduce((a, r) => a + r.amount, 0);
        expect(balance.body).toMatchObject({ in_review: 0, pending: 0, approved: 0, paid: mine });
      }
      await killGroup(stack.s, dir);
    },
    START_TIMEOUT * 5,
  );
});
