/** Part 3b: one hot link (issue 14) against spread links, and a burst at a viral rate, every item counted. */
import { linkKey } from '../../lib/db/entities/link.ts';
import { newVisitItem } from '../../lib/db/entities/visit.ts';
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { getItems, putItems, visitItems } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import { capacityOf, checksOf, kindOf, mergeTracked, readsOf, writesOf } from './capacity.ts';
import { type BenchEnvironment, reserveIds, waitPipelineIdle } from './environment.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { log, sec, yes } from './stats.ts';
import { BROWSER, campaignWithLinks, runLoad, storedLink } from './traffic.ts';

const [HOT_ITEM_GOAL, SAME_RATE_GOAL, CONNECTIONS] = [20, 0.1, 32];
const DRAIN_TIMEOUT_MS = 180_000;
/** The links' stored `total_clicks`, summed (read straight from DynamoDB Local, not counted). */
const clicksOf = async (env: BenchEnvironment, codes: readonly string[]) =>
  (await getItems(codes.map(linkKey), env.table)).reduce((a, item) => a + Number(item?.total_clicks ?? 0), 0);
const byWrites = (all: ItemAccesses[]) => [...all].sort((a, b) => writesOf(b.counts) - writesOf(a.counts));
type Campaign = Awaited<ReturnType<typeof campaignWithLinks>>;
/** `amount` unique visits, then a wait until `total_clicks` holds them; with `track`, the items touched. */
async function drive(env: BenchEnvironment, { id, codes }: Campaign, amount: number, track = true) {
  const before = await clicksOf(env, codes);
  const bots = async () => (await visitItems(env.tenant, id, env.table, 'B#')).length;
  const botsBefore = await bots();
  if (track) await env.proxy.track();
  const [url, targets] = [`${env.stack.baseUrl}/r/${codes[0]}`, codes.map((code) => `/r/${code}`)];
  const headers = { 'user-agent': `${BROWSER} visitor/[<id>]` };
  const job = { url, targets, headers, idReplacement: true, connections: CONNECTIONS };
  const result = await runLoad({ ...job, amount });
  const ended = performance.now();
  const accepted = result.statuses[302] ?? 0;
  // A 302 is a bot visit (`isbot` may see one in an autocannon id) or one total_clicks counts.
  const botVisits = (await bots()) - botsBefore;
  const counted = () => clicksOf(env, codes).then((c) => c - before);
  await waitUntil(async () => (await counted()) >= accepted - botVisits, DRAIN_TIMEOUT_MS, 25);
  const drainMs = performance.now() - ended;
  await waitPipelineIdle(env);
  const { errors, durationMs, latency } = result;
  const other = Object.values(result.statuses).reduce((a, n) => a + n, 0) - accepted;
  return {
    ...{ links: codes.length, accepted, other, errors, durationMs, latency, drainMs },
    ...{ perSecond: accepted / (durationMs / 1000), counted: await counted(), bots: botVisits },
    tracked: track ? await env.proxy.tracked() : [],
  };
}
type TrafficRun = Awaited<ReturnType<typeof drive>>;
/** A viral burst past what the gateway here takes: `n` visit items written into the table, then counted. */
async function burst(env: BenchEnvironment, n: number) {
  const code = (await campaignWithLinks(env, 'burst', 1)).codes[0]!;
  const link = await storedLink(env, code);
  const [first, at] = [await reserveIds(env, 'action', n), new Date().toISOString()];
  const action = { at, action_type: 'visit', referred_user: null };
  const ua = (i: number) => `${BROWSER} visitor/burst-${i}`;
  const visit = (i: number) => ({ ...action, id: first + i, metadata: { user_agent: ua(i) } });
  const items = Array.from({ length: n }, (_, i) => newVisitItem(link, visit(i), true).item);
  await env.proxy.track();
  const started = performance.now();
  await putItems(items, env.table);
  const written = performance.now();
  await waitUntil(async () => (await clicksOf(env, [code])) >= n, DRAIN_TIMEOUT_MS, 25);
  const counted = performance.now();
  await waitPipelineIdle(env);
  const tracked = await env.proxy.tracked();
  const hottest = byWrites(tracked)[0];
  const per1000 = (item?: ItemAccesses) => (item ? (writesOf(item.counts) * 1000) / n : Number.NaN);
  return {
    ...{ requests: n, perSecond: n / ((written - started) / 1000) },
    /** What the burst used (its visit items' writes and all the stream consumer did), for the cost model. */
    usage: await capacityOf(env.table, tracked),
    /** From the first write until `total_clicks` held them all. */
    countedInMs: counted - started,
    counted: await clicksOf(env, [code]),
    linkWrites: per1000(tracked.find((i) => i.pk === `LINK#${code}`)),
    hottest: hottest && { item: label(hottest, code), writes: per1000(hottest) },
  };
}
export type Burst = Awaited<ReturnType<typeof burst>>;
function label(item: ItemAccesses, hotCode: string): string {
  const kind = kindOf(item.pk, item.sk);
  if (kind === 'link') return item.pk === `LINK#${hotCode}` ? 'the hot link (LINK#…)' : `link ${item.pk}`;
  if (kind === 'campaign') return 'its campaign (CAMPAIGN)';
  return item.pk.startsWith('T#') ? `${kind} ${item.sk.slice(0, 40)}` : `${kind} ${item.pk.slice(0, 28)}…`;
}

