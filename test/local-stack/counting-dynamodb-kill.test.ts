/**
 * The counting pipeline of a real `npm start` when DynamoDB Local dies under it (issue 27 item 3):
 * visits through `/r/{code}` and actions through endpoint 12 on several links of several
 * referrers, DynamoDB Local's JVM killed with SIGKILL mid-load, so that the counting consumer's
 * batch in hand fails, and fails again; then the whole `npm start` killed with SIGKILL (the stack
 * does not restart its DynamoDB Local alone) and started again on the same DATA_DIR. Once the
 * stream has settled, every figure equals what the table holds, exactly: each link's
 * `total_clicks`, the campaign's, the links' and the referrers' series (endpoint 16), the top
 * lists (endpoint 17) and the events feed (endpoint 19), each committed interaction once. What
 * got its 302 or 201 is among them; what got a 503 or no answer may or may not have committed,
 * and counts as the table says.
 *
 * The local poller once emptied its batch in hand when DynamoDB stopped answering and moved its
 * checkpoint past it: 41 visits and 37 actions never counted, even after another restart.
 */

import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import type { SeriesPoint } from '../../lib/db/entities/analytics.ts';
import { freePort } from '../../lib/local/ports.ts';
import { LOCAL_TABLE_NAME } from '../../lib/local/stack.ts';
import { campaignItems, type Table, visitItems } from '../../tools/table.ts';
import { eventually, mapLimit } from '../../tools/wait.ts';
import { type Api, apiAt } from '../support/api.ts';
import { BROWSER_UA } from '../support/records.ts';
import {
  alive,
  cleanUpStacks,
  javaPidsFor,
  killGroup,
  ready,
  START_TIMEOUT,
  start,
  tempDataDir,
} from '../support/stack-process.ts';
import { TOOL_TIMEOUT_MS } from '../support/table.ts';

afterAll(cleanUpStacks);

const TENANT = 'acme';
const KEY = 'count-kill-key-00000000000000001';
/** Two links per referrer, so a referrer's figures are sums over links. */
const REFERRERS = ['ann', 'bob', 'cy'];
const ACTION_TYPES = ['share', 'purchase', 'signup_click'];
/** Visitors by user agent (one IP address): most visits are repeats, some unique. */
const VISITORS = 7;
/**
 * The counting consumer's line for an invocation it fails (`functions/stream/feed-and-rollups.ts`),
 * and the poller's for one it failed by throwing: one without records (a window's final one).
 */
const INVOCATION_FAILED = /a counting job failed; the batch comes again/g;
const EMPTY_INVOCATION_FAILED = /the counting consumer failed; the invocation comes again/g;

/**
 * How long the first stack's counting reader holds what it read before handing it over (1 s
 * deployed): long enough that records are in its hand when DynamoDB Local dies, whatever the
 * machine's load. With 1 s, a loaded run found the reader's hand empty at the kill about one time
 * in ten: nothing but the window's final invocation then failed, and the wait below timed out.
 */
const HOLD_MS = 4_000;

/** `npm start` on `dir`, ready; its client and DynamoDB endpoint. */
async function startOn(dir: string, env: Record<string, string> = {}) {
  const s = await start({
    DATA_DIR: dir,
    DEV_API_KEYS: `${TENANT}:${KEY}`,
    PORT: String(await freePort()),
    LOCAL_REQUEST_LOG: 'off',
    ...env,
  });
  const info = await ready(s);
  return { s, api: apiAt(info.baseUrl, KEY), dynamodbEndpoint: info.dynamodbEndpoint };
}

/** The campaign's totals (endpoint 16): a series point's counts. */
type Metrics = Omit<SeriesPoint, 'bucket'>;

/** A committed visit or action, as its item in the table says. */
interface Committed {
  eventId: string;
  actionId: number;
  linkId: number;
  referrerId: string;
  hour: string;
  kind: 'visit' | 'action';
  unique: boolean;
  actionType: string;
}

const zero = (): Metrics => ({
  visits: 0,
  unique_visits: 0,
  bot_visits: 0,
  referred_users: 0,
  conversions: 0,
  revenue: 0,
  actions: 0,
  actions_by_type: {},
});

