/**
 * Part 6b: analytics and the events feed at scale (issues 14 and 15), in a stack of its own
 * (`analytics-host.ts`): a campaign and everything its visits leave in the table
 * (`analytics-data.ts`) written straight into it with the stream off, after a small sample went
 * through the real stream consumer to check the summed rollups against it. Then each request
 * timed through the gateway, as its DynamoDB requests replayed (`floor.ts`), and as its Query alone.
 */
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, QueryCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient, dynamoClientConfig } from '../../lib/aws/clients.ts';
import { encodeSortKeyCursor } from '../../lib/db/table/cursor.ts';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { LOCAL_TABLE_NAME } from '../../lib/local/stack.ts';
import { campaignItems, putItems, type Table } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import * as data from './analytics-data.ts';
import { sizeOf } from './capacity.ts';
import { reserveIds, startCountingProxy } from './environment.ts';
import { replayFloor } from './floor.ts';
import { type BenchClient, benchClient } from './http-client.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { interleaved, ms, pageVerdict, percentile } from './stats.ts';

/** Issue 14's goal: an analytics request within this factor of a single GetItem × its item pages. */
const GOAL = 1.5;
/** BatchWriteItem calls in flight while the table is filled. */
const WRITERS = 16;
/** The sample campaign whose visits go through the real stream consumer. */
const SAMPLE = { links: 12, events: 600 };

