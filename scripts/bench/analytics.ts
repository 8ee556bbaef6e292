/**
 * Part 6b: analytics and the events feed at scale (issues 14 and 15). A campaign of
 * `BENCH_SCALE_LINKS` links (default 100,000) and `BENCH_EVENTS` visits (default 1,000,000) with
 * everything they leave in the table (`analytics-data.ts`: link items, visit items, feed items,
 * series and ranking items), written straight into a stack of its own (`analytics-host.ts`: its own
 * DynamoDB Local, the table's stream off while it is filled) with BatchWriteItem, 25 items a call,
 * several calls at a time. That the summed rollups are what the stream consumer writes is checked
 * first, on a small campaign whose visits go through the table stream.
 *
 * Then, through the gateway and as the DynamoDB requests it made (recorded by a counting proxy and
 * replayed, `floor.ts`), interleaved: endpoint 16's 30-day daily series and 7-day hourly series,
 * endpoint 17's top 10 and top 100 links by visits, endpoint 19's first page of 100 events and a
 * page of 100 deep into the feed (through a cursor), and `GET /api/v1/campaign` (one GetItem) as
 * the yardstick: each analytics request against a single GetItem × the Query pages it read (goal
 * within 1.5×), read both ways: through the gateway (the endpoint against `GET /api/v1/campaign`,
 * both with the authorizer) and on the wire (its Query replayed against the GetItem replayed).
 */
import { fork } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, QueryCommand as RawQueryCommand } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient, dynamoClientConfig } from '../../lib/aws/clients.ts';
import { encodeSortKeyCursor } from '../../lib/db/cursor.ts';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { LOCAL_TABLE_NAME } from '../../lib/local/stack.ts';
import { campaignItems as campaignPartitionItems, type Table } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import {
  type CampaignSpec,
  campaignOf,
  eventItems,
  FEED_PACK,
  feedCursorSequenceOf,
  linkItemOf,
  rollups,
  traffic,
} from './analytics-data.ts';
import { sizeOf } from './capacity.ts';
import { startCountingProxy } from './counting-proxy.ts';
import { type BenchPart, reserveIds, settings } from './environment.ts';
import { replayFloor } from './floor.ts';
import { benchClient } from './http-client.ts';
import { ms, pageVerdict, percentile } from './stats.ts';

/** Issue 14's goal: an analytics request within this factor of a single GetItem × its item pages. */
const GOAL = 1.5;
/** BatchWriteItem calls in flight while the table is filled. */
const WRITERS = 16;
/** The sample campaign whose visits go through the real stream consumer. */
const SAMPLE = { links: 12, events: 600 };

/**
 * The host's DynamoDB Local keeps some 3 million items in memory: its process grew to about 6 GB at
 * a million visits, near the JVM's default maximum heap (a quarter of the machine's memory). It
 * may take up to 60 % of the memory instead, unless JAVA_TOOL_OPTIONS already says.
 */
function hostJavaOptions(): string {
  const mb = Math.floor((totalmem() * 0.6) / 2 ** 20);
  return process.env.JAVA_TOOL_OPTIONS ?? `-Xmx${mb}m`;
}

