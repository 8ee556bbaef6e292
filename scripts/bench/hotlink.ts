/**
 * Part 3b: one hot link (issue 14). Visits go through `/r/{code}` of the local stack with
 * autocannon (`load.ts`'s worker), each from a visitor of its own (a user agent per request), as on
 * a link that goes viral; the table stream's rollup consumer then counts them.
 *
 * - Hot items: every item the stack read or wrote by key during the hot-link runs (and until the
 *   consumer had counted them and the pipeline was idle) is counted by the counting proxy
 *   (`DynamoCounter.track()`); the writes that landed on the link's item (`LINK#<code>`), on the
 *   hottest series and ranking items and on the hottest item of all, per 1,000 visits.
 * - Throughput: visits/s on one link against the same load spread over many links (each link a
 *   referrer of its own), runs alternated hot, spread, spread, hot, each of the same size, after a
 *   calibration run on the hot link and a warm-up run on the spread links; and how long the
 *   consumer took after each run to count it.
 * - Delay: single visits one after the other, each followed from its 302 until `total_clicks` (the
 *   link read by code) and endpoint 16's totals include it, both polled through the API.
 *
 * The capacity the runs used, per kind of item (`capacity.ts`), is kept for the cost model.
 */
import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { seriesPointsFromItem, seriesSortKey } from '../../lib/db/entities/analytics.ts';
import { linkFromItem, linkKey } from '../../lib/db/entities/link.ts';
import { newVisitItem, visitPartitions } from '../../lib/db/entities/visit.ts';
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { campaignItems, partitionItems, putItems } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import { capacityOf, checksOf, type KindUsage, kindOf, readsOf, writesOf } from './capacity.ts';
import { BROWSER } from './endpoints.ts';
import {
  type BenchEnvironment,
  type BenchPart,
  quick,
  reserveIds,
  settings,
  waitPipelineIdle,
} from './environment.ts';
import { benchClient } from './http-client.ts';
import { runLoad } from './load.ts';
import type { LoadJob, LoadResult } from './load-worker.ts';
import { ms, sleep, spread } from './stats.ts';

/** Goals of issue 14. */
const HOT_ITEM_GOAL = 20;
const SAME_RATE_GOAL = 0.1;
const DELAY_GOAL_MS = 2_000;
/** How long the consumer may take to count a run before the bench gives up on it. */
const DRAIN_TIMEOUT_MS = 180_000;

/** A browser's user agent with an id of its own per request (autocannon's `idReplacement`): a new visitor each time. */
const VISITOR_AGENT = `${BROWSER} visitor/[<id>]`;

export type Traffic = 'visit' | 'action';

/** The links' stored `total_clicks`, summed (read straight from DynamoDB Local, not counted). */
async function clicksOf(env: BenchEnvironment, codes: readonly string[]): Promise<number> {
  let sum = 0;
  for (let i = 0; i < codes.length; i += 100) {
    const Keys = codes.slice(i, i + 100).map((c) => ({ PK: `LINK#${c}`, SK: 'LINK' }));
    const out = await env.table.db.send(
      new BatchGetCommand({ RequestItems: { [env.table.name]: { Keys, ConsistentRead: true } } }),
    );
    for (const item of out.Responses?.[env.table.name] ?? []) sum += Number(item.total_clicks ?? 0);
  }
  return sum;
}

/** The tenant and campaign of the links `codes` (all of one campaign), from the first link's item. */
async function campaignOfCodes(env: BenchEnvironment, codes: readonly string[]) {
  const { Item } = await env.table.db.send(
    new GetCommand({ TableName: env.table.name, Key: linkKey(codes[0]!), ConsistentRead: true }),
  );
  return { tenant: String(Item?.tenant), campaignId: String(Item?.campaign_id) };
}

