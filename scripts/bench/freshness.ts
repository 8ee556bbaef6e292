/** Part 3c: freshness under load (issue 27), from a visit's 302 until the API counts it. */
import { formatTimestamp } from '../../lib/domain/time.ts';
import { waitUntil } from '../../tools/wait.ts';
import { type BenchEnvironment, benchClient } from './environment.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { log, ms, sleep, spread } from './stats.ts';
import { type Answer, type BenchLink, campaignOfReferrers, paced, visitOf, visitors } from './traffic.ts';

const [FAST_MS, SLOW_MS, TRACKED, SERIES_TRACKED, TOP_LIMIT] = [200, 1_000, 20, 5, 100];
/** Visits each tracked link gets before a spread run, so it stands in both top lists (ties go by earliest reach). */
const HEAD_START = 3;
const TAIL_MS = 90_000;
const FIGURES = [
  ['clicks', "the link's total_clicks (GET /referral_link?id=)", 2_000],
  ['campaign', "the campaign's series (granularity=hour, totals)", 2_000],
  ['linkSeries', "the link's series (referral_link_id=)", 60_000],
  ['referrerSeries', "the referrer's series (referrer_id=)", 60_000],
  ['topLinks', `top ${TOP_LIMIT} links by visits`, 60_000],
  ['topReferrers', `top ${TOP_LIMIT} referrers by visits`, 60_000],
] as const;
type Row = (typeof FIGURES)[number];
type Figure = Row[0];
/** Delays of answered visits from `from` on: visit k is seen at the first later reading of k + 1 or more. */
function delays(answers: readonly number[], readings: ReadonlyArray<[number, number]>, from: number) {
  const out: number[] = [];
  let r = 0;
  for (let k = from; k < answers.length; k++) {
    while (r < readings.length && (readings[r]![0] < answers[k]! || readings[r]![1] < k + 1)) r++;
    out.push(r < readings.length ? readings[r]![0] - answers[k]! : Number.POSITIVE_INFINITY);
  }
  return out;
}