/** The host process: its DynamoDB Local first, its stack once asked. */
async function startHost() {
  const child = fork(fileURLToPath(new URL('./analytics-host.ts', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, JAVA_TOOL_OPTIONS: hostJavaOptions() },
  });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (m.error) reject(new Error(`analytics stack: ${m.error}`));
        else if (key in m) resolve(m[key] as T);
        else return;
        child.off('message', onMessage);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`analytics stack exited with ${code}`)));
    });
  const dynamo = await next<string>('dynamo');
  return {
    dynamo,
    /** The stack with its stream consumer, for the sample. */
    async sample(proxyUrl: string, devApiKeys: string) {
      child.send({ sample: { proxyUrl, devApiKeys } });
      return next<string>('baseUrl');
    },
    /** That stack stopped and the stream off: ready for the bulk load. */
    async load() {
      child.send({ load: true });
      await next<boolean>('loading');
    },
    /** The stack without a stream poller, for the queries. */
    async start(proxyUrl: string, devApiKeys: string) {
      child.send({ start: { proxyUrl, devApiKeys } });
      return next<string>('baseUrl');
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

/**
 * Write every item `items` yields, 25 per BatchWriteItem, `writers` calls in flight (in order
 * when `writers` is 1), printing progress every 10 s; the items written and the seconds taken.
 */
async function writeAll(
  table: Table,
  items: Iterable<object>,
  label: string,
  expected: number,
  writers = WRITERS,
) {
  const source = items[Symbol.iterator]();
  const started = performance.now();
  let written = 0;
  const take = () => {
    const batch: object[] = [];
    for (let r = source.next(); !r.done; r = source.next()) {
      batch.push(r.value);
      if (batch.length === 25) break;
    }
    return batch;
  };
  const timer = setInterval(() => {
    const rate = written / ((performance.now() - started) / 1000);
    const left = (expected - written) / rate;
    console.log(
      `   ${label}: ${written.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} items (${rate.toFixed(0)}/s, ~${Math.ceil(left / 60)} min left)`,
    );
  }, 10_000);
  try {
    const worker = async () => {
      for (let batch = take(); batch.length > 0; batch = take()) {
        let pending = batch.map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 8) throw new Error('BatchWriteItem kept items unprocessed');
          const out = await table.db.send(new BatchWriteCommand({ RequestItems: { [table.name]: pending } }));
          pending = (out.UnprocessedItems?.[table.name] as typeof pending | undefined) ?? [];
        }
        written += batch.length;
      }
    };
    await Promise.all(Array.from({ length: writers }, worker));
  } finally {
    clearInterval(timer);
  }
  return { written, seconds: (performance.now() - started) / 1000 };
}

/** The campaign's items in writing order: the campaign, its links, visits and feed items, then the rollups. */
function* campaignItems(spec: CampaignSpec, t: ReturnType<typeof traffic>, links: 'final' | 'zero') {
  yield campaignOf(spec);
  for (let i = 0; i < spec.links; i++) {
    const item = linkItemOf(spec, t, i);
    yield links === 'final' ? item : { ...item, total_clicks: 0 };
  }
}
function* visitAndFeedItems(spec: CampaignSpec, t: ReturnType<typeof traffic>, what: 'both' | 'visits') {
  const state = { clicks: new Int32Array(spec.links) };
  for (let j = 0; j < spec.events; j += 500) {
    const { visits, feed } = eventItems(spec, t, j, Math.min(spec.events, j + 500), state);
    yield* visits;
    if (what === 'both') yield* feed;
  }
}

/** Differences between the rollups summed here and those the consumer wrote (a few, in words). */
function rollupDifferences(expected: Array<Record<string, unknown>>, actual: Array<Record<string, unknown>>) {
  const key = (i: Record<string, unknown>) => `${i.SK}`;
  const got = new Map(actual.map((i) => [key(i), i]));
  const out: string[] = [];
  const canonical = (i: Record<string, unknown>) =>
    JSON.stringify(Object.fromEntries(Object.entries(i).sort(([a], [b]) => (a < b ? -1 : 1))));
  for (const e of expected) {
    const a = got.get(key(e));
    if (!a) out.push(`${key(e)} missing`);
    else if (canonical(a) !== canonical(e))
      out.push(`${key(e)}: consumer ${canonical(a)}, summed ${canonical(e)}`);
    got.delete(key(e));
  }
  for (const k of got.keys()) out.push(`${k} written by the consumer only`);
  return out;
}