/** Items of the campaign's 16 visit partitions whose SK starts with `prefix` (`A#` visits, `B#` bot visits). */
async function visitPartitionItems(env: BenchEnvironment, codes: readonly string[], prefix: string) {
  const { tenant, campaignId } = await campaignOfCodes(env, codes);
  const pages = await Promise.all(
    visitPartitions(tenant, campaignId).map((pk) => partitionItems(pk, prefix, env.table)),
  );
  return pages.flat();
}

/**
 * The bot visits recorded for the campaign of `codes` (its bot-visit items). A visitor's generated
 * user agent can look like a bot to `isbot` (an id holding `feed` is a feed reader's): that visit
 * is redirected and counted apart, never in `total_clicks`.
 */
async function botVisitsOf(env: BenchEnvironment, codes: readonly string[]): Promise<number> {
  return (await visitPartitionItems(env, codes, 'B#')).length;
}

function jobOf(env: BenchEnvironment, traffic: Traffic, codes: readonly string[], amount: number): LoadJob {
  const connections = settings.loadConnections;
  if (traffic === 'visit')
    return {
      url: `${env.stack.baseUrl}/r/${codes[0]}`,
      headers: { 'user-agent': VISITOR_AGENT },
      idReplacement: true,
      targets: codes.map((code) => ({ path: `/r/${code}` })),
      connections,
      amount,
    };
  return {
    url: `${env.stack.baseUrl}/api/v1/action/referral_link`,
    method: 'POST',
    headers: { 'api-key': env.apiKey, 'content-type': 'application/json', 'user-agent': BROWSER },
    targets: codes.map((code) => ({
      path: '/api/v1/action/referral_link',
      body: JSON.stringify({ referral_code: code, action_type: 'purchase', metadata: { source: 'bench' } }),
    })),
    connections,
    amount,
  };
}

export interface TrafficRun {
  traffic: Traffic;
  links: number;
  accepted: number;
  /** Responses with another status, and connection errors. */
  other: number;
  errors: number;
  durationMs: number;
  perSecond: number;
  /** From the end of the run until the links' `total_clicks` held every accepted request. */
  drainMs: number;
  /** What `total_clicks` rose by, against `accepted` less `bots`. */
  counted: number;
  /** 302s of visitors `isbot` took for bots (their generated user agent), counted apart. */
  bots: number;
  latency: LoadResult['latency'];
  /** Every item touched by key from the start of the run until the pipeline was idle again. */
  tracked: ItemAccesses[];
  /** When `counted` is not `accepted`: the campaign's clicks, visit items and visits in analytics, all told. */
  where?: { totalClicks: number; visitItems: number; analyticsVisits: number };
}

/**
 * `amount` requests of `traffic` (visits through `/r`, or actions through endpoint 12) over the
 * links of `codes` (each connection cycles through them), then a wait until the links'
 * `total_clicks` hold them all and the pipeline is idle; with `track`, every item touched by key
 * meanwhile, from the counting proxy.
 */
export async function drive(
  env: BenchEnvironment,
  traffic: Traffic,
  codes: readonly string[],
  amount: number,
  track = true,
): Promise<TrafficRun> {
  const before = await clicksOf(env, codes);
  const botsOf = async () => (traffic === 'visit' ? botVisitsOf(env, codes) : 0);
  const botsBefore = await botsOf();
  if (track) await env.proxy.track();
  const result = await runLoad(jobOf(env, traffic, codes, amount));
  const ended = performance.now();
  const accepted = result.statuses[traffic === 'visit' ? 302 : 201] ?? 0;
  const all = Object.values(result.statuses).reduce((a, n) => a + n, 0);
  // Bot visits are items written by the request itself; human visits reach total_clicks through
  // the stream consumer: every 302 is one or the other.
  const bots = (await botsOf()) - botsBefore;
  await waitUntil(async () => (await clicksOf(env, codes)) - before >= accepted - bots, DRAIN_TIMEOUT_MS, 25);
  const drainMs = performance.now() - ended;
  await waitPipelineIdle(env);
  const tracked = track ? await env.proxy.tracked() : [];
  const counted = (await clicksOf(env, codes)) - before;
  return {
    traffic,
    links: codes.length,
    accepted,
    other: all - accepted,
    errors: result.errors,
    durationMs: result.durationMs,
    perSecond: accepted / (result.durationMs / 1000),
    drainMs,
    counted,
    bots,
    latency: result.latency,
    tracked,
    ...(traffic === 'visit' && counted !== accepted - bots && { where: await whereVisitsAre(env, codes) }),
  };
}