type Campaign = { id: string; links: BenchLink[] };
/** One run of `visits` at `rate` a second over the links round robin, with the polls that follow them. */
async function run(env: BenchEnvironment, name: string, campaign: Campaign, rate: number, visits: number) {
  const { id: campaignId, links } = campaign;
  // Keys: a tracked link's index, or `all` for the campaign; which keys each figure follows.
  const tracked = links.slice(0, TRACKED).map((_, j) => String(j));
  const keysOf = (f: Figure) =>
    f === 'campaign' ? ['all'] : f.endsWith('Series') ? tracked.slice(0, SERIES_TRACKED) : tracked;
  const answers = new Map([...links.map((_, j) => String(j)), 'all'].map((key) => [key, [] as number[]]));
  const readings = new Map<string, Array<[number, number]>>();
  const lags = (f: Figure, key: string) =>
    (readings.get(`${f}|${key}`)?.at(-1)?.[1] ?? 0) < answers.get(key)!.length;
  const poller = benchClient(env.stack.baseUrl, env.apiKey, 8);
  const hourAgo = formatTimestamp(new Date(Date.now() - 3_600_000));
  const series = `/api/v1/analytics/${campaignId}?granularity=hour&from=${hourAgo}`;
  let polls = 0;
  type Value = (body: never, key: string) => number;
  const read = async (f: Figure, keys: string[], path: string, value: Value) => {
    polls++;
    const res = await poller.send({ method: 'GET', path }).catch(() => undefined);
    const at = performance.now();
    if (res?.status !== 200) return;
    for (const key of keys) {
      if (!readings.has(`${f}|${key}`)) readings.set(`${f}|${key}`, []);
      readings.get(`${f}|${key}`)!.push([at, value(JSON.parse(res.body) as never, key)]);
    }
  };
  type Top = Array<{ referral_link_id?: number; referrer_id?: string; value: number }>;
  const totals = (b: { totals: { visits: number } }) => b.totals.visits;
  const link = (key: string) => links[Number(key)]!;
  const ifLags = (f: Figure, path: (l: BenchLink) => string, value: (body: never) => number) =>
    keysOf(f).flatMap((key) => (lags(f, key) ? [read(f, [key], path(link(key)), value)] : []));
  const top = (f: Figure, by: string, has: (e: Top[number], l: BenchLink) => boolean) => {
    const path = `/api/v1/analytics/${campaignId}/top?metric=visits&by=${by}&limit=${TOP_LIMIT}`;
    return read(f, tracked, path, (b: Top, key) => b.find((e) => has(e, link(key)))?.value ?? 0);
  };
  const clicks = (b: { total_clicks: number }) => b.total_clicks;
  const fast = () => [
    read('campaign', ['all'], series, totals),
    ...ifLags('clicks', (l) => `/api/v1/referral_link?id=${l.id}`, clicks),
  ];
  const slow = () => [
    top('topLinks', 'referral_link', (e, l) => e.referral_link_id === l.id),
    top('topReferrers', 'referrer', (e, l) => e.referrer_id === l.referrer),
    ...ifLags('linkSeries', (l) => `${series}&referral_link_id=${l.id}`, totals),
    ...ifLags('referrerSeries', (l) => `${series}&referrer_id=${encodeURIComponent(l.referrer!)}`, totals),
  ];
  let stopped = false;
  const loop = async (every: number, tick: () => Array<Promise<void>>) => {
    for (let t = performance.now(); !stopped; t = performance.now()) {
      await Promise.all(tick());
      await sleep(every - (performance.now() - t));
    }
  };
  const agent = visitors();
  const visit = (j: number, i: number) => visitOf(links[j]!.code, agent(i));
  const answered = (j: number, status: number, at: number) => {
    if (status === 302) for (const key of [String(j), 'all']) answers.get(key)!.push(at);
  };
  const pollers = [loop(FAST_MS, fast), loop(SLOW_MS, slow)];
  const started = performance.now();
  try {
    // More links than a top list holds: the tracked ones get a head start, not measured.
    const ahead =
      links.length > TOP_LIMIT ? tracked.flatMap((key) => Array<number>(HEAD_START).fill(Number(key))) : [];
    const head = (i: number) => visit(ahead[i]!, -1 - i);
    await paced(env, ahead.length, rate, head, (a) => answered(ahead[a.i]!, a.status, a.at));
    const from = new Map([...answers].map(([key, a]) => [key, a.length]));
    // Round robin: every link gets its visit once a round, so no untracked link overtakes a tracked one.
    const j = (i: number) => i % links.length;
    const onAnswer = (a: Answer) => answered(j(a.i), a.status, a.at);
    const load = await paced(env, visits, rate, (i) => visit(j(i), i), onAnswer);
    await waitUntil(() => FIGURES.every(([f]) => keysOf(f).every((key) => !lags(f, key))), TAIL_MS, 200);
    const seconds = (performance.now() - started) / 1000;
    const of = (f: Figure, key: string) =>
      delays(answers.get(key)!, readings.get(`${f}|${key}`) ?? [], from.get(key)!);
    const byFigure = Object.fromEntries(FIGURES.map(([f]) => [f, keysOf(f).flatMap((k) => of(f, k))]));
    const [delaysOf, pollsPerSecond] = [byFigure as Record<Figure, number[]>, polls / seconds];
    return { name, links: links.length, rate, visits, load, pollsPerSecond, delays: delaysOf };
  } finally {
    stopped = true;
    await Promise.all(pollers);
    poller.close();
  }
}

type Run = Awaited<ReturnType<typeof run>>;

