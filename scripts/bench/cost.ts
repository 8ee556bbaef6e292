/** Part 7: seven runs in one tracked stretch (one wait for the windowed rollups, not seven), by campaign. */
import type { Scope, SeriesMetric } from '../../lib/db/entities/analytics.ts';
import { seriesPointsFromItem, seriesSortKey } from '../../lib/db/entities/analytics.ts';
import { ACCESS_LOG_FIELDS } from '../../lib/observability/access-log.ts';
import { routeNamed } from '../../lib/routes.ts';
import { campaignItems } from '../../tools/table.ts';
import { mapLimit, waitUntil } from '../../tools/wait.ts';
import { capacityOf, type ItemKind, type KindUsage, ROLLUP_KINDS, splitByCampaign } from './capacity.ts';
import { importMs } from './coldstart.ts';
import { type BenchEnvironment, type RequestSpec, waitPipelineIdle } from './environment.ts';
import type { Burst } from './hotlink.ts';
import { type BenchPart, type Cell, checks, rows } from './report.ts';
import type { LatencyRow } from './requests.ts';
import { settings } from './settings.ts';
import { log, median, random, timed, usd } from './stats.ts';
import * as traffic from './traffic.ts';

/** us-east-1 public list prices (USD) as known to the author (AWS pricing pages, 2025); not fetched: check them. */
const P = {
  ...{ lambdaArmGbSecond: 0.0000133334, lambdaPerMillionRequests: 0.2, httpApiPerMillion: 1.0 },
  ...{ dynamoPerMillionWru: 0.625, dynamoPerMillionRru: 0.125, sqsPerMillionRequests: 0.4 },
  ...{ cloudWatchLogsPerGb: 0.5, dataTransferOutPerGb: 0.09 },
};
const [MEMORY_GB, COLD_SHARE, RUNTIME_INIT_MS] = [0.25, 0.01, 150];
/** Lambda's START, END and REPORT lines per invocation, as AWS writes them (none for `platformLogs: false`). */
const PLATFORM_LINES = [75, 52, 150];
const [NO_URL_DELIVERY_MS, DELIVERY_MS, WEBHOOK_BYTES] = [20, 200, 1400];
/** The stream consumer in AWS (assumed): ~50 ms per batch of 100 records, plus this much per rollup call. */
const [CONSUMER_BATCH_MS, CONSUMER_CALL_MS] = [50, 15];
const ACTION_GOAL = 5;
/** How long the rollups of the runs may take to be written (the windowed ones within a minute). */
const SETTLE_TIMEOUT_MS = 180_000;
/** The authorizer's key lookup: cached 60 s per key by API Gateway in AWS, so ≈ 0 per request. */
const NOT_BILLED: ItemKind[] = ['api key'];
const lambdaMs = (ms: number) => MEMORY_GB * (ms / 1000) * P.lambdaArmGbSecond * 1e6;
type Kind = 'visit' | 'action' | 'conversion';
const runName = (r: { kind: Kind; shape: Shape }) => `${r.kind}s, ${r.shape.label}`;
type Route = 'Visit' | 'CreateLinkAction' | 'CreateConversion';
const ACTION = { method: 'POST', path: '/api/v1/action/referral_link' };
const SALE = { method: 'POST', path: '/api/v1/conversion' };
/** What a request writes to CloudWatch Logs (26 B more per event); its count is the consumer's EMF line. */
function logBytes(route: Route) {
  const [status, userAgent] =
    route === 'Visit' ? ['302', traffic.BROWSER] : ['201', 'python-requests/2.32.3'];
  const { method, path, platformLogs } = routeNamed(route);
  const sample: Record<string, string> = {
    ...{ requestId: 'dF3kQhYsIAMEJmw=', apiId: 'a1b2c3d4e5', requestTime: '24/Nov/2026:07:55:01 +0000' },
    ...{ httpMethod: method, path, routeKey: `${method} ${path}`, status, integrationStatus: status },
    ...{ responseLength: status === '302' ? '0' : '780', responseLatency: '23', integrationLatency: '21' },
    'identity.userAgent': userAgent,
  };
  const fields = Object.entries(ACCESS_LOG_FIELDS).map(([k, v]) => [k, sample[v.slice(9)] ?? '-']);
  const access = JSON.stringify(Object.fromEntries(fields));
  // The handler's `request` line (`lib/observability/logger.ts`); the redirect writes it only for an error.
  const request = `{"level":"INFO","message":"request","timestamp":"2026-11-24T07:55:01.123Z","service":"referral-api","xray_trace_id":"1-6742e0b5-2b5c8f1e9a0d4c3b2a190817","request_id":"c0ffee00-1234-4abc-9def-0123456789ab","route":"${method} ${path}","tenant":"acme","status":${status},"duration_ms":12}`;
  const platform = platformLogs === false ? [] : PLATFORM_LINES;
  const [a, r] = (route === 'Visit' ? [access] : [access, request]).map((l) => Buffer.byteLength(l));
  const lines = [a!, ...(r ? [r] : []), ...platform];
  const platformBytes = platform.reduce((x, y) => x + y, 0);
  const platformText = platform.length ? `START/END/REPORT ${platformBytes} B` : 'no START/END/REPORT';
  return {
    bytes: lines.reduce((sum, b) => sum + b + 26, 0),
    what: `access line ${a} B, no EMF line (counted per stream batch), ${r ? `request line ${r} B` : 'no request line'}, ${platformText}, 26 B per event`,
  };
}

