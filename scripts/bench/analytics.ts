/** Parts 6 and 6b: a campaign of many links; analytics and the feed at scale, in a stack of their own. */
import { randomBytes, randomUUID } from 'node:crypto';
import { totalmem } from 'node:os';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { createDocumentClient, dynamoClientConfig } from '../../lib/aws/clients.ts';
import { HIGH_WATER_PREFIX } from '../../lib/db/entities/analytics.ts';
import { campaignLinksPartition, isLinkItem, linkKey, linkOrder } from '../../lib/db/entities/link.ts';
import { encodeCursor, encodeSortKeyCursor } from '../../lib/db/table/cursor.ts';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { LOCAL_TABLE_NAME } from '../../lib/local/stack.ts';
import { campaignItems, getItems, putItems, type Table } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import * as data from './analytics-data.ts';
import { sizeOf } from './capacity.ts';
import { type BenchClient, benchClient, forkChild, reserveIds, startCountingProxy } from './environment.ts';
import { sendRecorded, timeWithFloors } from './floor.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { log, ms, pageVerdict, timed, yes } from './stats.ts';
import { campaignWithWrittenLinks, codeOf } from './traffic.ts';

/** Issue 14's goal: an analytics request within this factor of a single GetItem × its reads. */
const GOAL = 1.5;
const WRITERS = 16;
const SAMPLE = { links: 12, events: 600 };
/** The host process (`analytics-host.ts`): its DynamoDB Local holds ~6 GB at a million visits, past the JVM's default heap. */
async function startHost() {
  const heap = `-Xmx${Math.floor((totalmem() * 0.6) / 2 ** 20)}m`;
  const env = { ...process.env, JAVA_TOOL_OPTIONS: process.env.JAVA_TOOL_OPTIONS ?? heap };
  const child = await forkChild('./analytics-host.ts', [], env);
  /** `sample`: the stack with its stream consumer; `load`: stopped, the stream off; `start`: without a stream poller. */
  const step = (step: 'sample' | 'load' | 'start', proxyUrl?: string, devApiKeys?: string) =>
    child.ask<string>({ step, proxyUrl, devApiKeys });
  return { dynamo: child.ready, step, stop: child.stop };
}

/** Write every item `items` yields, printing progress every 10 s: the items written and the seconds taken. */
async function writeAll(table: Table, items: Iterable<object>, label: string, n: number, writers = WRITERS) {
  const started = performance.now();
  const progress = (written: number) => {
    const rate = written / ((performance.now() - started) / 1000);
    const left = Math.ceil((n - written) / rate / 60);
    log(`${label}: ${written} of ${n} items (${rate.toFixed(0)}/s, ~${left} min left)`);
  };
  const written = await putItems(items, table, { writers, progress });
  return { written, seconds: (performance.now() - started) / 1000 };
}

function* campaignAndLinks(spec: data.CampaignSpec, link = (i: number): object => data.linkItemOf(spec, i)) {
  yield data.campaignOf(spec);
  for (let i = 0; i < spec.links; i++) yield link(i);
}
function* visitsAndFeed(spec: data.CampaignSpec, t: data.Traffic, feed: boolean) {
  const clicks = new Int32Array(spec.links);
  for (let j = 0; j < spec.events; j += 500) {
    const items = data.eventItems(spec, t, j, Math.min(spec.events, j + 500), clicks);
    yield* items.visits;
    if (feed) yield* items.feed;
  }
}

/** An item as compared: its high-water marks as one (the consumer's lanes), without a board's `version` (its merges). */
const canonical = (item: Record<string, unknown>) => {
  const kept = Object.entries(item).flatMap(([k, v]) =>
    k === 'version' ? [] : [k.startsWith(HIGH_WATER_PREFIX) ? ['hw', 'marked'] : [k, v]],
  );
  return JSON.stringify(Object.entries(Object.fromEntries(kept)).sort(([a], [b]) => (a < b ? -1 : 1)));
};
function differences(expected: Array<Record<string, unknown>>, actual: Array<Record<string, unknown>>) {
  const keyOf = (i: Record<string, unknown>) => `${i.PK} ${i.SK}`;
  const got = new Map(actual.map((i) => [keyOf(i), i]));
  const out: string[] = [];
  for (const e of expected) {
    const a = got.get(keyOf(e));
    if (!a) out.push(`${keyOf(e)} missing`);
    else if (canonical(a) !== canonical(e))
      out.push(`${keyOf(e)}: consumer ${canonical(a)}, built ${canonical(e)}`);
    got.delete(keyOf(e));
  }
  return [...out, ...[...got.keys()].map((k) => `${k} written by the consumer only`)];
}

