/**
 * The local stack is as durable as the cloud one with DATA_DIR on disk: stopped with Ctrl-C or
 * killed with SIGKILL (Node and its JVM, the whole process group) in the middle of its work and
 * started again on the same DATA_DIR, it loses no committed event, pending delivery or started
 * purge. Real `npm start` processes, a real webhook receiver in this process; every wait is on
 * state. The three scenarios run side by side, each on its own stack.
 */

import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { campaignPartition } from '../../lib/db/entities/campaign.ts';
import { campaignLinksPartition, linkKey, newLinkItem } from '../../lib/db/entities/link.ts';
import { freePort } from '../../lib/local/ports.ts';
import { LOCAL_TABLE_NAME } from '../../lib/local/stack.ts';
import { eventually, mapLimit } from '../../tools/wait.ts';
import type { ReceivedRequest } from '../../tools/webhook-receiver.ts';
import { apiAt, postAsClient } from '../support/api.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import { BROWSER_UA, createCampaignWithWebhook } from '../support/records.ts';
import {
  cleanUpStacks,
  javaPidsFor,
  killGroup,
  ready,
  START_TIMEOUT,
  start,
  tempDataDir,
} from '../support/stack-process.ts';
import { putItems, TOOL_TIMEOUT_MS } from '../support/table.ts';

afterAll(cleanUpStacks);
const receiver = receiversClosedAfterAll();