/** A traffic shape: each link's share of the requests, and the goal for a visit. */
type Shape = { key: string; label: string; p: number[]; visitGoal: number };
function shapes(zipfLinks: number): Shape[] {
  const zipf = Array.from({ length: zipfLinks }, (_, i) => 1 / (i + 1));
  const h = zipf.reduce((a, b) => a + b, 0);
  return [
    { key: 'hot', label: 'one hot link', p: [1], visitGoal: 3 },
    { key: 'uniform', label: '50 links, uniform', p: Array<number>(50).fill(1 / 50), visitGoal: 3.5 },
    { key: 'zipf', label: `${zipfLinks} links, Zipf (s = 1)`, p: zipf.map((w) => w / h), visitGoal: 5 },
  ];
}

/** Draws a link by its share, from a seeded generator: the same traffic every run. */
function sampler(p: readonly number[], seed: number) {
  let sum = 0;
  const [cumulative, rnd] = [p.map((x) => (sum += x)), random(seed)];
  return () => {
    const x = rnd() * sum;
    return cumulative.findIndex((c) => c >= x);
  };
}

/** Expected distinct links among `n` requests, link i drawn with probability p_i: Σ 1 − (1 − p_i)^n. */
const distinct = (p: readonly number[], n: number) => p.reduce((a, pi) => a + 1 - (1 - pi) ** n, 0);
/** The floor's formula (written out in the report) for a shape at `rate` requests/s over `seconds`. */
function floorOf(p: readonly number[], rate: number, seconds: number) {
  const perBatch = distinct(p, rate);
  const minutes = Array.from({ length: Math.ceil(seconds / 60) }, (_, m) => Math.min(60, seconds - m * 60));
  const perMinute = minutes.reduce((a, s) => a + distinct(p, rate * s), 0);
  const wru = 2 + (perBatch + 1) / rate + (2 * perMinute) / (rate * seconds);
  return { perBatch, perMinute: perMinute / minutes.length, wru };
}

type MeasuredCapacity = { requests: number; perSecond: number; usage: KindUsage[] };
/** A campaign's series count of `metric` in a scope, summed over the days. */
const seriesOf = (env: BenchEnvironment, id: string, metric: SeriesMetric) => async (scope: Scope) => {
  const items = await campaignItems(env.tenant, id, seriesSortKey(scope, ''), env.table);
  const days = items.filter((item) => !String(item.SK).endsWith('#T'));
  return days.reduce((a, item) => a + (seriesPointsFromItem(item, 'day')[0]?.[metric] ?? 0), 0);
};
type Count = ReturnType<typeof seriesOf>;
/** Whether a link's and its referrer's series (the windowed rollups) count `n`. */
const lastCounted = async (count: Count, { id, referrer }: traffic.BenchLink, n: number) =>
  (await count({ kind: 'link', linkId: id })) >= n &&
  (await count({ kind: 'referrer', referrerId: referrer! })) >= n;