/** The sample's items as the host stack's consumer counted them against the builder's: the differences once none or after 90 s. */
async function checkSample(spec: data.CampaignSpec, table: Table, quiet: () => Promise<void>) {
  const t = data.traffic(spec);
  const built = data.rollups(spec, t);
  await writeAll(table, campaignAndLinks(spec), 'sample links', spec.links + 1);
  // In time order, one call at a time: the stream sees the visits as the API would have made them.
  await writeAll(table, visitsAndFeed(spec, t, false), 'sample visits', spec.events, 1);
  const expected = [...built.items(), ...Array.from({ length: spec.links }, (_, i) => built.linkItem(i))];
  const keys = Array.from({ length: spec.links }, (_, i) => linkKey(codeOf(spec.codeTag, i)));
  const rollups = () => campaignItems(spec.tenant, spec.campaignId, 'AN#', table);
  const links = async () => (await getItems(keys, table)).filter((i) => i !== undefined);
  const written = async () => [...(await rollups()), ...(await links())];
  await waitUntil(async () => differences(expected, await written()).length === 0, 90_000, 500);
  await quiet();
  return differences(expected, await written());
}

/** What a request reads besides the campaign item: its Queries, else its other GetItems (the yardstick: the campaign's). */
function readsOf(calls: RecordedCall[]) {
  const own = calls.filter((r) => r.category === 'request');
  const queries = own.filter((r) => r.op === 'Query');
  const others = own.filter((r) => JSON.parse(r.body).Key?.SK?.S !== 'CAMPAIGN');
  return queries.length ? queries : others.length ? others : own;
}