export const analyticsPart: BenchPart = {
  name: 'analytics',
  title: '6b. Analytics and the events feed at scale',
  // Its own stack (`analytics-host.ts`), not the bench's.
  stack: false,
  async run() {
    const host = await startHost();
    const proxy = await startCountingProxy(host.dynamo);
    const table: Table = { db: createDocumentClient(host.dynamo, undefined, 30_000), name: LOCAL_TABLE_NAME };
    const tenant = 'bench';
    const apiKey = `bench_${randomBytes(24).toString('base64url')}`;
    try {
      const nowMs = Date.now();
      const spec: CampaignSpec = {
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
      const t = traffic(spec);
      const summed = rollups(spec, t);
      const buildSeconds = (performance.now() - t0) / 1000;
      const counts = {
        links: spec.links,
        visits: spec.events,
        feed: Math.ceil(spec.events / FEED_PACK),
        series: summed.series,
        rankings: summed.rankings,
      };
      const total = 1 + counts.links + counts.visits + counts.feed + counts.series + counts.rankings;
      console.log(
        `   writing ${total.toLocaleString('en-US')} items: ${Object.entries(counts)
          .map(([k, v]) => `${v.toLocaleString('en-US')} ${k}`)
          .join(', ')}`,
      );
      // First the sample, through the real stream consumer of the host's stack, while the table is small.
      await host.sample(proxy.url, `${tenant}:${apiKey}`);
      const sample: CampaignSpec = {
        ...spec,
        campaignId: randomUUID(),
        links: SAMPLE.links,
        events: SAMPLE.events,
        firstLinkId: spec.firstLinkId + spec.links,
        firstActionId: spec.firstActionId + spec.events,
        codeTag: `${spec.codeTag}S`,
        seed: 15,
      };
      const st = traffic(sample);
      await writeAll(table, campaignItems(sample, st, 'zero'), 'sample links', sample.links + 1);
      // In time order, one call at a time: the stream sees the visits as the API would have made them.
      await writeAll(table, visitAndFeedItems(sample, st, 'visits'), 'sample visits', sample.events, 1);
      const clicks = async () =>
        (await campaignPartitionItems(tenant, sample.campaignId, 'TOP#L#v#', table)).reduce(
          (a, i) => a + Number(i.value),
          0,
        );
      await waitUntil(async () => (await clicks()) >= sample.events, 60_000, 200);
      await proxy.quiet(1_000, 30_000);
      const consumer = [
        ...(await campaignPartitionItems(tenant, sample.campaignId, 'AN#', table)),
        ...(await campaignPartitionItems(tenant, sample.campaignId, 'TOP#', table)),
      ];
      const differences = rollupDifferences([...rollups(sample, st).items()], consumer);
      // Then the stack stopped and the stream off, and the campaign written straight into the table.
      await host.load();
      const load = [
        await writeAll(table, campaignItems(spec, t, 'final'), 'links', spec.links + 1),
        await writeAll(
          table,
          visitAndFeedItems(spec, t, 'both'),
          'visits and feed',
          counts.visits + counts.feed,
        ),
        await writeAll(table, summed.items(), 'rollups', counts.series + counts.rankings),
      ];
      const loadSeconds = load.reduce((a, l) => a + l.seconds, 0);
      const written = load.reduce((a, l) => a + l.written, 0);

      // The stack again, without a stream poller, for the queries.
      const baseUrl = await host.start(proxy.url, `${tenant}:${apiKey}`);
      const client = benchClient(baseUrl, apiKey);
      try {
        // The requests measured, and what each must answer.
        const base = `/api/v1/analytics/${spec.campaignId}`;
        const scope = { kind: 'events' as const, tenant, campaignId: spec.campaignId };
        const deepAt = Math.floor(spec.events * 0.9);
        // The feed sequence of event `deepAt - 1`, as written: the cursor of the page that ended there.
        const deepSequence = feedCursorSequenceOf(t, deepAt - 1);
        const maxVisits = t.visits.reduce((a, v) => Math.max(a, v), 0);
        const cases = [
          {
            key: 'campaign',
            label: 'GET /api/v1/campaign (one GetItem: the yardstick)',
            path: `/api/v1/campaign?id=${spec.campaignId}`,
          },
          { key: 'daily30', label: 'GET /analytics/{id}: 30 days by day (default)', path: base },
          {
            key: 'hourly7',
            label: 'GET /analytics/{id}?granularity=hour: 7 days by hour',
            path: `${base}?granularity=hour`,
          },
          {
            key: 'top10',
            label: 'GET /analytics/{id}/top: 10 links by visits',
            path: `${base}/top?metric=visits&by=referral_link&limit=10`,
          },
          {
            key: 'top100',
            label: 'GET /analytics/{id}/top: 100 links by visits',
            path: `${base}/top?metric=visits&by=referral_link&limit=100`,
          },
          {
            key: 'feedFirst',
            label: 'GET /events/{id}: first page of 100',
            path: `/api/v1/events/${spec.campaignId}?limit=100`,
          },
          {
            key: 'feedDeep',
            label: `GET /events/{id}: 100 from event ${deepAt.toLocaleString('en-US')} (cursor)`,
            path: `/api/v1/events/${spec.campaignId}?limit=100&cursor=${encodeURIComponent(encodeSortKeyCursor(scope, deepSequence))}`,
          },
        ];
        // Answers checked once: totals of all visits, the top link's count, the feed pages' events.
        const answers: Record<string, unknown> = {};
        for (const c of cases) answers[c.key] = await client.call('GET', c.path);
        const daily = answers.daily30 as { totals: { visits: number; unique_visits: number } };
        const top = answers.top100 as Array<{ rank: number; value: number }>;
        const expectedUnique = t.unique.reduce((a, u) => a + u, 0);
        const feedIds = (key: string) => (answers[key] as Array<{ id: string }>).map((e) => e.id);
        const eventId = (j: number) => actionEventId(spec.firstActionId + j, spec.campaignId);
        const checks = {
          daily: daily.totals.visits === spec.events && daily.totals.unique_visits === expectedUnique,
          top: top.length === Math.min(100, spec.links) && top[0]?.value === maxVisits,
          feedFirst: feedIds('feedFirst').join() === Array.from({ length: 100 }, (_, j) => eventId(j)).join(),
          feedDeep:
            feedIds('feedDeep').join() === Array.from({ length: 100 }, (_, j) => eventId(deepAt + j)).join(),
        };

        // Each case recorded once for its floors: its own requests, its Query alone, and the pages read.
        const recorded: RecordedCall[][] = [];
        for (const c of cases) {
          await proxy.quiet();
          await proxy.record();
          await client.send({ method: 'GET', path: c.path });
          recorded.push(
            (await proxy.recorded()).filter((r) => r.category === 'request' || r.category === 'apikey'),
          );
        }
        const queries = recorded.map((calls) => calls.filter((r) => r.op === 'Query'));
        const raw = new DynamoDBClient(dynamoClientConfig(host.dynamo, undefined, 30_000));
        const read = await Promise.all(
          queries.map(async (qs) => {
            let [items, bytes] = [0, 0];
            for (const q of qs) {
              const out = await raw.send(new RawQueryCommand(JSON.parse(q.body)));
              items += out.Items?.length ?? 0;
              bytes += (out.Items ?? []).reduce((a, i) => a + sizeOf(unmarshall(i)), 0);
            }
            return { items, bytes };
          }),
        );
        raw.destroy();
        const runs = cases.flatMap((c, i) => {
          const whole = replayFloor(recorded[i]!, proxy.url)!;
          const own = recorded[i]!.filter((r) => r.category === 'request');
          const alone = replayFloor(c.key === 'campaign' ? own : queries[i]!, proxy.url)!;
          return [
            { key: c.key, what: 'gateway', run: () => client.send({ method: 'GET', path: c.path }) },
            { key: c.key, what: 'floor', run: () => whole.run() },
            { key: c.key, what: 'alone', run: () => alone.run() },
          ];
        });
        const times = new Map(runs.map((r) => [`${r.key}:${r.what}`, [] as number[]]));
        for (let s = 0; s < settings.pageSamples; s++)
          for (const r of runs) {
            const started = performance.now();
            await r.run();
            times.get(`${r.key}:${r.what}`)!.push(performance.now() - started);
          }
        const p = (key: string, what: string, q = 50) => percentile(times.get(`${key}:${what}`)!, q);
        const pages = (i: number) => Math.max(1, queries[i]!.length);
        const rows = cases.map((c, i) => {
          const isAnalytics = !['campaign', 'feedFirst', 'feedDeep'].includes(c.key);
          const gateway = p(c.key, 'gateway') / (p('campaign', 'gateway') * pages(i));
          const wire = p(c.key, 'alone') / (p('campaign', 'alone') * pages(i));
          return { ...c, i, isAnalytics, gateway, wire };
        });
        const analytics = rows.filter((r) => r.isAnalytics);
        const overGateway = analytics.filter((r) => r.gateway > GOAL);
        const overWire = analytics.filter((r) => r.wire > GOAL);
        const feedRatio = p('feedDeep', 'gateway') / p('feedFirst', 'gateway');
        const feedFloorRatio = p('feedDeep', 'floor') / p('feedFirst', 'floor');
        const feedVerdict = pageVerdict(feedRatio, feedFloorRatio);
        const rate = written / loadSeconds;
        const links = spec.links.toLocaleString('en-US');
        const events = spec.events.toLocaleString('en-US');
        const allChecks = Object.values(checks).every(Boolean) && differences.length === 0;

        return {
          body: [
            `A campaign of ${links} links and ${events} visits, each visit with its event in the events feed (${FEED_PACK} events per feed item), and the series and ranking items the rollup consumer derives from them (${counts.series.toLocaleString('en-US')} series items, ${counts.rankings.toLocaleString('en-US')} ranking items), built with the writers' own item builders (\`scripts/bench/analytics-data.ts\`) and written straight into a second local stack's table (its own DynamoDB Local, its stream turned off once the sample below was counted): ${written.toLocaleString('en-US')} items with BatchWriteItem (25 a call, ${WRITERS} calls in flight) in ${loadSeconds.toFixed(0)} s (${rate.toFixed(0)} items/s; links ${load[0]!.seconds.toFixed(0)} s, visits and feed ${load[1]!.seconds.toFixed(0)} s, rollups ${load[2]!.seconds.toFixed(0)} s; traffic and rollups summed in ${buildSeconds.toFixed(1)} s). The traffic: visits per link by Zipf's law (exponent 1: the top link has ${maxVisits.toLocaleString('en-US')}), each link shared at a random time of the last 29 days and visited after it (exponentially, mean 6 h), 4 links per referrer, 80 % unique visits. The rollups are summed in the bench rather than written by \`applyRollups\` (whose transactions of at most 99 items would take hours here); checked against the real consumer on a sample of ${SAMPLE.events} visits over ${SAMPLE.links} links written through the table stream: ${differences.length === 0 ? 'every series and ranking item equal' : `${differences.length} DIFFERENCES (first: ${differences.slice(0, 3).join('; ')})`}. Not written: the event lookup items (one per event, partitions of their own, read only by redelivery).`,
            `Each request below was timed ${settings.pageSamples} times, interleaved with the others: through the local gateway (authorizer, handler, the answer's JSON), its DynamoDB requests replayed as recorded (the floor, as in part 2: the authorizer's GetItem, then the Query beside the campaign's GetItem), and its Query alone replayed (for the yardstick: its GetItem alone). Goal (issue 14): each analytics request within ${GOAL}× of a single GetItem × the Query pages it read (1 MB each), read two ways: through the gateway, the endpoint against \`GET /api/v1/campaign\` (the authorizer and one GetItem); on the wire, its Query against the GetItem.`,
            [
              [
                'request',
                'items read (KB), pages',
                'gateway p50 (p95)',
                'floor p50',
                'Query alone p50',
                `gateway ÷ (GET campaign × pages) ≤ ${GOAL}`,
                `Query ÷ (GetItem × pages) ≤ ${GOAL}`,
              ],
              ...rows.map((r) => [
                r.label,
                r.key === 'campaign'
                  ? '1 item'
                  : `${read[r.i]!.items} (${(read[r.i]!.bytes / 1024).toFixed(1)}), ${queries[r.i]!.length}`,
                `${ms(p(r.key, 'gateway'))} ms (${ms(p(r.key, 'gateway', 95))})`,
                `${ms(p(r.key, 'floor'))} ms`,
                `${ms(p(r.key, 'alone'))} ms`,
                r.key === 'campaign'
                  ? '—'
                  : `${r.gateway.toFixed(2)}${r.isAnalytics ? (r.gateway <= GOAL ? ' yes' : ' NO') : ''}`,
                r.key === 'campaign'
                  ? '—'
                  : `${r.wire.toFixed(2)}${r.isAnalytics ? (r.wire <= GOAL ? ' yes' : ' NO') : ''}`,
              ]),
            ],
            [
              ['check', 'result'],
              [
                `30-day totals: ${events} visits, ${expectedUnique.toLocaleString('en-US')} unique`,
                `${daily.totals.visits} / ${daily.totals.unique_visits}: ${checks.daily ? 'yes' : 'NO'}`,
              ],
              ['top 100: 100 entries, the first the most visited link', checks.top ? 'yes' : 'NO'],
              [
                'feed pages: the first 100 events, and the 100 after the cursor, in order',
                `${checks.feedFirst ? 'yes' : 'NO'}, ${checks.feedDeep ? 'yes' : 'NO'}`,
              ],
              [
                'feed: deep page ÷ first page at p50',
                `${feedRatio.toFixed(2)} (${feedVerdict}; floor ${feedFloorRatio.toFixed(2)})`,
              ],
            ],
          ],
          summary: `Analytics at scale (${links} links, ${events} visits, ${written.toLocaleString('en-US')} items written in ${loadSeconds.toFixed(0)} s): daily series ${ms(p('daily30', 'gateway'))} ms, hourly ${ms(p('hourly7', 'gateway'))} ms, top 10/100 ${ms(p('top10', 'gateway'))}/${ms(p('top100', 'gateway'))} ms vs GET campaign ${ms(p('campaign', 'gateway'))} ms; feed first/deep page ${ms(p('feedFirst', 'gateway'))}/${ms(p('feedDeep', 'gateway'))} ms; ${analytics.length - overGateway.length}/${analytics.length} within ${GOAL}× through the gateway, ${analytics.length - overWire.length}/${analytics.length} on the wire.`,
          findings: [
            overGateway.length > 0 &&
              `Analytics at scale: through the gateway, over ${GOAL}× GET /api/v1/campaign × pages: ${overGateway.map((r) => `${r.label} ${r.gateway.toFixed(2)}× (${ms(p(r.key, 'gateway'))} vs ${ms(p('campaign', 'gateway'))} ms)`).join('; ')}.`,
            overWire.length > 0 &&
              `Analytics at scale: on the wire, Query over ${GOAL}× a GetItem × pages: ${overWire.map((r) => `${r.label} ${r.wire.toFixed(2)}× (${ms(p(r.key, 'alone'))} vs ${ms(p('campaign', 'alone'))} ms, ${read[r.i]!.items} items)`).join('; ')}.`,
            feedVerdict !== 'same within noise' &&
              `Events feed at ${events} events: the deep page's p50 is ${feedRatio.toFixed(2)}× the first page's; the floor shows ${feedFloorRatio.toFixed(2)}×.`,
            !allChecks &&
              `Analytics at scale: wrong answers or rollups: ${JSON.stringify(checks)}; ${differences.length} differences from the consumer (${differences.slice(0, 3).join('; ')}).`,
          ],
          data: {
            links: spec.links,
            events: spec.events,
            counts,
            written,
            loadSeconds,
            itemsPerSecond: rate,
            checks,
            sampleDifferences: differences.length,
            cases: rows.map((r) => ({
              key: r.key,
              items: read[r.i]!.items,
              bytes: read[r.i]!.bytes,
              pages: queries[r.i]!.length,
              p50: p(r.key, 'gateway'),
              p95: p(r.key, 'gateway', 95),
              floorP50: p(r.key, 'floor'),
              aloneP50: p(r.key, 'alone'),
              gatewayRatio: r.gateway,
              wireRatio: r.wire,
            })),
          },
        };
      } finally {
        client.close();
      }
    } finally {
      table.db.destroy();
      proxy.stop();
      await host.stop();
    }
  },
};