/**
 * The conversions' campaign: 50 links, a referred user of each, its signups rolled up before tracking;
 * one reward rule (10 % of each sale to the referrer): a sale's cost includes its reward (issue 30).
 */
async function campaignWithSignups(env: BenchEnvironment, name: string) {
  const campaign = await traffic.campaignWithLinks(env, name, 50);
  const rule = { id: 'share', on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1000 };
  await env.client.call('PATCH', `/api/v1/campaign?id=${campaign.id}`, { reward_rules: [rule] });
  const user = (l: traffic.BenchLink, i: number) => ({
    referral_code: l.code,
    referred_user_id: `${name}-u${i}`,
  });
  await mapLimit(campaign.links, 8, (l, i) => env.client.call('POST', '/api/v1/referred_user', user(l, i)));
  const last = campaign.links.at(-1)!;
  const count = seriesOf(env, campaign.id, 'referred_users');
  await waitUntil(() => lastCounted(count, last, 1), SETTLE_TIMEOUT_MS, 500);
  return campaign;
}

/** The seven runs, tracked from the first request until every run's rollups are written. */
async function measure(env: BenchEnvironment, all: Shape[]) {
  const { freshnessRate: rate, costSeconds } = settings;
  const n = Math.round(rate * costSeconds);
  // The signups' rollups are written while the other campaigns are made, not after them.
  const sales = campaignWithSignups(env, 'cost-sale');
  sales.catch(() => undefined); // awaited below: not unhandled if another campaign fails first
  const made = [];
  for (const kind of ['visit', 'action'] as const)
    for (const shape of all) {
      const campaign = await traffic.campaignOfReferrers(env, `cost-${kind}-${shape.key}`, shape.p.length);
      made.push({ kind: kind as Kind, shape, campaign });
    }
  made.push({ kind: 'conversion' as Kind, shape: all[1]!, campaign: await sales });
  await waitPipelineIdle(env);
  await env.proxy.track();
  const runs = [];
  const tag = Date.now().toString(36);
  for (const [seed, { kind, shape, campaign }] of made.entries()) {
    const picks = Array.from({ length: n }, sampler(shape.p, seed + 1));
    const links = picks.map((i) => campaign.links[i]!);
    const agent = traffic.visitors();
    const purchase = { action_type: 'purchase', metadata: { source: 'bench' } };
    const code = (i: number) => links[i]!.code;
    // A sale as a payments client sends it: with an order id and an Idempotency-Key.
    const sale = (i: number) => ({ campaign_id: campaign.id, referred_user_id: `cost-sale-u${picks[i]}` });
    const body = (i: number) => ({ ...sale(i), amount: 4990, external_id: `ord-${tag}-${i}` });
    const keyed = (i: number) => ({ 'idempotency-key': `${tag}-${i}` });
    const request = (i: number): RequestSpec => {
      if (kind === 'visit') return traffic.visitOf(code(i), agent(i));
      if (kind === 'conversion') return { ...SALE, headers: keyed(i), body: body(i) };
      return { ...ACTION, body: { referral_code: code(i), ...purchase } };
    };
    const ok = kind === 'visit' ? 302 : 201;
    const answered = new Map<traffic.BenchLink, number>();
    let last = campaign.links[0]!;
    const load = await traffic.paced(env, n, rate, request, (a) => {
      if (a.status !== ok) return;
      last = links[a.i]!;
      answered.set(last, (answered.get(last) ?? 0) + 1);
    });
    const accepted = load.statuses[ok] ?? 0;
    runs.push({ kind, shape, campaign, load, accepted, last, lastCount: answered.get(last) ?? 0 });
    log(`${runName({ kind, shape })}: ${accepted} at ${(accepted / load.seconds).toFixed(1)}/s`);
  }
  // Settled: the campaign's series (fast rollups) and the last link's and referrer's (windowed) count all.
  type Run = (typeof runs)[number];
  const settle = ({ campaign, last, lastCount, accepted, kind }: Run) => {
    const count = seriesOf(env, campaign.id, `${kind}s`);
    const counted = async () =>
      (await count({ kind: 'campaign' })) >= accepted && lastCounted(count, last, lastCount);
    return waitUntil(counted, SETTLE_TIMEOUT_MS, 500);
  };
  const settled = await Promise.all(runs.map(settle));
  await waitPipelineIdle(env);
  // Only the sales send Idempotency-Keys: their answers (keyed by tenant and hash) are the sales' run's.
  const [items, idem] = [await env.proxy.tracked(), (i: { pk: string }) => i.pk.startsWith('IDEM#')];
  const rest = items.filter((i) => !idem(i));
  const campaigns = runs.map((r) => r.campaign);
  const tracked = splitByCampaign(rest, campaigns);
  tracked.at(-1)!.push(...items.filter(idem));
  const priced = async (r: Run, i: number) => {
    const usage = await capacityOf(env.table, tracked[i]!);
    const capacity = { requests: r.accepted, perSecond: r.accepted / r.load.seconds, usage };
    return { ...r, settled: settled[i]!, capacity };
  };
  return Promise.all(runs.map(priced));
}