/**
 * Where a campaign's visits are, when `total_clicks` did not hold them all: since the campaign
 * was made, its links' `total_clicks`, its visit items and its visits in the analytics (its
 * campaign scope's series items), each summed straight from the table.
 */
async function whereVisitsAre(env: BenchEnvironment, codes: readonly string[]) {
  const { tenant, campaignId } = await campaignOfCodes(env, codes);
  const series = await campaignItems(tenant, campaignId, seriesSortKey({ kind: 'campaign' }, ''), env.table);
  return {
    totalClicks: await clicksOf(env, codes),
    visitItems: (await visitPartitionItems(env, codes, 'A#')).length,
    analyticsVisits: series.reduce((a, item) => a + (seriesPointsFromItem(item, 'day')[0]?.visits ?? 0), 0),
  };
}

/**
 * A viral burst, past what the gateway on these cores can take (DynamoDB Local answers some 50-100
 * visits/s through `/r` here): `n` visit items of one new link written straight into the table
 * (exactly as the visit handler builds them, `newVisitItem`; every visitor unique) as fast as
 * DynamoDB Local takes them, then counted by the real stream consumer. What lands on the hottest
 * items per 1,000 visits then is the consumer's batching at a high rate, the case the hot-item
 * goal is about; the runs through the gateway show it at the rate this machine reaches.
 */
async function burst(env: BenchEnvironment, n: number) {
  const { codes } = await campaignWithLinks(env, 'burst', 1);
  const code = codes[0]!;
  const { Item } = await env.table.db.send(
    new GetCommand({ TableName: env.table.name, Key: linkKey(code), ConsistentRead: true }),
  );
  const link = linkFromItem(Item ?? {});
  const first = await reserveIds(env, 'action', n);
  const at = new Date().toISOString();
  const items = Array.from(
    { length: n },
    (_, i) =>
      newVisitItem(
        link,
        {
          id: first + i,
          at,
          action_type: 'visit',
          metadata: { user_agent: `${BROWSER} visitor/burst-${i}` },
          referred_user: null,
        },
        true,
      ).item,
  );
  await env.proxy.track();
  const started = performance.now();
  await putItems(items, env.table);
  const written = performance.now();
  await waitUntil(async () => (await clicksOf(env, [code])) >= n, DRAIN_TIMEOUT_MS, 25);
  const counted = performance.now();
  await waitPipelineIdle(env);
  const tracked = await env.proxy.tracked();
  const hottest = [...tracked].sort((a, b) => writesOf(b.counts) - writesOf(a.counts))[0];
  const linkItem = tracked.find((i) => i.pk === `LINK#${code}`);
  const per1000 = (item: ItemAccesses | undefined) =>
    item ? (writesOf(item.counts) * 1000) / n : Number.NaN;
  return {
    visits: n,
    perSecond: n / ((written - started) / 1000),
    /** What the burst used (its visit items' writes and everything the stream consumer did), for the cost model. */
    usage: await capacityOf(env.table, tracked),
    /** From the first write until `total_clicks` held them all. */
    countedInMs: counted - started,
    counted: await clicksOf(env, [code]),
    linkWrites: per1000(linkItem),
    hottest: hottest && { item: label(hottest, code), writes: per1000(hottest) },
  };
}