export const freshnessPart: BenchPart = {
  name: 'freshness',
  title: '3c. Freshness under load: from the 302 to the counters, the series and the top lists',
  async run({ env }) {
    const { freshnessRate: rate, freshnessSeconds: seconds, freshnessLinks, trickleVisits } = settings;
    const runs: Run[] = [];
    for (const [name, links, r, visits] of [
      ['one a second, one link', 1, 1, trickleVisits],
      [`${rate}/s spread over ${freshnessLinks} links`, freshnessLinks, rate, rate * seconds],
      [`${rate}/s on one link`, 1, rate, rate * seconds],
    ] as const) {
      const campaign = await campaignOfReferrers(env, `fresh${runs.length}`, links);
      runs.push(await run(env, name, campaign, r, visits));
      log(`${name}: ${runs.at(-1)!.load.statuses[302] ?? 0} visits`);
    }
    const cell = (d: number[]) => {
      const unseen = d.filter((x) => x === Infinity).length;
      return `${ms(spread(d).p50)} / ${ms(spread(d).p99)} ms (${d.length}${unseen ? `, ${unseen} unseen` : ''})`;
    };
    const p99 = (r: Run, f: Figure) => spread(r.delays[f]).p99;
    const answered = (r: Run) => r.load.statuses[302] ?? 0;
    const within = (goal: number) => `≤ ${goal / 1000} s`;
    const delaysRow = ([f, what, goal]: Row) => [what, within(goal), ...runs.map((r) => cell(r.delays[f]))];
    const runRow = (r: Run) =>
      `${r.name} | ${answered(r)} / ${r.visits} | ${(answered(r) / r.load.seconds).toFixed(1)} | ${ms(r.load.latency.p50)} / ${ms(r.load.latency.p99)} | ${r.pollsPerSecond.toFixed(1)}`;
    const check = (r: Run, [f, what, goal]: Row) =>
      `${r.name}: 302 → ${what}, p99 | ${ms(p99(r, f))} ms | ${within(goal)} | ${p99(r, f) <= goal}`;
    const unanswered = (r: Run) =>
      `Freshness: ${r.name}: ${r.visits - answered(r)} of ${r.visits} visits not answered 302 (${JSON.stringify(r.load.statuses)}).`;
    return {
      body: [
        `Visits through \`/r/{code}\`, open loop (visit i sent at i ÷ rate s whatever the answers, at most 16 in flight), each from a visitor of its own, in three runs, each on a campaign of its own: one visit a second on one link (each visit alone); ${rate} visits/s for ${seconds} s spread round robin over ${freshnessLinks} links, each of its own referrer; ${rate} visits/s for ${seconds} s on one link. For every visit of ${TRACKED} tracked links (the one link; in the spread run the first ${TRACKED}, which get ${HEAD_START} visits each before it so that they stand in both top ${TOP_LIMIT} lists), the delay from its 302 to the first reading through the API that counts it (a link's k-th answered visit once the figure is k). Read every ${FAST_MS} ms: the campaign's hourly series (every visit of the run is a sample), and a link's \`total_clicks\` while it lags its answered visits; every ${SLOW_MS} ms: both top lists, and the series of ${SERIES_TRACKED} tracked links and of their referrers while they lag. The bench waits up to ${TAIL_MS / 1000} s after the last visit for the slow figures; a visit never seen is an unseen sample (an infinite delay). Cells: p50 / p99 (samples). Goals (contract): \`total_clicks\` and the campaign's series p99 ≤ 2 s; the link's and the referrer's series and the top lists p99 ≤ 60 s.`,
        [['302 →', 'goal (p99)', ...runs.map((r) => r.name)], ...FIGURES.map(delaysRow)],
        rows(`
run | visits answered 302 / sent | visits/s | answer after its due time p50 / p99 ms | the pollers' requests/s
${runs.map(runRow).join('\n')}`),
      ],
      summary: `Freshness, p99: ${runs.map((r) => `${r.name}: 302 → total_clicks ${ms(p99(r, 'clicks'))} ms, → campaign series ${ms(p99(r, 'campaign'))} ms, → link series ${ms(p99(r, 'linkSeries'))} ms, → top links ${ms(p99(r, 'topLinks'))} ms`).join('; ')}.`,
      checks: checks(runs.flatMap((r) => FIGURES.map((x) => check(r, x))).join('\n')),
      findings: runs.map((r) => answered(r) < r.visits && unanswered(r)),
    };
  },
};