const unitsOf = (c: MeasuredCapacity) =>
  c.usage
    .filter((u) => !NOT_BILLED.includes(u.kind))
    .map(({ kind, writes, checks, reads, wru, indexWru, rru }) => {
      const [w, ch, r, wu, iu, ru] = [writes, checks, reads, wru, indexWru, rru].map((n) => n / c.requests);
      return { kind, writes: w!, checks: ch!, reads: r!, wru: wu!, indexWru: iu!, rru: ru! };
    });
type Units = ReturnType<typeof unitsOf>;
const wruOf = (units: Units) => units.reduce((a, r) => a + r.wru + r.indexWru, 0);
const rruOf = (units: Units) => units.reduce((a, r) => a + r.rru, 0);
/** The rollup consumer's calls per request: its rollup writes. */
const rollupCallsOf = (c: MeasuredCapacity) =>
  c.usage.reduce((a, u) => a + (ROLLUP_KINDS.includes(u.kind) ? u.standardWrites : 0), 0) / c.requests;

/** A line of the model: component, quantity per request, USD per million requests per shape. */
type Line = { component: string; quantity: string; usd: number[] };
/** Lines written as text, a line each: component | quantity | USD per million, one per shape or one for all `columns`. */
const linesOf = (columns: number, text: string): Line[] =>
  rows(text).map(([component = '', quantity = '', ...usd]) => ({
    ...{ component, quantity },
    usd: usd.length === 1 ? Array<number>(columns).fill(Number(usd[0])) : usd.map(Number),
  }));