export const analyticsPart: BenchPart = {
  ...{ name: 'analytics', title: '6b. Analytics and the events feed at scale' },
  standalone: true,
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
        ...{ tenant, campaignId: randomUUID(), campaignUrl: 'https://example.com/analytics' },
        ...{ links: settings.scaleLinks, events: settings.events, nowMs },
        firstLinkId: await reserveIds({ table }, 'link', settings.scaleLinks + SAMPLE.links),
        firstActionId: await reserveIds({ table }, 'action', settings.events + SAMPLE.events),
        codeTag: `A${nowMs.toString(36).toUpperCase()}`,
        seed: 14,
      };
      const t0 = performance.now();
      const t = data.traffic(spec);
      const summed = data.rollups(spec, t);
      const buildSeconds = (performance.now() - t0) / 1000;
      const feedItems = Math.ceil(spec.events / data.FEED_PACK);
      const rollupItems = summed.series + summed.referrers + summed.boards;
      const counts = `${summed.series} series items, ${summed.referrers} referrer totals, ${summed.boards} ranking boards`;
      log(`${spec.events} visits, ${feedItems} feed items, ${counts}`);

      // First the sample, through the real stream consumer of the host's stack, while the table is small.
      await host.step('sample', proxy.url, `${tenant}:${apiKey}`);
      const [firstLinkId, firstActionId] = [spec.firstLinkId + spec.links, spec.firstActionId + spec.events];
      const fresh = { campaignId: randomUUID(), firstLinkId, firstActionId, codeTag: `${spec.codeTag}S` };
      const sample = { ...spec, ...fresh, ...SAMPLE, seed: 15 };
      const differ = await checkSample(sample, table, () => proxy.quiet(1_000, 30_000));
      await host.step('load');
      const load = [
        await writeAll(table, campaignAndLinks(spec, summed.linkItem), 'links', spec.links + 1),
        await writeAll(table, visitsAndFeed(spec, t, true), 'visits and feed', spec.events + feedItems),
        await writeAll(table, summed.items(), 'rollups', rollupItems),
      ];
      const loadSeconds = load.reduce((a, l) => a + l.seconds, 0);
      const written = load.reduce((a, l) => a + l.written, 0);

      client = benchClient(await host.step('start', proxy.url, `${tenant}:${apiKey}`), apiKey);
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
      const answers = new Map<string, unknown>();
      for (const c of cases) answers.set(c.key, JSON.parse((await get(c.path)).body));
      const daily = answers.get('daily30') as { totals: { visits: number; unique_visits: number } };
      const top = answers.get('top100') as Array<{ value: number }>;
      const unique = t.unique.reduce((a, u) => a + u, 0);
      const maxVisits = t.visits.reduce((a, v) => Math.max(a, v), 0);
      const eventId = (j: number) => actionEventId(spec.firstActionId + j, spec.campaignId);
      const ids = (key: string) => (answers.get(key) as Array<{ id: string }>).map((e) => e.id).join();
      const page = (key: string, from: number) =>
        ids(key) === Array.from({ length: 100 }, (_, j) => eventId(from + j)).join();

      // Each case recorded once for its floors, timed, and its reads sent again for the items they read.
      const { p, recorded } = await timeWithFloors(proxy, get, cases, settings.pageSamples, readsOf);
      const reads = cases.map((c) => readsOf(recorded[c.key]!));
      const raw = new DynamoDBClient(dynamoClientConfig(host.dynamo, undefined, 30_000));
      const read: Array<{ items: number; bytes: number }> = [];
      for (const calls of reads) {
        const items = [];
        for (const call of calls) {
          const out = await sendRecorded(raw, call);
          items.push(...[...(out.Items ?? []), ...(out.Item ? [out.Item] : [])].map((i) => unmarshall(i)));
        }
        read.push({ items: items.length, bytes: items.reduce((a, i) => a + sizeOf(i), 0) });
      }
      raw.destroy();
      const measured = cases.map((c, i) => {
        const n = reads[i]!.length;
        const gateway = p(c.key, 'gateway') / (p('campaign', 'gateway') * n);
        const wire = p(c.key, 'alone') / (p('campaign', 'alone') * n);
        const analytics = !['campaign', 'feedFirst', 'feedDeep'].includes(c.key);
        return { ...c, ...read[i]!, reads: `${n} ${reads[i]![0]!.op}`, analytics, gateway, wire };
      });
      const feedRatio = p('feedDeep', 'gateway') / p('feedFirst', 'gateway');
      const feedFloorRatio = p('feedDeep', 'floor') / p('feedFirst', 'floor');
      const feedVerdict = pageVerdict(feedRatio, feedFloorRatio);
      const ratio = (r: (typeof measured)[number], v: number) =>
        r.key === 'campaign' ? '—' : `${v.toFixed(2)}${r.analytics ? ` ${yes(v <= GOAL)}` : ''}`;
      const analytics = measured.filter((r) => r.analytics);
      const within = (of: 'gateway' | 'wire') => analytics.filter((r) => r[of] <= GOAL).length;
      const over = (of: 'gateway' | 'wire') =>
        analytics.flatMap((r) => (r[of] > GOAL ? `${r.label} ${r[of].toFixed(2)}×` : [])).join('; ') ||
        'none';
      const checked = `${differ.length} differences${differ.length ? ` (first: ${differ.slice(0, 3).join('; ')})` : ''}`;
      const ms50 = (key: string) => ms(p(key, 'gateway'));
      const head = `request | items read (KB), reads | gateway p50 (p95) | floor p50 | its reads alone p50 | gateway ÷ (GET campaign × reads) ≤ ${GOAL} | reads ÷ (GetItem × reads) ≤ ${GOAL}`;
      const line = (r: (typeof measured)[number]) =>
        `${r.label} | ${r.items} (${(r.bytes / 1024).toFixed(1)}), ${r.reads} | ${ms50(r.key)} ms (${ms(p(r.key, 'gateway', 95))}) | ${ms(p(r.key, 'floor'))} ms | ${ms(p(r.key, 'alone'))} ms | ${ratio(r, r.gateway)} | ${ratio(r, r.wire)}`;
      return {
        body: [
          `A campaign of ${spec.links} links and ${spec.events} visits, each visit with its event in the events feed (${data.FEED_PACK} events per feed item), and what the counting consumer derives from them (${counts}; the links' all-time counts on their items), built with the writers' own item builders (\`scripts/bench/analytics-data.ts\`) and written straight into a second local stack's table (its own DynamoDB Local, its stream turned off once the sample below was counted): ${written} items with BatchWriteItem (25 a call, ${WRITERS} calls in flight) in ${loadSeconds.toFixed(0)} s (${(written / loadSeconds).toFixed(0)} items/s; links ${load[0]!.seconds.toFixed(0)} s, visits and feed ${load[1]!.seconds.toFixed(0)} s, rollups ${load[2]!.seconds.toFixed(0)} s; traffic and rollups summed in ${buildSeconds.toFixed(1)} s). The traffic: visits per link by Zipf's law (exponent 1: the top link has ${maxVisits}), each link shared at a random time of the last 29 days and visited after it (exponentially, mean 6 h), 4 links per referrer, 80 % unique visits. The rollups are summed in the bench rather than through the stream (hours here); the builder is checked against the real consumer on a sample of ${SAMPLE.events} visits over ${SAMPLE.links} links written through the table stream (series, referrer totals, boards and link items compared whole, high-water marks by presence): ${checked}. Not written: the event lookup items (one per event, partitions of their own, read only by redelivery).`,
          `Each request below was timed ${settings.pageSamples} times, interleaved with the others: through the local gateway (authorizer, handler, the answer's JSON), its DynamoDB requests replayed as recorded (the floor, as in part 2: the authorizer's GetItem, then its reads beside the campaign's GetItem), and its own reads alone replayed: a series' Query, a ranking's board (one GetItem), the yardstick's GetItem. Goal (issue 14): each analytics request within ${GOAL}× of a single GetItem × the reads it made (Query pages of 1 MB, or GetItems), read two ways: through the gateway, the endpoint against \`GET /api/v1/campaign\` (the authorizer and one GetItem); on the wire, its reads against the GetItem.`,
          rows(head, measured.map(line)),
          `Feed: the deep page ÷ the first page at p50: ${feedRatio.toFixed(2)} (${feedVerdict}; floor ${feedFloorRatio.toFixed(2)}).`,
        ],
        summary: `Analytics at scale (${spec.links} links, ${spec.events} visits, ${written} items written in ${loadSeconds.toFixed(0)} s): daily series ${ms50('daily30')} ms, hourly ${ms50('hourly7')} ms, top 10/100 ${ms50('top10')}/${ms50('top100')} ms vs GET campaign ${ms50('campaign')} ms; feed first/deep page ${ms50('feedFirst')}/${ms50('feedDeep')} ms; ${within('gateway')}/${analytics.length} within ${GOAL}× through the gateway, ${within('wire')}/${analytics.length} on the wire.`,
        checks: checks(`
analytics requests within ${GOAL}× GET /api/v1/campaign × reads, through the gateway: over | ${over('gateway')} | ≤ ${GOAL}× | ${within('gateway') === analytics.length}
analytics requests within ${GOAL}× a GetItem × reads, on the wire: over | ${over('wire')} | ≤ ${GOAL}× | ${within('wire') === analytics.length}
30-day totals: ${spec.events} visits, ${unique} unique | ${daily.totals.visits} / ${daily.totals.unique_visits} | equal | ${daily.totals.visits === spec.events && daily.totals.unique_visits === unique}
top 100: ${Math.min(100, spec.links)} entries, the first the most visited link (${maxVisits}) | ${top.length}, ${top[0]?.value} | equal | ${top.length === Math.min(100, spec.links) && top[0]?.value === maxVisits}
feed pages: the first 100 events, and the 100 after the cursor, in order | ${page('feedFirst', 0)}, ${page('feedDeep', deepAt)} | true, true | ${page('feedFirst', 0) && page('feedDeep', deepAt)}
feed: the deep page's p50 against the first's | ${feedRatio.toFixed(2)}× (floor ${feedFloorRatio.toFixed(2)}×) | same within noise | ${feedVerdict === 'same within noise'}
built rollups against the consumer's on the sample | ${checked} | none | ${differ.length === 0}`),
      };
    } finally {
      client?.close();
      table.db.destroy();
      proxy.stop();
      await host.stop();
    }
  },
};