/** Totals and the non-empty hours (`YYYY-MM-DD_HH`) of `items`, as endpoint 16 should show them. */
function expectedSeries(items: readonly Committed[]) {
  const totals = zero();
  const hours: Record<string, Metrics> = {};
  for (const c of items) {
    const hour = hours[c.hour] ?? zero();
    hours[c.hour] = hour;
    for (const m of [totals, hour]) {
      if (c.kind === 'visit') {
        m.visits++;
        if (c.unique) m.unique_visits++;
      } else {
        m.actions++;
        m.actions_by_type[c.actionType] = (m.actions_by_type[c.actionType] ?? 0) + 1;
      }
    }
  }
  return {
    totals: sortTypes(totals),
    hours: Object.fromEntries(Object.entries(hours).map(([h, m]) => [h, sortTypes(m)])),
  };
}

function sortTypes(m: Metrics): Metrics {
  return { ...m, actions_by_type: Object.fromEntries(Object.entries(m.actions_by_type).sort()) };
}

const countBy = (items: readonly Committed[], key: (c: Committed) => string | number) => {
  const counts: Record<string, number> = {};
  for (const c of items) counts[key(c)] = (counts[key(c)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort());
};

describe('DynamoDB Local killed while the counting consumer holds a failing batch', () => {
  it(
    'after a restart on the same DATA_DIR every figure counts exactly the committed visits and actions',
    async () => {
      const began = Date.now();
      const phases: string[] = [];
      const phase = (name: string) => phases.push(`${name} ${((Date.now() - began) / 1000).toFixed(0)} s`);
      const dir = tempDataDir();
      let stack = await startOn(dir, { ROLLUP_BATCHING_WINDOW_MS: String(HOLD_MS) });
      phase('started');
      let api: Api = stack.api;
      const created = await api('POST', '/api/v1/campaign', { body: { url: 'example.com', name: 'kill' } });
      expect(created.status, created.text).toBe(201);
      const campaignId = created.body.id as string;
      const links = await mapLimit(
        REFERRERS.flatMap((r) => [r, r]),
        3,
        async (referrerId) => {
          const res = await api('POST', '/api/v1/referral_link', {
            body: { campaign_id: campaignId, referrer_id: referrerId },
          });
          expect(res.status, res.text).toBe(201);
          return { id: Number(res.body.id), code: res.body.referral_code as string, referrerId };
        },
      );
      // Another campaign's link, visited once the figures agree: counted, it shows the stream has
      // passed every record of the campaign under test.
      const other = await api('POST', '/api/v1/campaign', { body: { url: 'example.com', name: 'marker' } });
      const marker = await api('POST', '/api/v1/referral_link', { body: { campaign_id: other.body.id } });
      expect(marker.status, marker.text).toBe(201);

      // Per link: answered 302s and 201s, and requests answered 503 or not at all.
      const tally = links.map(() => ({ acknowledged: 0, unknown: 0 }));
      const acknowledgedActions = new Set<number>();
      const unexpected: string[] = [];
      let answered = 0;
      let stop = false;
      const base = api;
      // Two visits and one action in every three requests, spread evenly over links and types.
      const one = async (n: number) => {
        const i = Math.floor(n / 3) % links.length;
        const link = links[i]!;
        const visit = n % 3 !== 2;
        let status = 0;
        try {
          const res = visit
            ? await base('GET', `/r/${link.code}`, {
                headers: { 'user-agent': `${BROWSER_UA} v${n % VISITORS}` },
              })
            : await base('POST', '/api/v1/action/referral_link', {
                body: {
                  referral_code: link.code,
                  action_type: ACTION_TYPES[Math.floor(n / 3 / links.length) % ACTION_TYPES.length],
                },
              });
          status = res.status;
          if (status === 201) acknowledgedActions.add(Number(res.body.id));
        } catch (err) {
          // No answer: the stack is being killed (a connection cut), committed or not.
          if (!(err instanceof TypeError)) throw err;
        }
        if (status === (visit ? 302 : 201)) {
          tally[i]!.acknowledged++;
          answered++;
        } else if (status === 503 || status === 0) tally[i]!.unknown++;
        else unexpected.push(`${visit ? 'visit' : 'action'}: ${status}`);
      };
      let next = 0;
      const loops = Array.from({ length: 6 }, async () => {
        while (!stop && unexpected.length === 0) await one(next++);
      });

      const clicksNow = async () =>
        Promise.all(
          links.map(async (l) => {
            const res = await api('GET', `/api/v1/referral_link?id=${l.id}`);
            return res.status === 200 ? Number(res.body.total_clicks) : undefined;
          }),
        );
      // Under way: the counting consumer has counted visits, and more are coming.
      await eventually(
        'visits counted under load',
        async () => {
          if (unexpected.length > 0) throw new Error(`answers other than 302, 201 or 503: ${unexpected}`);
          const clicks = await clicksNow();
          return answered >= 150 && clicks.every((c) => (c ?? 0) > 0) ? true : undefined;
        },
        120_000,
        250,
      );
      phase('loaded');
      const countedBeforeKill = (await clicksNow()).reduce<number>((a, c) => a + (c ?? 0), 0);
      // The kill comes a moment after an answer: that write's record has been read since, and is
      // held with whatever came after it (HOLD_MS).
      const answeredBefore = answered;
      await eventually('one more answer', () => (answered > answeredBefore ? true : undefined), 30_000, 10);
      await new Promise((r) => setTimeout(r, 600));

      // DynamoDB Local's JVM killed: the consumer's batch in hand fails, and is handed over again
      // (a window's final invocation, without records, fails too: not counted here).
      const [jvm] = javaPidsFor(dir);
      expect(jvm, 'the stack runs its DynamoDB Local').toBeDefined();
      const stderrAtKill = stack.s.stderr().length;
      process.kill(jvm!, 'SIGKILL');
      await eventually('the JVM gone', () => (alive(jvm!) ? undefined : true), 10_000, 20);
      const failedHandOvers = () => {
        const since = stack.s.stderr().slice(stderrAtKill);
        const count = (pattern: RegExp) => since.match(pattern)?.length ?? 0;
        return count(INVOCATION_FAILED) - count(EMPTY_INVOCATION_FAILED);
      };
      await eventually(
        'two invocations with records failed with DynamoDB Local down',
        () => (failedHandOvers() >= 2 ? true : undefined),
        90_000,
        100,
      ).catch((err: Error) => {
        // What the stack was doing: running or gone, how much it said since the kill, its last words.
        const { child } = stack.s;
        const state = child.exitCode ?? child.signalCode ?? 'running';
        const since = stack.s.stderr().slice(stderrAtKill);
        throw new Error(
          `${err.message}\nnpm start: ${state}; ${since.length} characters on stderr since the kill; ` +
            `${answered} answered; ${phases.join(', ')}\nstdout tail:\n${stack.s.stdout().slice(-1500)}\n` +
            `stderr since the kill, its end:\n${since.slice(-4000)}`,
        );
      });
      const failuresSeen = failedHandOvers();
      phase('stack killed');

      // The whole `npm start` killed mid-load, and started again on the same DATA_DIR.
      stop = true;
      await killGroup(stack.s, dir);
      await Promise.all(loops);
      expect(unexpected, 'every answer a 302, a 201 or a 503').toEqual([]);
      stack = await startOn(dir);
      api = stack.api;
      phase('restarted');
      const table: Table = {
        db: createDocumentClient(stack.dynamodbEndpoint, undefined, TOOL_TIMEOUT_MS),
        name: LOCAL_TABLE_NAME,
      };

      /** Every committed visit and action of the campaign, from their items. */
      const committed = async (): Promise<Committed[]> => {
        const visits = (await visitItems(TENANT, campaignId, table, 'A#')).filter((i) => i.visit);
        const actions = (await campaignItems(TENANT, campaignId, 'A#', table)).filter(
          (i) => i.type === 'action',
        );
        return [...visits, ...actions].map((item) => {
          const data = JSON.parse(String(item.event_json));
          return {
            eventId: String(item.event_id),
            actionId: Number(data.id),
            linkId: Number(data.referral_link.id),
            referrerId: String(data.referral_link.referrer_id),
            hour: String(item.event_time).slice(0, 13).replace('T', '_'),
            kind: item.visit ? 'visit' : 'action',
            unique: (item.visit as { unique?: boolean } | undefined)?.unique === true,
            actionType: String(data.action_type),
          };
        });
      };
      /** A 200's body, or undefined (a 503 while the restarted stack catches up). */
      const read = async (path: string) => {
        const res = await api('GET', path);
        if (res.status === 503) return undefined;
        expect(res.status, `${path}: ${res.text}`).toBe(200);
        return res.body;
      };
      const series = async (filter: string) => {
        const body = await read(`/api/v1/analytics/${campaignId}?granularity=hour${filter}`);
        if (!body) return undefined;
        const hours = Object.fromEntries(
          (body.series as Array<Metrics & { start: string }>)
            .filter((p) => p.visits + p.actions > 0)
            .map(({ start: s, ...m }) => [s.slice(0, 13), sortTypes(m)]),
        );
        return { totals: sortTypes(body.totals), hours };
      };
      const top = async (by: 'referrer' | 'referral_link', metric: string) => {
        const rows = await read(`/api/v1/analytics/${campaignId}/top?by=${by}&metric=${metric}&limit=100`);
        if (!rows) return undefined;
        const ranked = (rows as Array<{ rank: number; value: number }>).every(
          (r, n, all) => r.rank === n + 1 && (n === 0 || all[n - 1]!.value >= r.value),
        );
        const values = Object.fromEntries(
          (rows as Array<{ referrer_id?: string; referral_link_id?: number; value: number }>)
            .map((r) => [String(r.referrer_id ?? r.referral_link_id), r.value])
            .sort(),
        );
        return { ranked, values };
      };
      const feed = async () => {
        const ids: string[] = [];
        let cursor: string | undefined;
        do {
          const res = await api(
            'GET',
            `/api/v1/events/${campaignId}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          if (res.status === 503) return undefined;
          expect(res.status, res.text).toBe(200);
          ids.push(...(res.body as Array<{ id: string }>).map((e) => e.id));
          cursor = res.headers.get('x-next-cursor') ?? undefined;
        } while (cursor);
        return ids.sort();
      };

      /** What the API shows beside what the table holds; `agree` when every figure is exact. */
      const compare = async () => {
        const items = await committed();
        const visits = items.filter((c) => c.kind === 'visit');
        const actions = items.filter((c) => c.kind === 'action');
        const byLink = countBy(items, (c) => c.linkId);
        const want = {
          clicks: Object.fromEntries(links.map((l) => [l.id, byLink[l.id] ?? 0]).sort()),
          campaign: expectedSeries(items),
          links: links.map((l) => expectedSeries(items.filter((c) => c.linkId === l.id))),
          referrers: REFERRERS.map((r) => expectedSeries(items.filter((c) => c.referrerId === r))),
          top: {
            linkVisits: { ranked: true, values: countBy(visits, (c) => c.linkId) },
            linkUniqueVisits: {
              ranked: true,
              values: countBy(
                visits.filter((c) => c.unique),
                (c) => c.linkId,
              ),
            },
            linkActions: { ranked: true, values: countBy(actions, (c) => c.linkId) },
            referrerVisits: { ranked: true, values: countBy(visits, (c) => c.referrerId) },
            referrerActions: { ranked: true, values: countBy(actions, (c) => c.referrerId) },
          },
          feed: items.map((c) => c.eventId).sort(),
        };
        const clicks = await Promise.all(
          links.map(async (l) => [l.id, (await read(`/api/v1/referral_link?id=${l.id}`))?.total_clicks]),
        );
        const seen = {
          clicks: Object.fromEntries(clicks.sort()),
          campaign: await series(''),
          links: await Promise.all(links.map((l) => series(`&referral_link_id=${l.id}`))),
          referrers: await Promise.all(REFERRERS.map((r) => series(`&referrer_id=${r}`))),
          top: {
            linkVisits: await top('referral_link', 'visits'),
            linkUniqueVisits: await top('referral_link', 'unique_visits'),
            linkActions: await top('referral_link', 'actions'),
            referrerVisits: await top('referrer', 'visits'),
            referrerActions: await top('referrer', 'actions'),
          },
          feed: await feed(),
        };
        return { items, want, seen, agree: isDeepStrictEqual(want, seen) };
      };

      let last: Awaited<ReturnType<typeof compare>> | undefined;
      const differences = () => {
        if (!last) return 'nothing read';
        const { want, seen } = last;
        const feedDiff = () => {
          const listed = seen.feed ?? [];
          const missing = want.feed.filter((id) => !listed.includes(id));
          const extra = listed.filter((id) => !want.feed.includes(id));
          const twice = listed.filter((id, n) => listed.indexOf(id) !== n);
          return `feed: ${want.feed.length} committed, ${listed.length} listed; missing ${JSON.stringify(missing)}, not committed ${JSON.stringify(extra)}, listed twice ${JSON.stringify(twice)}`;
        };
        const show = (value: unknown) => JSON.stringify(value);
        return Object.keys(want)
          .filter((k) => !isDeepStrictEqual(want[k as keyof typeof want], seen[k as keyof typeof seen]))
          .map((k) =>
            k === 'feed'
              ? feedDiff()
              : `${k}:\n  table ${show(want[k as keyof typeof want])}\n  api   ${show(seen[k as keyof typeof seen])}`,
          )
          .join('\n');
      };
      const settled = async (what: string) =>
        eventually(
          what,
          async () => {
            last = await compare();
            return last.agree ? last : undefined;
          },
          180_000,
          1_000,
        ).catch((err: Error) => {
          throw new Error(`${err.message}\n${differences()}\nstderr:\n${stack.s.stderr().slice(-3000)}`);
        });
      const first = await settled('every figure equal to the committed items');
      phase('settled');

      // A visit of another campaign counted, and ranked: the stream has passed every record above,
      // a batch handed over again since would show now.
      const markerVisit = await api('GET', `/r/${marker.body.referral_code}`, {
        headers: { 'user-agent': BROWSER_UA },
      });
      expect(markerVisit.status).toBe(302);
      await eventually(
        'the marker visit counted and ranked',
        async () => {
          const link = await read(`/api/v1/referral_link?id=${marker.body.id}`);
          const board = await read(`/api/v1/analytics/${other.body.id}/top?by=referral_link&metric=visits`);
          return link?.total_clicks === 1 && board?.[0]?.value === 1 ? true : undefined;
        },
        120_000,
        500,
      );
      const again = await compare();
      last = again;
      expect(again.agree, differences()).toBe(true);
      expect(again.items.length).toBe(first.items.length);

      // Nothing lost: each link counts at least what was acknowledged, at most that and the unknown.
      const counted = first.want.clicks as Record<string, number>;
      for (const [i, link] of links.entries()) {
        expect(counted[link.id], `link ${link.id}`).toBeGreaterThanOrEqual(tally[i]!.acknowledged);
        expect(counted[link.id], `link ${link.id}`).toBeLessThanOrEqual(
          tally[i]!.acknowledged + tally[i]!.unknown,
        );
      }
      const actionIds = new Set(first.items.filter((c) => c.kind === 'action').map((c) => c.actionId));
      expect(
        [...acknowledgedActions].filter((id) => !actionIds.has(id)),
        'acknowledged actions missing',
      ).toEqual([]);
      // Nothing doubled: one item per action id, one event per item (the feed compared above).
      expect(new Set(first.items.map((c) => c.eventId)).size).toBe(first.items.length);

      const total = first.items.length;
      console.info(
        `counting kill: ${answered} interactions acknowledged, ${tally.reduce((a, t) => a + t.unknown, 0)} unanswered or 503, ` +
          `${total} committed (${first.items.filter((c) => c.kind === 'visit').length} visits); ` +
          `${countedBeforeKill} in total_clicks just before the JVM kill, ${failuresSeen} failed hand-overs seen before the stack kill; ` +
          `${phases.join(', ')}`,
      );
      table.db.destroy();
      await killGroup(stack.s, dir);
    },
    // Above the sum of the waits' bounds: each fails first, with what it saw.
    START_TIMEOUT * 8,
  );
});