/** The lines of one kind of request: its gateway lines and the rest, DynamoDB and the consumer as measured per shape. */
function lines(route: Route, caps: MeasuredCapacity[], handlerMs: number, coldMs: number) {
  const [units, logs] = [caps.map(unitsOf), logBytes(route)];
  const gateway =
    route === 'Visit'
      ? `API Gateway HTTP API | 1 request (no authorizer on /r) | ${P.httpApiPerMillion}`
      : `API Gateway HTTP API | 1 request | ${P.httpApiPerMillion}
Authorizer (Lambda + GetItem) | cached 60 s per key by API Gateway: ~1 call per key per minute, ≈ 0 per million | 0`;
  const each = (f: (i: number) => number | string, join = ' | ') => caps.map((_, i) => f(i)).join(join);
  const batch = 0.01 * (P.lambdaPerMillionRequests + lambdaMs(CONSUMER_BATCH_MS));
  const consumer = (i: number) => batch + rollupCallsOf(caps[i]!) * lambdaMs(CONSUMER_CALL_MS);
  return linesOf(
    caps.length,
    `${gateway}
Lambda requests | 1 invocation | ${P.lambdaPerMillionRequests}
Lambda duration (arm64, 256 MB) | ${handlerMs.toFixed(1)} ms (p50 through the local gateway) | ${lambdaMs(handlerMs)}
Lambda INIT (cold starts, billed since Aug 2025) | ${COLD_SHARE * 100} % of invocations × (${coldMs.toFixed(0)} ms import + ${RUNTIME_INIT_MS} ms runtime) | ${COLD_SHARE * lambdaMs(coldMs + RUNTIME_INIT_MS)}
DynamoDB writes (itemised below) | ${each((i) => wruOf(units[i]!).toFixed(2), ', ')} WRU | ${each((i) => wruOf(units[i]!) * P.dynamoPerMillionWru)}
DynamoDB reads (itemised below) | ${each((i) => rruOf(units[i]!).toFixed(2), ', ')} RRU | ${each((i) => rruOf(units[i]!) * P.dynamoPerMillionRru)}
CloudWatch Logs | ${logs.bytes} B (${logs.what}) | ${(logs.bytes * 1e6 * P.cloudWatchLogsPerGb) / 1024 ** 3}
Stream consumer Lambdas (stream reads by Lambda are free) | 0.01 invocation + ${CONSUMER_BATCH_MS} ms per batch, + ${CONSUMER_CALL_MS} ms per rollup write (${each((i) => rollupCallsOf(caps[i]!).toFixed(3), ', ')} per request) | ${each(consumer)}
Event pipeline: SQS and the delivery Lambda | none: the runs' campaigns have no webhook_url, and the stream consumer queues only events their campaign's webhook sends (one campaign read per batch, in the DynamoDB reads); with a webhook, see the add-on below | 0`,
  );
}

const totals = (ls: Line[]) => ls[0]!.usd.map((_, i) => ls.reduce((a, l) => a + l.usd[i]!, 0));
const costTable = (ls: Line[], labels: string[]): Cell[][] => [
  ['component', 'per request', ...labels.map((l) => `USD per million, ${l}`)],
  ...ls.map((l) => [l.component, l.quantity, ...l.usd.map(usd)]),
  ['**total**', '', ...totals(ls).map((t) => `**${usd(t)}**`)],
];

/** Units per request per kind of item and shape: writes / transaction checks → WRU (with index copies), RRU. */
function unitsTable(caps: MeasuredCapacity[], labels: string[]): Cell[][] {
  const units = caps.map(unitsOf);
  const size = (kind: ItemKind) => {
    const u = caps.flatMap((c) => c.usage).find((x) => x.kind === kind)!;
    const copies = u.indexCopies.map((x) => `${x.index} ${x.bytes.toFixed(0)} B`);
    return `${u.bytes.toFixed(0)} B${copies.length ? ` (copies: ${copies.join(', ')})` : ''}`;
  };
  const cell = (kinds: Units, kind: ItemKind) => {
    const r = kinds.find((x) => x.kind === kind);
    const index = r?.indexWru ? ` (index ${r.indexWru.toFixed(3)})` : '';
    if (!r) return '—';
    return `${r.writes.toFixed(3)} / ${r.checks.toFixed(3)} → ${(r.wru + r.indexWru).toFixed(3)}${index} WRU, ${r.rru.toFixed(3)} RRU`;
  };
  const weight = (k: ItemKind) => wruOf(units.at(-1)!.filter((r) => r.kind === k));
  const kinds = [...new Set(units.flat().map((r) => r.kind))].sort((a, b) => weight(b) - weight(a));
  return [
    ['item', 'mean size', ...labels],
    ...kinds.map((k) => [k, size(k), ...units.map((u) => cell(u, k))]),
    ['**total**', '', ...units.map((u) => `**${wruOf(u).toFixed(2)} WRU, ${rruOf(u).toFixed(2)} RRU**`)],
  ];
}

/** A visit at the hot-link burst's rate: its units, plus a request's own visitor marker and two reads. */
function visitsAtBurst(burst: Burst, visit: Line[]) {
  const units = unitsOf(burst);
  const has = (kind: ItemKind) => units.some((u) => u.kind === kind && u.wru > 0);
  const wru = wruOf(units) + (has('visitor marker') ? 0 : 1) + (has('visit item') ? 0 : 1);
  const rru = rruOf(units) + 2;
  const rest = visit.filter((l) => !l.component.startsWith('DynamoDB')).reduce((a, l) => a + l.usd[0]!, 0);
  return { wru, rru, total: rest + wru * P.dynamoPerMillionWru + rru * P.dynamoPerMillionRru };
}