export const scalePart: BenchPart = {
  ...{ name: 'scale', title: '6. Scale: a campaign with many links' },
  async run({ env }) {
    const { tenant, table } = env;
    const n = settings.scaleLinks;
    const { id, links, createdMs, loadSeconds } = await campaignWithWrittenLinks(env, 'scale', n, false);
    const firstId = links[0]!.id;
    // The last page starts after the item before it.
    const path = `/api/v1/campaign_referral_links/${id}?limit=100`;
    const before = { sortKey: linkOrder(createdMs + n - 101, firstId + n - 101), code: links[n - 101]!.code };
    const lastPath = `${path}&cursor=${encodeURIComponent(encodeCursor({ tenant, campaignId: id }, before))}`;
    const check = await env.client.send({ method: 'GET', path: lastPath });
    const page = JSON.parse(check.body) as Array<{ id: number }>;
    const lastIds = Array.from({ length: 100 }, (_, i) => firstId + n - 100 + i).join();
    const noNext = check.headers['x-next-cursor'] === undefined;
    const lastPageOk = check.status === 200 && page.map((l) => l.id).join() === lastIds && noNext;
    const get = (p: string) => env.client.send({ method: 'GET', path: p });
    const pages = Object.entries({ first: path, last: lastPath }).map(([key, path]) => ({ key, path }));
    const { p } = await timeWithFloors(env.proxy, get, pages, settings.pageSamples);

    const remove = () => env.client.send({ method: 'DELETE', path: `/api/v1/campaign?id=${id}` });
    const [deleted, deleteMs] = await timed(remove);
    if (deleted.status !== 204) throw new Error(`DELETE of the scale campaign: ${deleted.status}`);
    const purgeStart = performance.now();
    const firstLink = {
      ...{ TableName: table.name, IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', Limit: 1 },
      ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, id) },
    };
    const anyLeft = async () =>
      (await table.db.send(new QueryCommand(firstLink))).Items?.length ||
      (await campaignItems(tenant, id, '', table)).length;
    const gone = await waitUntil(async () => !(await anyLeft()), settings.purgeTimeoutSeconds * 1000, 500);
    const seconds = (performance.now() - purgeStart) / 1000;
    // Exact check: every link key read back; a code's reservation is no link.
    const keys = links.map((l) => linkKey(l.code));
    const remaining = (await getItems(keys, table)).filter((i) => i && isLinkItem(i)).length;
    const [ratio, floorRatio] = [p('last') / p('first'), p('last', 'floor') / p('first', 'floor')];
    const verdict = pageVerdict(ratio, floorRatio);
    const finished = gone && remaining === 0;
    const count = n.toLocaleString('en-US');
    const p50p95 = (k: string) => `${ms(p(k))} ms (${ms(p(k, 'gateway', 95))})`;
    const purge = finished
      ? `${seconds.toFixed(1)} s (${(n / seconds).toFixed(0)} items/s; every link key read back: 0 left)`
      : `not finished after ${seconds.toFixed(0)} s: ${remaining} links left`;
    return {
      body: [
        `${count} links written straight into the table as \`newLinkItem\` builds them for \`createLink\` (BatchWriteItem, ${loadSeconds.toFixed(1)} s). First and last page of the campaign’s list (limit 100) timed ${settings.pageSamples} times each, interleaved; the last page through a cursor built by \`encodeCursor\`. The floor is each page’s DynamoDB requests, recorded and replayed (as in part 2).`,
        rows(`
measure | through the gateway | floor (DynamoDB requests replayed)
first page p50 (p95) | ${p50p95('first')} | ${ms(p('first', 'floor'))} ms
last page p50 (p95) | ${p50p95('last')} | ${ms(p('last', 'floor'))} ms
last / first at p50 | ${ratio.toFixed(2)} (${verdict}) | ${floorRatio.toFixed(2)}
last page holds the last 100 links, no next cursor | ${lastPageOk ? 'yes' : 'NO'} |
DELETE of the campaign answered 204 in | ${ms(deleteMs)} ms |
from the 204 until no item of it remains | ${purge} |`),
      ],
      summary: `Scale (${count} links): first page ${ms(p('first'))} ms, last page ${ms(p('last'))} ms; purge ${finished ? `${seconds.toFixed(1)} s` : `unfinished (${remaining} left)`}.`,
      checks: checks(`
the last page holds the last 100 links, no next cursor | ${lastPageOk} | true | ${lastPageOk}
the last page's p50 against the first's | ${ratio.toFixed(2)}× (${verdict}; the floor ${floorRatio.toFixed(2)}×) | same within noise | ${verdict === 'same within noise'}
the purge removes every link | ${purge} | within ${settings.purgeTimeoutSeconds} s | ${finished}`),
    };
  },
};