/** A stack on `dataDir` with one tenant's key, ready; its base URL, DynamoDB and queue line. */
async function startOn(dataDir: string, key: string, env: Record<string, string> = {}) {
  const s = await start({
    DATA_DIR: dataDir,
    DEV_API_KEYS: `acme:${key}`,
    PORT: String(await freePort()),
    ...env,
  });
  const info = await ready(s);
  const restored = Number(/\((\d+) pending messages restored/.exec(s.stdout())?.[1] ?? 0);
  return { s, ...info, restored };
}

interface Delivered {
  type: string;
  data: { id: number; action_type?: string; referral_link: { id: number } };
}

/** Distinct events a receiver has seen, by `webhook-id` (the consumer's dedupe key). */
function distinctEvents(requests: readonly ReceivedRequest[]): Map<string, Delivered> {
  const events = new Map<string, Delivered>();
  for (const r of requests) events.set(String(r.headers['webhook-id']), JSON.parse(r.body) as Delivered);
  return events;
}

describe('kill -9 and Ctrl-C, then a restart on the same DATA_DIR', () => {
  // One stack for load and retries: every JVM start costs seconds of both cores.
  it.concurrent(
    'SIGKILL under load with retries pending, then Ctrl-C with retries pending: every committed event is delivered, counters exact',
    async () => {
      const dir = tempDataDir();
      const key = 'kill-load-key-000000000000000001';
      const rx = await receiver();
      // A second campaign's receiver refuses every attempt until told otherwise.
      let failing = true;
      const succeeded = new Set<string>();
      const flaky = await receiver((request) => {
        if (failing) return { status: 500 };
        succeeded.add(String(request.headers['webhook-id']));
        return { status: 200 };
      });
      // Twenty 2-second retries: attempts to spare across the stops and starts.
      const env = { WEBHOOK_RETRY_DELAYS: Array.from({ length: 20 }, () => '2').join(',') };
      let stack = await startOn(dir, key, env);
      const campaignId = (await createCampaignWithWebhook(rx.url, apiAt(stack.baseUrl, key))).id;
      const flakyCampaign = (await createCampaignWithWebhook(flaky.url, apiAt(stack.baseUrl, key))).id;
      const flakyLink = await postAsClient(apiAt(stack.baseUrl, key), '/api/v1/referral_link', {
        campaign_id: flakyCampaign,
      });
      const links = await mapLimit(Array.from({ length: 8 }), 8, async (_, i) => {
        const link = await postAsClient(apiAt(stack.baseUrl, key), '/api/v1/referral_link', {
          campaign_id: campaignId,
          referrer_id: `referrer-${i}`,
        });
        expect(link.status).toBe(201);
        return { id: Number(link.body.id), code: link.body.referral_code as string };
      });
      // One referred user per link, for actions of a referred user (endpoint 5).
      for (const [i, link] of links.entries()) {
        const user = await postAsClient(apiAt(stack.baseUrl, key), '/api/v1/referred_user', {
          referral_code: link.code,
          referred_user_id: `member-${i}`,
        });
        expect(user.status).toBe(201);
      }

      /** 40 events for the refusing receiver, each attempted and refused at least once: pending. */
      const refusedEvents = async (label: string) => {
        failing = true;
        const actions = await mapLimit(Array.from({ length: 40 }), 8, async (_, n) => {
          const res = await postAsClient(apiAt(stack.baseUrl, key), '/api/v1/action/referral_link', {
            referral_code: flakyLink.body.referral_code,
            action_type: `${label}-${n}`,
          });
          expect(res.status, res.text).toBe(201);
          return Number(res.body.id);
        });
        return eventually(`every ${label} event attempted and refused`, async () => {
          const events = distinctEvents(flaky.requests);
          const idOf = new Map([...events].map(([id, e]) => [e.data.id, id]));
          const pending = actions.map((a) => idOf.get(a));
          return pending.every((id) => id !== undefined) ? (pending as string[]) : undefined;
        });
      };

      // 1. SIGKILL mid-load, with those retries pending.
      const pendingAtKill = await refusedEvents('kill');
      // Per link: writes answered 2xx, writes with no answer (in flight at the kill: committed or
      // not), and the ids of the actions and referred users the 2xx answers returned.
      const tally = links.map(() => ({ clicks: 0, clicksUnknown: 0, signups: 1, signupsUnknown: 0 }));
      const okActionIds = new Set<number>();
      const okUserIds = new Set<number>();
      let answered = 0;
      let stop = false;
      let signupSeq = 0;
      const base = stack.baseUrl;
      /** A keyed POST retried through 503s until its 201, or until the kill abandons it. */
      const post = async (path: string, body: unknown) => {
        const res = await postAsClient(apiAt(base, key), path, body, { abandon: () => stop });
        expect(res.status, res.text).toBe(201);
        return res;
      };
      const one = async (n: number) => {
        const i = n % links.length;
        const link = links[i]!;
        const kind = n % 4;
        try {
          if (kind === 0) {
            const res = await apiAt(base)('GET', `/r/${link.code}`, {
              headers: { 'user-agent': BROWSER_UA },
            });
            // A visit has no key to retry with: after a 503 it may or may not have been counted.
            if (res.status === 503) throw new TypeError('visit answered 503');
            expect(res.status).toBe(302);
            tally[i]!.clicks++;
          } else if (kind === 1) {
            const res = await post('/api/v1/action/referral_link', {
              referral_code: link.code,
              action_type: 'share',
            });
            okActionIds.add(Number(res.body.id));
            tally[i]!.clicks++;
          } else if (kind === 2) {
            const res = await post('/api/v1/action/referred_user', {
              campaign_id: campaignId,
              referred_user_id: `member-${i}`,
              action_type: 'purchase',
              metadata: { n },
            });
            okActionIds.add(Number(res.body.id));
            tally[i]!.clicks++;
          } else {
            const res = await post('/api/v1/referred_user', {
              referral_code: link.code,
              referred_user_id: `signup-${signupSeq++}`,
            });
            okUserIds.add(Number(res.body.id));
            tally[i]!.signups++;
          }
          answered++;
        } catch (err) {
          // No answer (the stack is gone, or a visit's 503): committed or not, not a wrong answer.
          if (!(err instanceof TypeError) || (!stop && err.message !== 'visit answered 503')) throw err;
          if (kind === 3) tally[i]!.signupsUnknown++;
          else tally[i]!.clicksUnknown++;
        }
      };
      let next = 0;
      const loops = Array.from({ length: 24 }, async () => {
        while (!stop) await one(next++);
      });
      // Load, not a speed: on a busy machine 250 writes can take minutes.
      await eventually('250 writes answered', async () => (answered >= 250 ? true : undefined), 180_000);
      // Mid-load: two dozen requests in flight.
      stop = true;
      await killGroup(stack.s, dir);
      await Promise.all(loops);
      const inFlight = tally.reduce((a, t) => a + t.clicksUnknown + t.signupsUnknown, 0);
      const deliveredBeforeKill = distinctEvents(rx.requests).size;
      expect(pendingAtKill.filter((id) => succeeded.has(id))).toEqual([]);

      stack = await startOn(dir, key, env);
      const restoredAfterKill = stack.restored;
      // The pending retries come back from the queue's journal: the stream handed them over long ago.
      expect(restoredAfterKill).toBeGreaterThanOrEqual(pendingAtKill.length);
      failing = false;
      // A 503 with Retry-After is the contract's "try again" (the restarted DynamoDB Local can be
      // slower than a read's 5 s budget while it replays the stream on a busy machine): not yet.
      let unavailable = 0;
      const linkState = async () => {
        const state = await Promise.all(
          links.map(async (link) => {
            const res = await apiAt(stack.baseUrl, key)(
              'GET',
              `/api/v1/referral_link?referral_code=${link.code}`,
            );
            if (res.status === 503) return undefined;
            expect(res.status).toBe(200);
            return { clicks: Number(res.body.total_clicks), referrals: Number(res.body.total_referrals) };
          }),
        );
        if (state.includes(undefined)) {
          unavailable++;
          return undefined;
        }
        return state as { clicks: number; referrals: number }[];
      };
      // Every committed write has its event delivered, and its count on its link (visits reach
      // total_clicks through the stream's rollups, so both settle a moment after the restart):
      // per link, as many distinct events as counted, and never more.
      let seen: unknown;
      // Each look is eight reads through a stack that is replaying its stream: twice a second; at
      // the default tenth the polls alone would add 80 requests a second to the stack's work.
      const settled = await eventually(
        'every committed event delivered and counted',
        async () => {
          const counted = await linkState();
          if (!counted) return undefined;
          const events = distinctEvents(rx.requests);
          const per = links.map((link) => {
            const of = [...events.values()].filter((e) => e.data.referral_link.id === link.id);
            return {
              clicks: of.filter((e) => e.type === 'action.created').length,
              referrals: of.filter((e) => e.type === 'referred_user.created').length,
            };
          });
          seen = { counted, per };
          return JSON.stringify(per) === JSON.stringify(counted)
            ? { totals: counted, events, per }
            : undefined;
        },
        60_000,
        500,
      ).catch((err) => {
        throw new Error(
          `counters and delivered events never agreed (${err}; ${unavailable} polls answered 503): ${JSON.stringify(seen)}`,
        );
      });
      const totals = settled.totals;
      const delivered = { events: settled.events, per: settled.per };
      // The analytics count every committed interaction once, through the kill: the rollups'
      // checkpoint moves in the same transaction as the counts, so the replay after it adds nothing.
      const all = [...delivered.events.values()];
      const expected = {
        visits: all.filter((e) => e.type === 'action.created' && e.data.action_type === 'visit').length,
        referred_users: all.filter((e) => e.type === 'referred_user.created').length,
        actions: all.filter((e) => e.type === 'action.created' && e.data.action_type !== 'visit').length,
      };
      let analytics: unknown;
      await eventually(
        'analytics equal the committed interactions',
        async () => {
          const res = await apiAt(stack.baseUrl, key)('GET', `/api/v1/analytics/${campaignId}`);
          if (res.status === 503) return undefined;
          const { visits, referred_users, actions } = res.body.totals;
          analytics = { visits, referred_users, actions };
          return JSON.stringify(analytics) === JSON.stringify(expected) ? true : undefined;
        },
        60_000,
        500,
      ).catch((err) => {
        throw new Error(
          `analytics ${JSON.stringify(analytics)}, committed ${JSON.stringify(expected)} (${err})`,
        );
      });
      for (const [i, t] of tally.entries()) {
        expect(totals[i]!.clicks).toBeGreaterThanOrEqual(t.clicks);
        expect(totals[i]!.clicks).toBeLessThanOrEqual(t.clicks + t.clicksUnknown);
        expect(totals[i]!.referrals).toBeGreaterThanOrEqual(t.signups);
        expect(totals[i]!.referrals).toBeLessThanOrEqual(t.signups + t.signupsUnknown);
      }
      const deliveredIds = new Set([...delivered.events.values()].map((e) => `${e.type}:${e.data.id}`));
      for (const id of okActionIds)
        expect(deliveredIds.has(`action.created:${id}`), `action ${id}`).toBe(true);
      for (const id of okUserIds)
        expect(deliveredIds.has(`referred_user.created:${id}`), `user ${id}`).toBe(true);
      // The counters read after the restart are the stored ones: a second look changes nothing.
      expect(await eventually('a second look at the counters', linkState)).toEqual(totals);
      await eventually('every retry pending at the kill delivered', async () =>
        pendingAtKill.every((id) => succeeded.has(id)) ? true : undefined,
      );

      // 2. Ctrl-C (SIGINT to the process group, as a terminal sends it) with retries pending.
      const pendingAtStop = await refusedEvents('ctrl-c');
      process.kill(-(stack.s.child.pid as number), 'SIGINT');
      expect((await stack.s.exit).code).toBe(0);
      expect(pendingAtStop.filter((id) => succeeded.has(id))).toEqual([]);
      stack = await startOn(dir, key, env);
      expect(stack.restored).toBeGreaterThanOrEqual(pendingAtStop.length);
      failing = false;
      await eventually('every retry pending at the Ctrl-C delivered', async () =>
        pendingAtStop.every((id) => succeeded.has(id)) ? true : undefined,
      );
      await killGroup(stack.s, dir);
      console.info(
        `kill under load: ${answered} writes answered, ${inFlight} in flight at the kill, ` +
          `${delivered.events.size} events delivered (${deliveredBeforeKill} before the kill); ` +
          `${restoredAfterKill} queue messages restored after the kill (${pendingAtKill.length} pending retries), ` +
          `${stack.restored} after the Ctrl-C (${pendingAtStop.length} pending retries)`,
      );
    },
    START_TIMEOUT * 4,
  );

  it.concurrent(
    'SIGKILL mid-purge: after the restart the purge completes, and the tenant can issue its codes again',
    async () => {
      const dir = tempDataDir();
      const key = 'kill-purge-key-00000000000000001';
      let stack = await startOn(dir, key);
      const created = await apiAt(stack.baseUrl, key)('POST', '/api/v1/campaign', {
        body: {
          url: 'example.com',
          name: 'purged while killed',
        },
      });
      const campaign = { id: created.body.id as string, url: created.body.url as string };
      const custom = `KILL-${campaign.id.slice(0, 8)}`;
      const first = await apiAt(stack.baseUrl, key)('POST', '/api/v1/referral_link', {
        body: {
          campaign_id: campaign.id,
          referral_code: custom,
        },
      });
      expect(first.status).toBe(201);
      expect(
        (
          await apiAt(stack.baseUrl, key)('POST', '/api/v1/referred_user', {
            body: {
              referral_code: custom,
              referred_user_id: 'purged-user',
            },
          })
        ).status,
      ).toBe(201);
      // The rest written straight into the table by lib/db's own link builder (the items the API
      // writes): 1,600 creates through the API would take most of the test's time.
      const codes = Array.from({ length: 1600 }, (_, i) => `BULK-${campaign.id.slice(0, 8)}-${i}`);
      let db = createDocumentClient(stack.dynamodbEndpoint, undefined, TOOL_TIMEOUT_MS);
      await putItems(
        codes.map((code, i) =>
          newLinkItem({
            tenant: 'acme',
            campaignId: campaign.id,
            campaignUrl: campaign.url,
            id: 8_000_000_000 + i,
            code,
            referrerId: null,
            now: new Date(),
          }),
        ),
        { db, name: LOCAL_TABLE_NAME },
      );
      const linksLeft = async () => {
        const out = await db.send(
          new QueryCommand({
            TableName: LOCAL_TABLE_NAME,
            IndexName: 'GSI2',
            KeyConditionExpression: 'GSI2PK = :pk',
            ExpressionAttributeValues: { ':pk': campaignLinksPartition('acme', campaign.id) },
            Select: 'COUNT',
          }),
        );
        return out.Count ?? 0;
      };
      expect(await linksLeft()).toBe(codes.length + 1);

      const deleted = await apiAt(stack.baseUrl, key)('DELETE', `/api/v1/campaign?id=${campaign.id}`);
      expect(deleted.status).toBe(204);
      const deletedAt = Date.now();
      // Kill in the middle of a purge pass: as soon as it has replaced some links.
      const left = await eventually(
        'the purge at work',
        async () => {
          const count = await linksLeft();
          return count < codes.length + 1 ? count : undefined;
        },
        30_000,
      );
      const killedAfter = Date.now() - deletedAt;
      await killGroup(stack.s, dir);
      db.destroy();
      expect(left, 'the purge was still running at the kill').toBeGreaterThan(0);

      stack = await startOn(dir, key);
      db = createDocumentClient(stack.dynamodbEndpoint, undefined, TOOL_TIMEOUT_MS);
      try {
        // Links become reservations first, then the campaign's partition is emptied.
        const partitionLeft = async () =>
          (
            await db.send(
              new QueryCommand({
                TableName: LOCAL_TABLE_NAME,
                KeyConditionExpression: 'PK = :pk',
                ExpressionAttributeValues: { ':pk': campaignPartition('acme', campaign.id) },
                Select: 'COUNT',
                ConsistentRead: true,
              }),
            )
          ).Count ?? 0;
        // Two counting queries over up to 1,600 items: once a second while the purge runs.
        await eventually(
          'the purge completed',
          async () => ((await linksLeft()) + (await partitionLeft()) === 0 ? true : undefined),
          90_000,
          1_000,
        ).catch(async (err: Error) => {
          throw new Error(
            `${err.message}; ${await linksLeft()} links and ${await partitionLeft()} items left\n${stack.s.stderr().slice(-4000)}`,
          );
        });
        for (const code of [custom, codes[0]!, codes.at(-1)!]) {
          const { Item } = await db.send(
            new GetCommand({ TableName: LOCAL_TABLE_NAME, Key: linkKey(code), ConsistentRead: true }),
          );
          expect(Item).toMatchObject({ type: 'code_reservation', tenant: 'acme' });
        }
        // The tenant issues the deleted campaign's codes again.
        const next = await apiAt(stack.baseUrl, key)('POST', '/api/v1/campaign', {
          body: {
            url: 'example.com',
            name: 'next',
          },
        });
        for (const code of [custom, codes[0]!]) {
          const again = await apiAt(stack.baseUrl, key)('POST', '/api/v1/referral_link', {
            body: {
              campaign_id: next.body.id,
              referral_code: code,
            },
          });
          expect(again.status, code).toBe(201);
        }
        console.info(
          `kill mid-purge: ${codes.length + 1 - left} of ${codes.length + 1} links purged at the kill ` +
            `(${killedAfter} ms after the DELETE), ${stack.restored} queue messages restored`,
        );
      } finally {
        db.destroy();
      }
      await killGroup(stack.s, dir);
      expect(javaPidsFor(dir)).toEqual([]);
    },
    START_TIMEOUT * 3,
  );
});