/** The handler's p50 from part 2, or from 25 sequential requests (after 5) when part 2 did not run. */
async function p50Of(env: BenchEnvironment, latency: unknown, key: string, spec: RequestSpec) {
  const measured = (latency as LatencyRow[] | undefined)?.find((r) => r.key === key)?.p50;
  const times: number[] = [];
  for (let i = 0; measured === undefined && i < 30; i++)
    times.push((await timed(() => env.client.send(spec)))[1]);
  return measured ?? median(times.slice(5));
}

export const costPart: BenchPart = {
  ...{ name: 'cost', title: '7. Cost model (on paper), per traffic shape' },
  async run({ env, fixtures, data }) {
    const { freshnessRate: rate, costSeconds } = settings;
    const all = shapes(settings.zipfLinks);
    const labels = all.map((s) => s.label);
    const runs = await measure(env, all);
    type Run = (typeof runs)[number];
    const [visits, actions, sales] = [runs.slice(0, all.length), runs.slice(all.length, -1), runs.slice(-1)];
    const [visitCaps, actionCaps, saleCaps] = [visits, actions, sales].map((rs) => rs.map((r) => r.capacity));
    const { referral_code: code, campaign_id, referred_user_id } = fixtures;
    const priced = async (route: Route, caps: MeasuredCapacity[], spec: RequestSpec) => {
      const coldMs = importMs(data.cold, routeNamed(route).handler) || 0;
      return lines(route, caps, await p50Of(env, data.latency, route, spec), coldMs);
    };
    const visit = await priced('Visit', visitCaps!, traffic.visitOf(code, traffic.BROWSER));
    const actionBody = { referral_code: code, action_type: 'purchase' };
    const action = await priced('CreateLinkAction', actionCaps!, { ...ACTION, body: actionBody });
    const saleBody = { campaign_id, referred_user_id, amount: 4990 };
    const sale = await priced('CreateConversion', saleCaps!, { ...SALE, body: saleBody });
    const webhook = linesOf(
      1,
      `Event pipeline: SQS | SendMessageBatch + ReceiveMessage + DeleteMessageBatch, 10 per call: ~0.3 requests | ${0.3 * P.sqsPerMillionRequests}
Delivery Lambda (batch 10) | 0.1 invocation, ~${NO_URL_DELIVERY_MS} ms per batch of its own work | ${0.1 * (P.lambdaPerMillionRequests + lambdaMs(NO_URL_DELIVERY_MS))}
DynamoDB: the delivery reads its campaign | 1 strongly consistent read (the URL in force at delivery time) | ${P.dynamoPerMillionRru}
Delivery Lambda waiting on the receiver (batch 10 in parallel) | assumed ${DELIVERY_MS} ms per batch: 0.1 × ${DELIVERY_MS} ms | ${0.1 * lambdaMs(DELIVERY_MS)}
Data transfer out (the POST) | ~${WEBHOOK_BYTES} B body and headers | ${(WEBHOOK_BYTES * 1e6 * P.dataTransferOutPerGb) / 1024 ** 3}`,
    );
    const burstData = (data.hotlink as { burst?: Burst } | undefined)?.burst;
    const burst = burstData && visitsAtBurst(burstData, visit);
    const [visitUsd, actionUsd, saleUsd] = [totals(visit), totals(action), totals(sale)];
    const wru = (r: Run) => wruOf(unitsOf(r.capacity));
    const goal = (what: string, r: Run, value: number, limit: number) =>
      `${what}, ${r.shape.label}, per million | ${usd(value)} | ≤ ${usd(limit)} | ${value <= limit}`;
    const unsettled = runs.filter((r) => !r.settled).map(runName);
    const goals =
      checks(`${visits.map((r, i) => goal('a visit', r, visitUsd[i]!, r.shape.visitGoal)).join('\n')}
${actions.map((r, i) => goal('an API action', r, actionUsd[i]!, ACTION_GOAL)).join('\n')}
every run's rollups in the table | ${unsettled.join('; ') || 'all'} | within ${SETTLE_TIMEOUT_MS / 1000} s | ${!unsettled.length}`);
    const floorHead = `request | shape | measured WRU | floor, this run (${costSeconds} s) | d₁ | d_L | measured ÷ floor | floor, sustained`;
    const floorRow = (r: Run) => {
      const [now, sustained] = [floorOf(r.shape.p, rate, costSeconds), floorOf(r.shape.p, rate, 60)];
      return `${r.kind} | ${r.shape.label} | ${wru(r).toFixed(2)} | ${now.wru.toFixed(3)} | ${now.perBatch.toFixed(1)} | ${now.perMinute.toFixed(0)} | ${(wru(r) / now.wru).toFixed(2)} | ${sustained.wru.toFixed(3)}`;
    };
    const done = runs.map((r) => `${r.accepted} ${runName(r)}, at ${r.capacity.perSecond.toFixed(1)}/s`);
    return {
      body: [
        `USD per million requests, for three traffic shapes, each at ${rate} requests/s for ${costSeconds} s (open loop, \`paced\`; every visit a visitor of its own): ${done.join('; ')}. The six runs go back to back (then a seventh, of conversions), each on a campaign of its own (the Zipf campaigns' links written straight into the table by \`newLinkItem\`, the others' made through the API; each link of its own referrer). DynamoDB is measured on the wire from the first request until every run's rollups are in the table (its campaign's series counts every request, and so do the series of its last link and of that link's referrer): every item the stack read or wrote by key (the counting proxy's item tracking), given to the run whose campaign its key names (an event lookup: the campaign its event id names; items of no campaign, such as id blocks, the day's visitor key and a signup's event lookup, shared out by each run's own writes), priced per kind of item by its size read back with DynamoDB's rules (\`scripts/bench/capacity.ts\`): 1 WRU per KB for a standard write, 2 per KB for every item of a transaction (ConditionCheck included), 1 per KB for each index copy a write rewrites, 1 RRU per 4 KB for a strongly consistent read, half for an eventually consistent one. The rollups are amortised over the requests of the run: a shorter run amortises those written once a minute over fewer requests (its floor below does the same). The authorizer's key lookups are left out (cached per key in AWS). Prices: Lambda arm64 $${P.lambdaArmGbSecond} per GB-s and $${P.lambdaPerMillionRequests} per million requests; HTTP API $${P.httpApiPerMillion.toFixed(2)}/M; DynamoDB on-demand $${P.dynamoPerMillionWru}/M WRU, $${P.dynamoPerMillionRru}/M RRU; SQS $${P.sqsPerMillionRequests.toFixed(2)}/M; CloudWatch Logs $${P.cloudWatchLogsPerGb.toFixed(2)}/GB; transfer out $${P.dataTransferOutPerGb.toFixed(2)}/GB (AWS us-east-1 public list prices as known to the author (pricing pages, 2025); not fetched live).`,
        '**Per million visits** (`GET /r/{code}`):',
        costTable(visit, labels),
        '**DynamoDB units per visit**, by item (writes / transaction checks per visit → WRU with the index copies’ share, RRU):',
        unitsTable(visitCaps!, labels),
        !!burst &&
          `**One link at a viral rate**: the hot-link part's burst of ${burstData!.requests} visits written into the table at ${burstData!.perSecond.toFixed(0)}/s and counted by the stream consumer used ${(burst.wru - 2).toFixed(2)} WRU and ${(burst.rru - 2).toFixed(2)} RRU a visit besides what a request itself does (its visitor marker, 1 WRU, its visit item, and its two reads, 2 RRU): ${burst.wru.toFixed(2)} WRU and ${burst.rru.toFixed(2)} RRU in all, so **${usd(burst.total)} per million visits** with the other lines as on one hot link above.`,
        '**Per million API actions** (`POST /api/v1/action/referral_link`):',
        costTable(action, labels),
        '**DynamoDB units per API action**, by item:',
        unitsTable(actionCaps!, labels),
        `**Per million conversions** (\`POST /api/v1/conversion\`, each of a referred user signed up on one of 50 links before the run, with an \`external_id\` and an \`Idempotency-Key\` as a payments client sends them; one shape: the link counters and rollups of a sale are per link like an action's):`,
        costTable(sale, [sales[0]!.shape.label]),
        '**DynamoDB units per conversion**, by item: the transaction (record with its event, its two list pointers, its external id, the link counter update, the campaign check: 2 WRU per KB each), the stored answer of its key, the rollups and feed item the stream writes, and what the rewards job writes for its one reward rule (a percent of the sale to the referrer: the reward with its `reward.created` event, and what it reads to decide):',
        unitsTable(saleCaps!, [sales[0]!.shape.label]),
        `**Against the floor**: the write units per request the contract strictly needs for each shape, floor = 2 + (d₁ + 1) ÷ n₁ + (d_L + d_R) ÷ n_M. The 2 are the request's own (a visit: its visit item and its visitor marker; an action: the link update that commits it and its action item). \`total_clicks\` and the campaign's series must be fresh within 2 s: at least a write per distinct link and one for the campaign per 1-s batch of n₁ = ${rate} requests, d₁ the distinct links expected among them. The link and referrer series and the rankings within 60 s: at least a write per distinct link (d_L) and per distinct referrer (d_R = d_L, one referrer per link) per minute of n_M = ${rate * 60} requests (a run shorter than a minute: per run). d = Σ_i 1 − (1 − p_i)^n over the shape's links, link i with share p_i, among n requests; every item under 1 KB, 1 WRU.`,
        rows(floorHead, [...visits, ...actions].map(floorRow)),
        '**Add-on per million webhook deliveries** (events of a campaign with a `webhook_url`; the totals above are for campaigns without one, whose events are in the feed only):',
        costTable(webhook, ['any shape']),
        `Assumptions:

- Item sizes are those of the items this run wrote, read back, with DynamoDB’s size rules (names + values); an UpdateItem is priced at the item’s size after it.
- The runs' visits are all unique (each comes from a visitor of its own, as on a link that goes viral), the worst case for the rollups: each raises the \`unique_visits\` counters too.
- Each request is an event: the stream consumer writes it into the events feed and reads the campaigns of each batch once to decide which events go on the webhook queue (none here). All of it is in the measured units.
- Lambda duration uses the handler’s p50 through the local gateway against DynamoDB Local; in AWS, DynamoDB answers in single-digit ms, so this is an upper-end guess. At 256 MB each millisecond costs $0.0033 per million.
- The stream consumer: ${CONSUMER_BATCH_MS} ms per full batch of 100 plus ${CONSUMER_CALL_MS} ms per rollup write (assumed; the writes are measured).
- Cold starts: ${COLD_SHARE * 100} % of invocations, INIT billed at the function’s memory; the import time is the function’s median import CPU time (part 4; 0 when it did not run).
- SQS requests (webhook add-on) assume full batches of 10 on send, receive and delete.
- Not included: storage ($0.25/GB-month: a visit leaves a visit item of about 0.8 KB and its share of a feed item, a few hundred bytes for 30 days), the stream's own storage, data transfer of API responses.
- Fixed, not per request: a stage's CloudWatch alarms, a sum a month whatever the traffic (docs/deploying.md, "Fixed monthly cost of a stage", counted in the synthesized template by \`tools/fixed-cost.ts\`).`,
      ],
      summary: `Cost model at ${rate}/s: a visit ${all.map((s, i) => `${usd(visitUsd[i]!)} (${s.label})`).join(', ')}${burst ? `, ${usd(burst.total)} in a burst at ${burstData!.perSecond.toFixed(0)}/s` : ''}; an API action ${all.map((s, i) => `${usd(actionUsd[i]!)} (${s.label})`).join(', ')}; a conversion ${usd(saleUsd[0]!)} (${sales[0]!.shape.label}); +${usd(totals(webhook)[0]!)} per million webhook POSTs.`,
      checks: goals,
    };
  },
};