/** The host process (`analytics-host.ts`): its DynamoDB Local's endpoint, then a step at a time, each answered. */
async function startHost() {
  // Its DynamoDB Local holds some 3 million items at a million visits, about 6 GB: near the JVM's
  // default heap (a quarter of the memory), so it may take 60 % unless JAVA_TOOL_OPTIONS says.
  const heap = `-Xmx${Math.floor((totalmem() * 0.6) / 2 ** 20)}m`;
  const child = fork(fileURLToPath(new URL('./analytics-host.ts', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, JAVA_TOOL_OPTIONS: process.env.JAVA_TOOL_OPTIONS ?? heap },
  });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const answer = () =>
    new Promise<string>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`analytics stack exited with ${code}`)));
      child.once('message', (m: { ok?: string; error?: string }) =>
        m.error ? reject(new Error(`analytics stack: ${m.error}`)) : resolve(m.ok!),
      );
    });
  const dynamo = await answer();
  return {
    dynamo,
    /** `sample`: the stack with its stream consumer; `load`: stopped, the stream off; `start`: without a stream poller. */
    step(step: 'sample' | 'load' | 'start', proxyUrl?: string, devApiKeys?: string) {
      child.send({ step, proxyUrl, devApiKeys });
      return answer();
    },
    async stop() {
      process.off('exit', kill);
      const exited = new Promise((r) => child.once('exit', r));
      child.disconnect();
      const timer = setTimeout(kill, 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Write every item `items` yields, printing progress every 10 s; the items written and the seconds taken. */
async function writeAll(
  table: Table,
  items: Iterable<object>,
  label: string,
  expected: number,
  writers = WRITERS,
) {
  const started = performance.now();
  const progress = (written: number) => {
    const rate = written / ((performance.now() - started) / 1000);
    const left = Math.ceil((expected - written) / rate / 60);
    console.log(`   ${label}: ${written} of ${expected} items (${rate.toFixed(0)}/s, ~${left} min left)`);
  };
  const written = await putItems(items, table, { writers, progress });
  return { written, seconds: (performance.now() - started) / 1000 };
}

/** The campaign and its links (the sample's with no clicks yet: the consumer counts them). */
function* campaignAndLinks(spec: data.CampaignSpec, t: data.Traffic, clicks: boolean) {
  yield data.campaignOf(spec);
  for (let i = 0; i < spec.links; i++)
    yield { ...data.linkItemOf(spec, t, i), ...(clicks ? {} : { total_clicks: 0 }) };
}
function* visitsAndFeed(spec: data.CampaignSpec, t: data.Traffic, feed: boolean) {
  const state = { clicks: new Int32Array(spec.links) };
  for (let j = 0; j < spec.events; j += 500) {
    const items = data.eventItems(spec, t, j, Math.min(spec.events, j + 500), state);
    yield* items.visits;
    if (feed) yield* items.feed;
  }
}

/** Differences between the rollups summed here and those the consumer wrote, in words. */
function rollupDifferences(expected: Array<Record<string, unknown>>, actual: Array<Record<string, unknown>>) {
  const got = new Map(actual.map((i) => [String(i.SK), i]));
  const canonical = (i: Record<string, unknown>) =>
    JSON.stringify(Object.entries(i).sort(([a], [b]) => (a < b ? -1 : 1)));
  const out: string[] = [];
  for (const e of expected) {
    const a = got.get(String(e.SK));
    if (!a) out.push(`${e.SK} missing`);
    else if (canonical(a) !== canonical(e))
      out.push(`${e.SK}: consumer ${canonical(a)}, summed ${canonical(e)}`);
    got.delete(String(e.SK));
  }
  return [...out, ...[...got.keys()].map((k) => `${k} written by the consumer only`)];
}

export const analyticsPart: BenchPart = {
  name: 'analytics',
  title: '6b. Analytics and the events feed at scale',
  stack: false,
  async run() {
    const host = await startHost();
    const proxy = await startCountingProxy(host.dynamo);
    const table: Table = { db: createDocumentClient(host.dynamo, undefined, 30_000), name: LOCAL_TABLE_NAME };
    const tenant = 'bench';
    const apiKey = `bench_${randomBytes(24).toString('base64url')}`;
    let client: BenchClient | undefined;
    try {
      const nowMs = Date.now();
      const spec: data.CampaignSpec = {
        tenant,
        campaignId: randomUUID(),
        campaignUrl: 'https://example.com/analytics',
        links: settings.scaleLinks,
        events: settings.events,
        firstLinkId: await reserveIds({ table }, 'link', settings.scaleLinks + SAMPLE.links),
        firstActionId: await reserveIds({ table }, 'action', settings.events + SAMPLE.events),
        nowMs,
        codeTag: `A${nowMs.toString(36).toUpperCase()}`,
      };
      const t0 = performance.now();
      const t = data.traffic(spec);
      const summed = data.rollups(spec, t);
      const buildSeconds = (performance.now() - t0) / 1000;
      const feedItems = Math.ceil(spec.events / data.FEED_PACK);
      console.log(
        `   ${spec.events} visits, ${feedItems} feed items, ${summed.series} series and ${summed.rankings} ranking items`,
      );

      // First the sample, through the real stream consumer of the host's stack, while the table is small.
      await host.step('sample', proxy.url, `${tenant}:${apiKey}`);
      const sample: data.CampaignSpec = {
        ...spec,
        ...{
          campaignId: randomUUID(),
          links: SAMPLE.links,
          events: SAMPLE.events,
          codeTag: `${spec.codeTag}S`,
          seed: 15,
        },
        ...{ firstLinkId: spec.firstLinkId + spec.links, firstActionId: spec.firstActionId + spec.events },
      };
      const st = data.traffic(sample);
      await writeAll(table, campaignAndLinks(sample, st, false), 'sample links', sample.links + 1);
      // In time order, one call at a time: the stream sees the visits as the API would have made them.
      await writeAll(table, visitsAndFeed(sample, st, false), 'sample visits', sample.events, 1);
      const sampleItems = (prefix: string) => campaignItems(tenant, sample.campaignId, prefix, table);
      const ranked = async () => (await sampleItems('TOP#L#v#')).reduce((a, i) => a + Number(i.value), 0);
      await waitUntil(async () => (await ranked()) >= sample.events, 60_000, 200);
      await proxy.quiet(1_000, 30_000);
      const consumer = [...(await sampleItems('AN#')), ...(await sampleItems('TOP#'))];
      const differences = rollupDifferences([...data.rollups(sample, st).items()], consumer);
      // Then the stack stopped and the stream off, and the campaign written straight into the table.
      await host.step('load');
      const load = [
        await writeAll(table, campaignAndLinks(spec, t, true), 'links', spec.links + 1),
        await writeAll(table, visitsAndFeed(spec, t, true), 'visits and feed', spec.events + feedItems),
        await writeAll(table, summed.items(), 'rollups', summed.series + summed.rankings),
      ];
      const loadSeconds = load.reduce((a, l) => a + l.seconds, 0);
      const written = load.reduce((a, l) => a + l.written, 0);

      // The stack again, without a stream poller, for the queries.
      const baseUrl = await host.step('start', proxy.url, `${tenant}:${apiKey}`);
      client = benchClient(baseUrl, apiKey);
      const get = (path: string) => client!.send({ method: 'GET', path });
      const base = `/api/v1/analytics/${spec.campaignId}`;
      const deepAt = Math.floor(spec.events * 0.9);
      // The cursor of the page that ended at event `deepAt - 1`, as written.
      const scope = { kind: 'events' as const, tenant, campaignId: spec.campaignId };
      const cursor = encodeURIComponent(encodeSortKeyCursor(scope, data.feedCursorSequenceOf(t, deepAt - 1)));
      const cases = rows(`
campaign | GET /api/v1/campaign (one GetItem: the yardstick) | /api/v1/campaign?id=${spec.campaignId}
daily30 | GET /analytics/{id}: 30 days by day (default) | ${base}
hourly7 | GET /analytics/{id}?granularity=hour: 7 days by hour | ${base}?granularity=hour
top10 | GET /analytics/{id}/top: 10 links by visits | ${base}/top?metric=visits&by=referral_link&limit=10
top100 | GET /analytics/{id}/top: 100 links by visits | ${base}/top?metric=visits&by=referral_link&limit=100
feedFirst | GET /events/{id}: first page of 100 | /api/v1/events/${spec.campaignId}?limit=100
feedDeep | GET /events/{id}: 100 from event ${deepAt} (cursor) | /api/v1/events/${spec.campaignId}?limit=100&cursor=${cursor}`).map(
        ([key = '', label = '', path = '']) => ({ key, label, path }),
      );
      // Answers checked once: totals of all visits, the top link's count, the feed pages' events.
      const answers = new Map<string, unknown>();
      for (const c of cases) answers.set(c.key, JSON.parse((await get(c.path)).body));
      const daily = answers.get('daily30') as { totals: { visits: number; unique_visits: number } };
      const top = answers.get('top100') as Array<{ value: number }>;
      const unique = t.unique.reduce((a, u) => a + u, 0);
      const maxVisits = t.visits.reduce((a, v) => Math.max(a, v), 0);
      const page = (key: string, from: number) =>
        (answers.get(key) as Array<{ id: string }>).map((e) => e.id).join() ===
        Array.from({ length: 100 }, (_, j) =>
          actionEventId(spec.firstActionId + from + j, spec.campaignId),
        ).join();

      // Each case recorded once for its floors: its own requests, its Query alone, and the pages read.
      const recorded: RecordedCall[][] = [];
      for (const c of cases) {
        await proxy.quiet();
        await proxy.record();
        await get(c.path);
        recorded.push(
          (await proxy.recorded()).filter((r) => r.category === 'request' || r.category === 'apikey'),
        );
      }
      const queries = recorded.map((calls) => calls.filter((r) => r.op === 'Query'));
      const raw = new DynamoDBClient(dynamoClientConfig(host.dynamo, undefined, 30_000));
      const read: Array<{ items: number; bytes: number }> = [];
      for (const qs of queries) {
        const pages = await Promise.all(qs.map((q) => raw.send(new QueryCommand(JSON.parse(q.body)))));
        const items = pages.flatMap((p) => p.Items ?? []);
        read.push({ items: items.length, bytes: items.reduce((a, i) => a + sizeOf(unmarshall(i)), 0) });
      }
      raw.destroy();
      const runs: Record<string, () => Promise<unknown>> = {};
      for (const [i, c] of cases.entries()) {
        const alone =
          c.key === 'campaign' ? recorded[i]!.filter((r) => r.category === 'request') : queries[i]!;
        runs[`${c.key}:gateway`] = () => get(c.path);
        runs[`${c.key}:floor`] = replayFloor(recorded[i]!, proxy.url)!.run;
        runs[`${c.key}:alone`] = replayFloor(alone, proxy.url)!.run;
      }
      const times = await interleaved(runs, settings.pageSamples);
      const p = (key: string, what: string, q = 50) => percentile(times[`${key}:${what}`]!, q);
      const measured = cases.map((c, i) => {
        const pages = Math.max(1, queries[i]!.length);
        const analytics = !['campaign', 'feedFirst', 'feedDeep'].includes(c.key);
        const gateway = p(c.key, 'gateway') / (p('campaign', 'gateway') * pages);
        const wire = p(c.key, 'alone') / (p('campaign', 'alone') * pages);
        return { ...c, ...read[i]!, pages: queries[i]!.length, analytics, gateway, wire };
      });
      const feedRatio = p('feedDeep', 'gateway') / p('feedFirst', 'gateway');
      const feedFloorRatio = p('feedDeep', 'floor') / p('feedFirst', 'floor');
      const feedVerdict = pageVerdict(feedRatio, feedFloorRatio);
      const ratio = (r: (typeof measured)[number], v: number) =>
        r.key === 'campaign' ? '—' : `${v.toFixed(2)}${r.analytics ? ` ${v <= GOAL ? 'yes' : 'NO'}` : ''}`;
      const within = (of: 'gateway' | 'wire') => measured.filter((r) => r.analytics && r[of] <= GOAL).length;
      const analytics = measured.filter((r) => r.analytics);
      const over = (of: 'gateway' | 'wire') =>
        analytics
          .filter((r) => r[of] > GOAL)
          .map((r) => `${r.label} ${r[of].toFixed(2)}×`)
          .join('; ') || 'none';
      return {
        body: [
          `A campaign of ${spec.links} links and ${spec.events} visits, each visit with its event in the events feed (${data.FEED_PACK} events per feed item), and the series and ranking items the rollup consumer derives from them (${summed.series} series items, ${summed.rankings} ranking items), built with the writers' own item builders (\`scripts/bench/analytics-data.ts\`) and written straight into a second local stack's table (its own DynamoDB Local, its stream turned off once the sample below was counted): ${written} items with BatchWriteItem (25 a call, ${WRITERS} calls in flight) in ${loadSeconds.toFixed(0)} s (${(written / loadSeconds).toFixed(0)} items/s; links ${load[0]!.seconds.toFixed(0)} s, visits and feed ${load[1]!.seconds.toFixed(0)} s, rollups ${load[2]!.seconds.toFixed(0)} s; traffic and rollups summed in ${buildSeconds.toFixed(1)} s). The traffic: visits per link by Zipf's law (exponent 1: the top link has ${maxVisits}), each link shared at a random time of the last 29 days and visited after it (exponentially, mean 6 h), 4 links per referrer, 80 % unique visits. The rollups are summed in the bench rather than written by \`applyRollups\` (whose transactions of at most 99 items would take hours here); checked against the real consumer on a sample of ${SAMPLE.events} visits over ${SAMPLE.links} links written through the table stream: ${differences.length === 0 ? 'every series and ranking item equal' : `${differences.length} DIFFERENCES (first: ${differences.slice(0, 3).join('; ')})`}. Not written: the event lookup items (one per event, partitions of their own, read only by redelivery).`,
          `Each request below was timed ${settings.pageSamples} times, interleaved with the others: through the local gateway (authorizer, handler, the answer's JSON), its DynamoDB requests replayed as recorded (the floor, as in part 2: the authorizer's GetItem, then the Query beside the campaign's GetItem), and its Query alone replayed (for the yardstick: its GetItem alone). Goal (issue 14): each analytics request within ${GOAL}× of a single GetItem × the Query pages it read (1 MB each), read two ways: through the gateway, the endpoint against \`GET /api/v1/campaign\` (the authorizer and one GetItem); on the wire, its Query against the GetItem.`,
          rows(
            [
              `request | items read (KB), pages | gateway p50 (p95) | floor p50 | Query alone p50 | gateway ÷ (GET campaign × pages) ≤ ${GOAL} | Query ÷ (GetItem × pages) ≤ ${GOAL}`,
              ...measured.map(
                (r) =>
                  `${r.label} | ${r.key === 'campaign' ? '1 item' : `${r.items} (${(r.bytes / 1024).toFixed(1)}), ${r.pages}`} | ${ms(p(r.key, 'gateway'))} ms (${ms(p(r.key, 'gateway', 95))}) | ${ms(p(r.key, 'floor'))} ms | ${ms(p(r.key, 'alone'))} ms | ${ratio(r, r.gateway)} | ${ratio(r, r.wire)}`,
              ),
            ].join('\n'),
          ),
          `Feed: the deep page ÷ the first page at p50: ${feedRatio.toFixed(2)} (${feedVerdict}; floor ${feedFloorRatio.toFixed(2)}).`,
        ],
        summary: `Analytics at scale (${spec.links} links, ${spec.events} visits, ${written} items written in ${loadSeconds.toFixed(0)} s): daily series ${ms(p('daily30', 'gateway'))} ms, hourly ${ms(p('hourly7', 'gateway'))} ms, top 10/100 ${ms(p('top10', 'gateway'))}/${ms(p('top100', 'gateway'))} ms vs GET campaign ${ms(p('campaign', 'gateway'))} ms; feed first/deep page ${ms(p('feedFirst', 'gateway'))}/${ms(p('feedDeep', 'gateway'))} ms; ${within('gateway')}/${analytics.length} within ${GOAL}× through the gateway, ${within('wire')}/${analytics.length} on the wire.`,
        checks: checks(`
analytics requests within ${GOAL}× GET /api/v1/campaign × pages, through the gateway: over | ${over('gateway')} | ≤ ${GOAL}× | ${within('gateway') === analytics.length}
analytics requests within ${GOAL}× a GetItem × pages, on the wire: over | ${over('wire')} | ≤ ${GOAL}× | ${within('wire') === analytics.length}
30-day totals: ${spec.events} visits, ${unique} unique | ${daily.totals.visits} / ${daily.totals.unique_visits} | equal | ${daily.totals.visits === spec.events && daily.totals.unique_visits === unique}
top 100: ${Math.min(100, spec.links)} entries, the first the most visited link (${maxVisits}) | ${top.length}, ${top[0]?.value} | equal | ${top.length === Math.min(100, spec.links) && top[0]?.value === maxVisits}
feed pages: the first 100 events, and the 100 after the cursor, in order | ${page('feedFirst', 0)}, ${page('feedDeep', deepAt)} | true, true | ${page('feedFirst', 0) && page('feedDeep', deepAt)}
feed: the deep page's p50 against the first's | ${feedRatio.toFixed(2)}× (floor ${feedFloorRatio.toFixed(2)}×) | same within noise | ${feedVerdict === 'same within noise'}
summed rollups against the consumer's on the sample | ${differences.length} differences${differences.length ? ` (${differences.slice(0, 3).join('; ')})` : ''} | none | ${differences.length === 0}`),
      };
    } finally {
      client?.close();
      table.db.destroy();
      proxy.stop();
      await host.stop();
    }
  },
};