export const hotlinkPart: BenchPart = {
  ...{ name: 'hotlink', title: '3b. One hot link: hot items, and throughput against spread links' },
  async run({ env }) {
    const spreadLinks = settings.hotlinkLinks;
    const hot = await campaignWithLinks(env, 'hot', 1);
    const spreadCampaign = await campaignWithLinks(env, 'spread', spreadLinks);
    const hotCode = hot.codes[0]!;
    // Calibration on the hot link (also the warm-up): the rate that sizes every run.
    const calibration = await drive(env, hot, CONNECTIONS * 8, false);
    const amount = Math.max(CONNECTIONS, Math.round(calibration.perSecond * settings.hotlinkSeconds));
    // A warm-up on the spread links too: the first measured run was the slowest by far (the JITs,
    // the consumer's many-links path), which alternating the order does not cancel.
    const warmup = await drive(env, spreadCampaign, amount, false);
    const runs: TrafficRun[] = [];
    for (const kind of ['hot', 'spread', 'spread', 'hot'] as const) {
      const r = await drive(env, kind === 'hot' ? hot : spreadCampaign, amount);
      runs.push(r);
      log(`${kind}: ${r.accepted} at ${r.perSecond.toFixed(0)}/s, counted ${sec(r.drainMs)} s after`);
    }
    const [hotRuns, spreadRuns] = [runs.filter((r) => r.links === 1), runs.filter((r) => r.links > 1)];
    const sum = (rs: TrafficRun[], f: (r: TrafficRun) => number) => rs.reduce((a, r) => a + f(r), 0);
    const rate = (rs: TrafficRun[]) => sum(rs, (r) => r.accepted) / (sum(rs, (r) => r.durationMs) / 1000);
    const [hotVisits, spreadVisits] = [sum(hotRuns, (r) => r.accepted), sum(spreadRuns, (r) => r.accepted)];
    const [hotRate, spreadRate] = [rate(hotRuns), rate(spreadRuns)];
    const rateGap = hotRate / spreadRate - 1;
    const exact = runs.every((r) => r.counted === r.accepted - r.bots);

    const hotItems = mergeTracked(hotRuns.flatMap((r) => r.tracked));
    const spreadItems = mergeTracked(spreadRuns.flatMap((r) => r.tracked));
    const per1000 = (n: number, visits = hotVisits) => (n * 1000) / visits;
    const linkItem = hotItems.find((i) => i.pk === `LINK#${hotCode}`);
    const hottest = byWrites(hotItems)[0];
    const hottestOf = (kind: string) => byWrites(hotItems.filter((i) => kindOf(i.pk, i.sk) === kind))[0];
    const campaignItem = hotItems.find((i) => kindOf(i.pk, i.sk) === 'campaign' && i.pk.includes(hot.id));
    const kinds = ['series', 'referrer totals', 'ranking board'].map(hottestOf);
    const hotRows = [...new Set([hottest, linkItem, ...kinds, campaignItem])].filter((i) => i !== undefined);
    const hottestWrites = hottest ? per1000(writesOf(hottest.counts)) : Number.NaN;
    const linkWrites = linkItem ? per1000(writesOf(linkItem.counts)) : Number.NaN;

    const viral = await burst(env, settings.burstVisits);
    log(
      `burst: ${viral.requests} at ${viral.perSecond.toFixed(0)}/s, counted in ${sec(viral.countedInMs)} s`,
    );

    const itemRow = (visits: number) => (i: ItemAccesses) => {
      const per = [writesOf, checksOf, readsOf].map((of) => per1000(of(i.counts), visits).toFixed(1));
      const all = Object.entries(i.counts).map(([k, n]) => `${n} ${k}`);
      return `${label(i, hotCode)} | ${per.join(' | ')} | ${all.join(', ')}`;
    };
    const itemHead = 'item | writes per 1,000 visits | transaction checks | reads | accesses (all)';
    const itemRows = (items: ItemAccesses[], visits: number) => rows(itemHead, items.map(itemRow(visits)));
    const counted = (r: TrafficRun) =>
      `${r.counted} / ${r.accepted}${r.bots > 0 ? ` − ${r.bots} bots` : ''}${r.counted === r.accepted - r.bots ? '' : ' (OFF)'}`;
    const runRow = (r: TrafficRun, i: number) =>
      `${i + 1}. ${r.links === 1 ? 'one link' : `${r.links} links`} | ${r.accepted + r.other} | ${r.perSecond.toFixed(0)} | ${r.latency.p50} / ${r.latency.p99} | ${r.errors + r.other} | ${sec(r.drainMs)} s | ${counted(r)}`;
    const gap = `${rateGap >= 0 ? '+' : ''}${(rateGap * 100).toFixed(0)} %`;
    const goals = checks(`
writes on the hot link’s item per 1,000 visits | ${linkWrites.toFixed(1)} | ≤ ${HOT_ITEM_GOAL} | ${linkWrites <= HOT_ITEM_GOAL}
writes on the hottest item per 1,000 visits (${hottest ? label(hottest, hotCode) : '—'}) | ${hottestWrites.toFixed(1)} | ≤ ${HOT_ITEM_GOAL} | ${hottestWrites <= HOT_ITEM_GOAL}
a burst of ${viral.requests} visits on one link written into the table at ${viral.perSecond.toFixed(0)}/s (counted ${viral.counted === viral.requests ? 'exactly' : `${viral.counted}: OFF`}, in ${sec(viral.countedInMs)} s from the first write): writes per 1,000 visits on the link item / on the hottest item (${viral.hottest?.item ?? '—'}) | ${viral.linkWrites.toFixed(1)} / ${viral.hottest?.writes.toFixed(1) ?? 'n/a'} | ≤ ${HOT_ITEM_GOAL} | ${(viral.hottest?.writes ?? Number.NaN) <= HOT_ITEM_GOAL && viral.counted === viral.requests}
visits/s: one link / spread over ${spreadLinks} links | ${hotRate.toFixed(0)} / ${spreadRate.toFixed(0)} (${gap}) | within ${SAME_RATE_GOAL * 100} % | ${Math.abs(rateGap) <= SAME_RATE_GOAL}
total_clicks rose by every 302 (less bot visits) of every run | ${runs.map((r) => `${r.counted}/${r.accepted - r.bots}`).join(', ')} | exact | ${exact}`);
    return {
      body: [
        `Visits through \`/r/{code}\` of the local stack, ${CONNECTIONS} connections of autocannon in a child process, every request a new visitor (its user agent carries an id of its own, so every visit is unique, as on a link that goes viral). A calibration run on the hot link (${calibration.accepted} visits at ${calibration.perSecond.toFixed(0)}/s) sizes the runs, and a warm-up run on the spread links (${warmup.accepted} visits at ${warmup.perSecond.toFixed(0)}/s, not counted) runs the consumer's many-links path before any measured run: ${amount} visits each, alternated one link, ${spreadLinks} links, ${spreadLinks} links, one link (each link of its own referrer). After each run the bench waits until the links' \`total_clicks\` hold every 302 (the rollup consumer of the table stream counts them) and the pipeline is idle. Everything runs on the same cores: the consumer's writes compete with the visits for DynamoDB Local.`,
        rows(`
run | visits sent | visits/s | p50 / p99 ms | errors or other statuses | counted after the run in | total_clicks rose / 302s (− those isbot took for bots)
${runs.map(runRow).join('\n')}`),
        `**Hot items.** Every item the stack read or wrote by key during the two one-link runs, until the pipeline was idle (the counting proxy's item tracking: \`UpdateItem\`, \`PutItem\`, items of \`TransactWriteItems\` and batches), per 1,000 of their ${hotVisits} visits. The consumer sums a stream batch per item, so the link item is written once per batch, not once per visit.`,
        itemRows(hotRows, hotVisits),
        `Spread over ${spreadLinks} links (${spreadVisits} visits), the hottest items per 1,000 visits:`,
        itemRows(byWrites(spreadItems).slice(0, 3), spreadVisits),
        [['measure', 'value', 'goal', 'met'], ...goals.map((c) => [c.what, c.value, c.goal, yes(c.met)])],
      ],
      summary: `Hot link: ${linkWrites.toFixed(1)} writes on the link item per 1,000 visits (hottest item ${hottestWrites.toFixed(1)}) at ${hotRate.toFixed(0)} visits/s through the gateway; ${viral.linkWrites.toFixed(1)} (hottest ${viral.hottest?.writes.toFixed(1)}) in a burst at ${viral.perSecond.toFixed(0)} visits/s; ${hotRate.toFixed(0)} visits/s on one link vs ${spreadRate.toFixed(0)} spread (${(rateGap * 100).toFixed(0)} %); counters ${exact ? 'exact' : 'OFF'}.`,
      checks: goals,
      data: { burst: viral },
    };
  },
};