/** The tracked items of several runs, counts summed per item. */
export function mergeTracked(runs: readonly TrafficRun[]): ItemAccesses[] {
  const byKey = new Map<string, ItemAccesses>();
  for (const item of runs.flatMap((r) => r.tracked)) {
    const key = `${item.pk}\u0000${item.sk}`;
    const entry = byKey.get(key) ?? { pk: item.pk, sk: item.sk, counts: {} };
    for (const [access, n] of Object.entries(item.counts))
      entry.counts[access] = (entry.counts[access] ?? 0) + n;
    byKey.set(key, entry);
  }
  return [...byKey.values()];
}

/** A campaign made through the API with `n` links, each of a referrer of its own. */
export async function campaignWithLinks(env: BenchEnvironment, name: string, n: number) {
  const call = env.client.call<{ id: string; referral_code: string }>;
  const { id } = await call('POST', '/api/v1/campaign', { url: 'https://example.com/hot', name });
  const codes: string[] = [];
  for (let i = 0; i < n; i++)
    codes.push(
      (await call('POST', '/api/v1/referral_link', { campaign_id: id, referrer_id: `${name}-${i}` }))
        .referral_code,
    );
  return { id, codes };
}

/** Capacity used per kind of item, and the requests it was used for. */
export interface MeasuredCapacity {
  requests: number;
  perSecond: number;
  usage: KindUsage[];
}

/** Sequential visits, each timed from its 302 until `total_clicks` and endpoint 16 include it. */
async function delays(env: BenchEnvironment, n: number) {
  const { id, codes } = await campaignWithLinks(env, 'delay', 1);
  const code = codes[0]!;
  const pollers = [benchClient(env.stack.baseUrl, env.apiKey), benchClient(env.stack.baseUrl, env.apiKey)];
  const clicks: number[] = [];
  const analytics: number[] = [];
  try {
    const seen = async (
      client: (typeof pollers)[number],
      path: string,
      value: (b: never) => number,
      i: number,
      t0: number,
    ) => {
      for (;;) {
        const res = await client.send({ method: 'GET', path });
        if (res.status === 200 && value(JSON.parse(res.body) as never) >= i) return performance.now() - t0;
        if (performance.now() - t0 > 15_000) return Number.POSITIVE_INFINITY;
        await sleep(5);
      }
    };
    for (let i = 1; i <= n; i++) {
      const res = await env.client.send({
        method: 'GET',
        path: `/r/${code}`,
        headers: { 'user-agent': `${BROWSER} visitor/delay-${i}` },
      });
      const t0 = performance.now();
      if (res.status !== 302) throw new Error(`visit for the delay: ${res.status} ${res.body.slice(0, 200)}`);
      const [c, a] = await Promise.all([
        seen(
          pollers[0]!,
          `/api/v1/referral_link?referral_code=${code}`,
          (b: { total_clicks: number }) => b.total_clicks,
          i,
          t0,
        ),
        seen(
          pollers[1]!,
          `/api/v1/analytics/${id}`,
          (b: { totals: { visits: number } }) => b.totals.visits,
          i,
          t0,
        ),
      ]);
      clicks.push(c);
      analytics.push(a);
      // The next visit after a pause, so the delay is that of a visit alone, not of a queue.
      await sleep(100);
    }
  } finally {
    for (const p of pollers) p.close();
  }
  return { clicks, analytics };
}

/** A short label of an item for the tables. */
function label(item: ItemAccesses, hotCode: string): string {
  const kind = kindOf(item.pk, item.sk);
  if (kind === 'link') return item.pk === `LINK#${hotCode}` ? 'the hot link (LINK#…)' : `link ${item.pk}`;
  if (kind === 'campaign') return 'its campaign (CAMPAIGN)';
  if (kind === 'rollup checkpoint') return `rollup checkpoint (${item.pk.slice(0, 24)}…)`;
  if (kind === 'series' || kind === 'ranking') return `${kind} ${item.sk.slice(0, 40)}`;
  return `${kind} ${item.pk.slice(0, 28)}…`;
}

export const hotlinkPart: BenchPart = {
  name: 'hotlink',
  title: '3b. One hot link: hot items, throughput against spread links, delay to the counters',
  stack: true,
  async run({ env }) {
    const hot = await campaignWithLinks(env, 'hot', 1);
    const spreadCampaign = await campaignWithLinks(env, 'spread', settings.hotlinkSpreadLinks);
    console.log(`   ${settings.hotlinkSpreadLinks + 1} links made`);
    const hotCode = hot.codes[0]!;
    // Calibration on the hot link (also the warm-up): the rate that sizes every run.
    const calibration = await drive(env, 'visit', hot.codes, settings.loadConnections * 8, false);
    console.log(`   calibration: ${calibration.accepted} visits at ${calibration.perSecond.toFixed(0)}/s`);
    const amount = Math.max(
      settings.loadConnections,
      Math.round(calibration.perSecond * settings.hotlinkSeconds),
    );
    // A warm-up run on the spread links too, not counted: the first measured run used to be the
    // slowest by far (the JITs of Node and of DynamoDB Local, and the consumer's path for many
    // links, had not run yet), which an alternated order does not cancel when the warm-up is not linear.
    const warmup = await drive(env, 'visit', spreadCampaign.codes, amount, false);
    console.log(
      `   warm-up on ${settings.hotlinkSpreadLinks} links: ${warmup.accepted} visits at ${warmup.perSecond.toFixed(0)}/s`,
    );
    const runs: TrafficRun[] = [];
    for (const kind of ['hot', 'spread', 'spread', 'hot'] as const) {
      const codes = kind === 'hot' ? hot.codes : spreadCampaign.codes;
      runs.push(await drive(env, 'visit', codes, amount));
      const r = runs.at(-1)!;
      console.log(
        `   ${kind}: ${r.accepted} visits at ${r.perSecond.toFixed(0)}/s, counted ${(r.drainMs / 1000).toFixed(1)} s after the run`,
      );
    }
    const hotRuns = runs.filter((r) => r.links === 1);
    const spreadRuns = runs.filter((r) => r.links > 1);
    const sum = (rs: TrafficRun[], f: (r: TrafficRun) => number) => rs.reduce((a, r) => a + f(r), 0);
    const hotVisits = sum(hotRuns, (r) => r.accepted);
    const spreadVisits = sum(spreadRuns, (r) => r.accepted);
    const hotRate = sum(hotRuns, (r) => r.accepted) / (sum(hotRuns, (r) => r.durationMs) / 1000);
    const spreadRate = sum(spreadRuns, (r) => r.accepted) / (sum(spreadRuns, (r) => r.durationMs) / 1000);
    const rateGap = hotRate / spreadRate - 1;
    const exact = runs.every((r) => r.counted === r.accepted - r.bots);

    // Hot items: per 1,000 visits of the hot runs.
    const hotItems = mergeTracked(hotRuns);
    const per1000 = (n: number, visits = hotVisits) => (n * 1000) / visits;
    const byWrites = (items: ItemAccesses[]) =>
      [...items].sort((a, b) => writesOf(b.counts) - writesOf(a.counts));
    const linkItem = hotItems.find((i) => i.pk === `LINK#${hotCode}`);
    const hottest = byWrites(hotItems)[0];
    const hottestOf = (items: ItemAccesses[], kind: string) =>
      byWrites(items.filter((i) => kindOf(i.pk, i.sk) === kind))[0];
    const campaignItem = hotItems.find((i) => kindOf(i.pk, i.sk) === 'campaign' && i.pk.includes(hot.id));
    const rows = [
      linkItem,
      hottestOf(hotItems, 'series'),
      hottestOf(hotItems, 'ranking'),
      hottestOf(hotItems, 'rollup checkpoint'),
      campaignItem,
    ];
    if (hottest && !rows.includes(hottest)) rows.unshift(hottest);
    const rollupTransactions = (items: ItemAccesses[]) =>
      items
        .filter((i) => kindOf(i.pk, i.sk) === 'rollup checkpoint')
        .reduce(
          (a, i) =>
            a +
            Object.entries(i.counts)
              .filter(([access]) => access.startsWith('TransactWriteItems:Update'))
              .reduce((b, [, n]) => b + n, 0),
          0,
        );
    const spreadItems = mergeTracked(spreadRuns);
    const spreadHottest = byWrites(spreadItems).slice(0, 3);
    const hottestWrites = hottest ? per1000(writesOf(hottest.counts)) : Number.NaN;
    const linkWrites = linkItem ? per1000(writesOf(linkItem.counts)) : Number.NaN;

    const viral = await burst(env, quick ? 3_000 : 10_000);
    console.log(
      `   burst: ${viral.visits} visits written at ${viral.perSecond.toFixed(0)}/s, counted in ${(viral.countedInMs / 1000).toFixed(1)} s`,
    );
    const delay = await delays(env, settings.delaySamples);
    console.log(`   delay: ${delay.clicks.length} visits one at a time`);
    const clickDelay = spread(delay.clicks);
    const analyticsDelay = spread(delay.analytics);

    const capacity = {
      hot: { requests: hotVisits, perSecond: hotRate, usage: await capacityOf(env.table, hotItems) },
      burst: { requests: viral.visits, perSecond: viral.perSecond, usage: viral.usage },
      spread: {
        requests: spreadVisits,
        perSecond: spreadRate,
        usage: await capacityOf(env.table, spreadItems),
      },
    } satisfies Record<string, MeasuredCapacity>;

    const runRow = (r: TrafficRun, i: number) => [
      `${i + 1}. ${r.links === 1 ? 'one link' : `${r.links} links`}`,
      r.accepted + r.other,
      r.perSecond.toFixed(0),
      `${r.latency.p50} / ${r.latency.p99}`,
      r.errors + r.other,
      `${(r.drainMs / 1000).toFixed(1)} s`,
      `${r.counted} / ${r.accepted}${r.bots > 0 ? ` − ${r.bots} bots` : ''}${r.counted === r.accepted - r.bots ? '' : ' (OFF)'}`,
    ];
    const itemRow = (item: ItemAccesses | undefined, visits = hotVisits) =>
      item
        ? [
            label(item, hotCode),
            per1000(writesOf(item.counts), visits).toFixed(1),
            per1000(checksOf(item.counts), visits).toFixed(1),
            per1000(readsOf(item.counts), visits).toFixed(1),
            Object.entries(item.counts)
              .map(([k, n]) => `${n} ${k}`)
              .join(', '),
          ]
        : ['(not touched)', '', '', '', ''];
    return {
      body: [
        `Visits through \`/r/{code}\` of the local stack, ${settings.loadConnections} connections of autocannon in a child process, every request a new visitor (its user agent carries an id of its own, so every visit is unique, as on a link that goes viral). A calibration run on the hot link (${calibration.accepted} visits at ${calibration.perSecond.toFixed(0)}/s) sizes the runs, and a warm-up run on the spread links (${warmup.accepted} visits at ${warmup.perSecond.toFixed(0)}/s, not counted) runs the consumer's many-links path before any measured run: ${amount} visits each, alternated one link, ${settings.hotlinkSpreadLinks} links, ${settings.hotlinkSpreadLinks} links, one link (each link of the spread campaign has a referrer of its own, like the hot one). After each run the bench waits until the links' \`total_clicks\` hold every 302 (the rollup consumer of the table stream counts them) and the pipeline is idle. Everything runs on the same cores: the consumer's transactions compete with the visits for DynamoDB Local.`,
        [
          [
            'run',
            'visits sent',
            'visits/s',
            'p50 / p99 ms',
            'errors or other statuses',
            'counted after the run in',
            'total_clicks rose / 302s (− those isbot took for bots)',
          ],
          ...runs.map(runRow),
        ],
        `**Hot items.** Every item the stack read or wrote by key during the two one-link runs, until the pipeline was idle (the counting proxy's item tracking: \`UpdateItem\`, \`PutItem\`, items of \`TransactWriteItems\` and batches), per 1,000 of their ${hotVisits} visits. ${rollupTransactions(hotItems)} rollup transactions counted them (${per1000(rollupTransactions(hotItems)).toFixed(1)} per 1,000 visits); the consumer sums a stream batch per item, so the link item is written once per batch, not once per visit.`,
        [
          ['item', 'writes per 1,000 visits', 'transaction checks', 'reads', 'accesses (all)'],
          ...rows.map((i) => itemRow(i)),
        ],
        `Spread over ${settings.hotlinkSpreadLinks} links (${spreadVisits} visits, ${rollupTransactions(spreadItems)} rollup transactions: ${per1000(rollupTransactions(spreadItems), spreadVisits).toFixed(1)} per 1,000 visits), the hottest items per 1,000 visits:`,
        [
          ['item', 'writes per 1,000 visits', 'transaction checks', 'reads', 'accesses (all)'],
          ...spreadHottest.map((i) => itemRow(i, spreadVisits)),
        ],
        [
          ['measure', 'value', 'goal', 'met'],
          [
            'writes on the hot link’s item per 1,000 visits',
            linkWrites.toFixed(1),
            `≤ ${HOT_ITEM_GOAL}`,
            linkWrites <= HOT_ITEM_GOAL ? 'yes' : 'NO',
          ],
          [
            `writes on the hottest item per 1,000 visits (${hottest ? kindOf(hottest.pk, hottest.sk) : '—'})`,
            hottestWrites.toFixed(1),
            `≤ ${HOT_ITEM_GOAL}`,
            hottestWrites <= HOT_ITEM_GOAL ? 'yes' : 'NO',
          ],
          [
            `a burst of ${viral.visits.toLocaleString('en-US')} visits on one link, written straight into the table at ${viral.perSecond.toFixed(0)}/s (counted ${viral.counted === viral.visits ? 'exactly' : `${viral.counted}: OFF`}, in ${(viral.countedInMs / 1000).toFixed(1)} s from the first write): writes per 1,000 visits on the link item / on the hottest item (${viral.hottest?.item ?? '—'})`,
            `${viral.linkWrites.toFixed(1)} / ${viral.hottest?.writes.toFixed(1) ?? 'n/a'}`,
            `≤ ${HOT_ITEM_GOAL}`,
            (viral.hottest?.writes ?? Number.NaN) <= HOT_ITEM_GOAL ? 'yes' : 'NO',
          ],
          [
            'visits/s: one link / spread',
            `${hotRate.toFixed(0)} / ${spreadRate.toFixed(0)} (${rateGap >= 0 ? '+' : ''}${(rateGap * 100).toFixed(0)} %)`,
            `within ${SAME_RATE_GOAL * 100} %`,
            Math.abs(rateGap) <= SAME_RATE_GOAL ? 'yes' : 'NO',
          ],
          [
            `302 → total_clicks, p50 / p99 (${delay.clicks.length} visits)`,
            `${ms(clickDelay.p50)} / ${ms(clickDelay.p99)} ms`,
            `p99 ≤ ${DELAY_GOAL_MS} ms`,
            clickDelay.p99 <= DELAY_GOAL_MS ? 'yes' : 'NO',
          ],
          [
            `302 → analytics (endpoint 16 totals), p50 / p99`,
            `${ms(analyticsDelay.p50)} / ${ms(analyticsDelay.p99)} ms`,
            `p99 ≤ ${DELAY_GOAL_MS} ms`,
            analyticsDelay.p99 <= DELAY_GOAL_MS ? 'yes' : 'NO',
          ],
        ],
        `Delay: ${delay.clicks.length} visits one at a time (100 ms apart once the last was seen), each followed from its 302 by two clients polling the API (the link by code; the campaign's analytics, default range) until they include it. The rollups have a stream reader of their own whose mapping gathers records for up to 1 s (as in AWS: a rollup write then sums a second's visits), and the local stream poller reads the stream every 150 ms when idle, so a lone visit shows about 1.0–1.2 s after its 302.`,
      ],
      summary: `Hot link: ${linkWrites.toFixed(1)} writes on the link item per 1,000 visits (hottest item ${hottestWrites.toFixed(1)}) at ${hotRate.toFixed(0)} visits/s through the gateway; ${viral.linkWrites.toFixed(1)} (hottest ${viral.hottest?.writes.toFixed(1)}) in a burst at ${viral.perSecond.toFixed(0)} visits/s; ${hotRate.toFixed(0)} visits/s on one link vs ${spreadRate.toFixed(0)} spread (${(rateGap * 100).toFixed(0)} %); 302 → total_clicks p99 ${ms(clickDelay.p99)} ms, → analytics p99 ${ms(analyticsDelay.p99)} ms; counters ${exact ? 'exact' : 'OFF'}.`,
      findings: [
        !(hottestWrites <= HOT_ITEM_GOAL) &&
          `Hot link: the hottest item (${hottest ? label(hottest, hotCode) : '—'}) took ${hottestWrites.toFixed(1)} writes per 1,000 visits (goal ≤ ${HOT_ITEM_GOAL}); the link item ${linkWrites.toFixed(1)}, at ${hotRate.toFixed(0)} visits/s.`,
        !((viral.hottest?.writes ?? Number.NaN) <= HOT_ITEM_GOAL) &&
          `Hot link: in a burst of ${viral.visits} visits at ${viral.perSecond.toFixed(0)}/s, the hottest item (${viral.hottest?.item}) took ${viral.hottest?.writes.toFixed(1)} writes per 1,000 visits (goal ≤ ${HOT_ITEM_GOAL}).`,
        viral.counted !== viral.visits &&
          `Hot link: the burst's total_clicks is ${viral.counted}, not ${viral.visits}.`,
        !(Math.abs(rateGap) <= SAME_RATE_GOAL) &&
          `Hot link: ${hotRate.toFixed(0)} visits/s on one link against ${spreadRate.toFixed(0)} spread over ${settings.hotlinkSpreadLinks} links (${(rateGap * 100).toFixed(0)} %, goal within ${SAME_RATE_GOAL * 100} %).`,
        !(clickDelay.p99 <= DELAY_GOAL_MS) &&
          `Hot link: 302 → total_clicks p99 ${ms(clickDelay.p99)} ms (goal ≤ ${DELAY_GOAL_MS} ms).`,
        !(analyticsDelay.p99 <= DELAY_GOAL_MS) &&
          `Hot link: 302 → analytics p99 ${ms(analyticsDelay.p99)} ms (goal ≤ ${DELAY_GOAL_MS} ms).`,
        !exact &&
          `Hot link: total_clicks did not rise by the 302s (less bot visits) within ${DRAIN_TIMEOUT_MS / 1000} s of a run: ${runs
            .map(
              (r) =>
                `${r.counted}/${r.accepted - r.bots}${r.where ? ` (campaign so far: total_clicks ${r.where.totalClicks}, visit items ${r.where.visitItems}, visits in analytics ${r.where.analyticsVisits})` : ''}`,
            )
            .join(', ')}.`,
      ],
      data: {
        amount,
        runs: runs.map(({ tracked: _, ...r }) => r),
        hotRate,
        spreadRate,
        linkWritesPer1000: linkWrites,
        burst: viral,
        hottest: hottest && { item: label(hottest, hotCode), writesPer1000: hottestWrites },
        rollupTransactionsPer1000: {
          hot: per1000(rollupTransactions(hotItems)),
          spread: per1000(rollupTransactions(spreadItems), spreadVisits),
        },
        delays: { clicks: clickDelay, analytics: analyticsDelay },
        capacity,
      },
    };
  },
};
