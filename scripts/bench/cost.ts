/**
 * Part 7: a cost model on paper, from what the bench measured and AWS list prices. DynamoDB is
 * measured on the wire: every item the stack read or wrote by key while it served a run of visits
 * (or of API actions) and until its table-stream consumers were done with them (the counting
 * proxy's item tracking), priced per kind of item by the item's size read back (`capacity.ts`):
 * the request's own calls, the rollups (amortised over the visits of the run), the events feed and
 * the webhook pipeline's campaign reads alike. Visits come from the hot-link part's runs when it
 * ran (one link, and the same load spread over many links), else from runs of this part's own;
 * API actions (endpoint 12) always from this part's own runs, on one link and spread. Every
 * assumption is written next to the figure it drives.
 */
import { ACCESS_LOG_FIELDS } from '../../lib/observability/access-log.ts';
import { emfDocument } from '../../lib/observability/metrics.ts';
import { routeNamed } from '../../lib/routes.ts';
import { capacityOf, type ItemKind, type KindUsage, perRequest } from './capacity.ts';
import { importMs } from './coldstart.ts';
import { BROWSER } from './endpoints.ts';
import { type BenchEnvironment, type BenchPart, quick, settings } from './environment.ts';
import { campaignWithLinks, drive, type MeasuredCapacity, mergeTracked, type Traffic } from './hotlink.ts';
import type { RequestSpec } from './http-client.ts';
import type { LatencyRow } from './latency.ts';
import { median, usd } from './stats.ts';

/**
 * us-east-1 public list prices (USD) as known to the author from the AWS pricing pages (2025);
 * the bench has no internet access, so they are not fetched. Check them before relying on them.
 */
const P = {
  lambdaArmGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  httpApiPerMillion: 1.0,
  dynamoPerMillionWru: 0.625,
  dynamoPerMillionRru: 0.125,
  sqsPerMillionRequests: 0.4,
  pipesPerMillionRequests: 0.4,
  streamsPerMillionReadRequests: 0.2,
  cloudWatchLogsPerGb: 0.5,
  dataTransferOutPerGb: 0.09,
};
const MEMORY_GB = 0.25;
const COLD_SHARE = 0.01;
const RUNTIME_INIT_MS = 150;
/** CloudWatch Logs bills each log event's message plus 26 bytes. */
const LOG_EVENT_OVERHEAD = 26;
/**
 * Lambda's text platform lines per invocation (`START RequestId: <uuid> Version: $LATEST`, `END
 * RequestId: <uuid>`, `REPORT RequestId: <uuid> Duration: … Billed Duration: … Memory Size: …
 * Max Memory Used: …`), as AWS writes them: about 75 + 52 + 150 bytes. The public redirect has none
 * (`platformLogs: false` in its route row).
 */
const PLATFORM_LINES = [75, 52, 150];

/** What one request writes to CloudWatch Logs: the access log line, the EMF line of its count, its `request` line, and its function's platform lines. */
function logBytes(route: 'Visit' | 'CreateLinkAction', metric: string, sample: Record<string, string>) {
  const access = JSON.stringify(
    Object.fromEntries(
      Object.entries(ACCESS_LOG_FIELDS).map(([k, v]) => [k, sample[v.slice('$context.'.length)] ?? '-']),
    ),
  );
  const emf = JSON.stringify(emfDocument({ [metric]: 1 }));
  // The handler's one `request` line (`lib/http/handler.ts`, in `lib/observability/logger.ts`'s shape).
  const request = JSON.stringify({
    level: 'INFO',
    message: 'request',
    timestamp: '2026-11-24T07:55:01.123Z',
    service: 'referral-api',
    xray_trace_id: '1-6742e0b5-2b5c8f1e9a0d4c3b2a190817',
    request_id: 'c0ffee00-1234-4abc-9def-0123456789ab',
    route: `${sample.httpMethod} ${sample.path}`,
    ...(route === 'Visit' ? {} : { tenant: 'acme' }),
    status: Number(sample.status),
    duration_ms: 12,
  });
  const platform = routeNamed(route).platformLogs === false ? [] : PLATFORM_LINES;
  // The redirect writes its `request` line only for an error (`requestLog: 'errors'` in functions/http/visit.ts).
  const lines = route === 'Visit' ? [access, emf] : [access, emf, request];
  const events = [...lines.map((l) => Buffer.byteLength(l)), ...platform];
  return {
    bytes: events.reduce((a, b) => a + b + LOG_EVENT_OVERHEAD, 0),
    what: `access line ${Buffer.byteLength(access)} B, EMF count ${Buffer.byteLength(emf)} B, ${route === 'Visit' ? 'no request line' : `request line ${Buffer.byteLength(request)} B`}${platform.length ? `, START/END/REPORT ${platform.reduce((a, b) => a + b, 0)} B` : ', no START/END/REPORT'}, 26 B per event`,
  };
}
/** A request's typical access-log values (the rest print `-`). */
const accessSample = (method: string, path: string, routeKey: string, status: string, userAgent: string) => ({
  requestId: 'dF3kQhYsIAMEJmw=',
  apiId: 'a1b2c3d4e5',
  requestTime: '24/Nov/2026:07:55:01 +0000',
  httpMethod: method,
  path,
  routeKey,
  status,
  responseLength: status === '302' ? '0' : '780',
  responseLatency: '23',
  integrationLatency: '21',
  integrationStatus: status,
  'identity.userAgent': userAgent,
});
const NO_URL_DELIVERY_MS = 20;
const DELIVERY_MS = 200;
/** The stream consumer in AWS: ~50 ms per batch of 100 records, plus this much per transaction it writes. */
const CONSUMER_BATCH_MS = 50;
const CONSUMER_TRANSACTION_MS = 15;
/** Goals of issue 14, USD per million. */
const VISIT_GOAL = 3.5;
const ACTION_GOAL = 5;

const lambdaMs = (ms: number) => MEMORY_GB * (ms / 1000) * P.lambdaArmGbSecond * 1e6;
/** The authorizer's key lookup: cached 60 s per key by API Gateway in AWS, so ≈ 0 per request. */
const NOT_BILLED: ItemKind[] = ['api key'];

/** A line of the model: component, quantity per request, USD per million requests (one link, spread). */
type Line = [string, string, number, number];
const same = (component: string, quantity: string, value: number): Line => [
  component,
  quantity,
  value,
  value,
];

/** p50 of `n` sequential requests through the gateway: the handler duration when part 2 did not run. */
async function p50Of(env: BenchEnvironment, spec: () => RequestSpec, n = 30): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await env.client.send(spec());
    times.push(performance.now() - t);
  }
  return median(times.slice(5));
}

/** One link and spread over `settings.hotlinkSpreadLinks` links: the capacity a run of `traffic` used per request. */
async function measureCapacity(env: BenchEnvironment, traffic: Traffic, amount: number) {
  const out: Record<'hot' | 'spread', MeasuredCapacity> = {} as never;
  for (const [kind, n] of [
    ['hot', 1],
    ['spread', settings.hotlinkSpreadLinks],
  ] as const) {
    const { codes } = await campaignWithLinks(env, `cost-${traffic}-${kind}`, n);
    const run = await drive(env, traffic, codes, amount);
    out[kind] = {
      requests: run.accepted,
      perSecond: run.perSecond,
      usage: await capacityOf(env.table, mergeTracked([run])),
    };
  }
  return out;
}

/** Per request of a measured capacity: units per kind, billed kinds only. */
const unitsOf = (c: MeasuredCapacity) =>
  perRequest(
    c.usage.filter((u) => !NOT_BILLED.includes(u.kind)),
    c.requests,
  );
const sumOf = (rows: ReturnType<typeof unitsOf>, f: (r: (typeof rows)[number]) => number) =>
  rows.reduce((a, r) => a + f(r), 0);
const transactionsOf = (c: MeasuredCapacity) =>
  (c.usage.find((u) => u.kind === 'rollup checkpoint')?.writes ?? 0) / c.requests;

/** The lines of one request: fixed components, and DynamoDB from the two measured capacities. */
function lines(
  first: Line[],
  c: Record<'hot' | 'spread', MeasuredCapacity>,
  handlerMs: number,
  importMsOf: number,
  logs: ReturnType<typeof logBytes>,
): Line[] {
  const [hot, spread] = [unitsOf(c.hot), unitsOf(c.spread)];
  const wru = (rows: typeof hot) => sumOf(rows, (r) => r.wru + r.indexWru);
  const rru = (rows: typeof hot) => sumOf(rows, (r) => r.rru);
  const consumer = (m: MeasuredCapacity) =>
    0.01 * lambdaMs(CONSUMER_BATCH_MS) + transactionsOf(m) * lambdaMs(CONSUMER_TRANSACTION_MS);
  return [
    ...first,
    same('Lambda requests', '1 invocation', P.lambdaPerMillionRequests),
    same(
      'Lambda duration (arm64, 256 MB)',
      `${handlerMs.toFixed(1)} ms (p50 through the local gateway)`,
      lambdaMs(handlerMs),
    ),
    same(
      'Lambda INIT (cold starts, billed since Aug 2025)',
      `${COLD_SHARE * 100} % of invocations × (${importMsOf.toFixed(0)} ms import + ${RUNTIME_INIT_MS} ms runtime)`,
      COLD_SHARE * lambdaMs(importMsOf + RUNTIME_INIT_MS),
    ),
    [
      'DynamoDB writes (itemised below)',
      `one link ${wru(hot).toFixed(2)} WRU, spread ${wru(spread).toFixed(2)} WRU`,
      wru(hot) * P.dynamoPerMillionWru,
      wru(spread) * P.dynamoPerMillionWru,
    ],
    [
      'DynamoDB reads (itemised below)',
      `one link ${rru(hot).toFixed(2)} RRU, spread ${rru(spread).toFixed(2)} RRU`,
      rru(hot) * P.dynamoPerMillionRru,
      rru(spread) * P.dynamoPerMillionRru,
    ],
    same(
      'CloudWatch Logs',
      `${logs.bytes} B (${logs.what})`,
      (logs.bytes * 1e6 * P.cloudWatchLogsPerGb) / 1024 ** 3,
    ),
    [
      'Stream consumer Lambdas: webhooks and feed (batch 100), rollups (up to 1,000 gathered for 1 s)',
      `stream reads by Lambda are free; 0.01 invocation + ${CONSUMER_BATCH_MS} ms per batch, + ${CONSUMER_TRANSACTION_MS} ms per rollup transaction (measured: one link ${transactionsOf(c.hot).toFixed(3)}, spread ${transactionsOf(c.spread).toFixed(3)} per request)`,
      0.01 * P.lambdaPerMillionRequests + consumer(c.hot),
      0.01 * P.lambdaPerMillionRequests + consumer(c.spread),
    ],
    same(
      'Event pipeline: SQS and the delivery Lambda',
      "none: the run's campaigns have no webhook_url, and the stream consumer queues only events their campaign's webhook sends (one campaign read per batch, in the DynamoDB reads); with a webhook, see the add-on below",
      0,
    ),
  ];
}

const total = (ls: Line[], i: 2 | 3) => ls.reduce((a, l) => a + l[i], 0);
const costTable = (ls: Line[]) => [
  ['component', 'per request', 'USD per million, one link', 'USD per million, spread'],
  ...ls.map(([component, quantity, hot, spread]) => [component, quantity, usd(hot), usd(spread)]),
  ['**total**', '', `**${usd(total(ls, 2))}**`, `**${usd(total(ls, 3))}**`],
];

/** Write and read units per request, per kind of item, for both runs. */
function unitsTable(c: Record<'hot' | 'spread', MeasuredCapacity>) {
  const [hot, spread] = [unitsOf(c.hot), unitsOf(c.spread)];
  const kinds = [...new Set([...hot, ...spread].map((r) => r.kind))];
  const size = (kind: ItemKind) => {
    const u = [...c.hot.usage, ...c.spread.usage].find((x) => x.kind === kind);
    if (!u) return '';
    const copies = u.indexCopies.map(
      (x) => `${x.index} ${x.bytes.toFixed(0)} B${x.writesPerWrite > 1 ? ' ×2' : ''}`,
    );
    return `${u.bytes.toFixed(0)} B${copies.length ? ` (copies: ${copies.join(', ')})` : ''}`;
  };
  const cell = (rows: typeof hot, kind: ItemKind) => {
    const r = rows.find((x) => x.kind === kind);
    if (!r) return ['—', '—', '—'];
    return [
      `${r.writes.toFixed(3)} / ${r.checks.toFixed(3)}`,
      `${(r.wru + r.indexWru).toFixed(3)}${r.indexWru ? ` (index ${r.indexWru.toFixed(3)})` : ''}`,
      r.rru.toFixed(3),
    ];
  };
  const order = (k: ItemKind) =>
    -((spread.find((r) => r.kind === k)?.wru ?? 0) + (spread.find((r) => r.kind === k)?.indexWru ?? 0));
  return [
    ['item', 'mean size', 'one link: writes / checks', 'WRU', 'RRU', 'spread: writes / checks', 'WRU', 'RRU'],
    ...kinds
      .sort((a, b) => order(a) - order(b))
      .map((k) => [k, size(k), ...cell(hot, k), ...cell(spread, k)]),
    [
      '**total**',
      '',
      '',
      `**${sumOf(hot, (r) => r.wru + r.indexWru).toFixed(2)}**`,
      `**${sumOf(hot, (r) => r.rru).toFixed(2)}**`,
      '',
      `**${sumOf(spread, (r) => r.wru + r.indexWru).toFixed(2)}**`,
      `**${sumOf(spread, (r) => r.rru).toFixed(2)}**`,
    ],
  ];
}

/**
 * A visit's cost on one link at the burst's rate: the burst's DynamoDB units per visit, plus the
 * request's own marker and reads (absent from a burst written straight into the table), and the
 * other lines as on one link through the gateway.
 */
function visitsAtBurst(burst: MeasuredCapacity, visit: Line[]) {
  const units = unitsOf(burst);
  const has = (kind: ItemKind) => units.some((u) => u.kind === kind && u.wru > 0);
  const wru =
    sumOf(units, (u) => u.wru + u.indexWru) + (has('visitor marker') ? 0 : 1) + (has('visit item') ? 0 : 1);
  const rru = sumOf(units, (u) => u.rru) + 2;
  const rest = visit.filter((l) => !l[0].startsWith('DynamoDB')).reduce((a, l) => a + l[2], 0);
  return {
    wru,
    rru,
    total: rest + wru * P.dynamoPerMillionWru + rru * P.dynamoPerMillionRru,
  };
}

/** The biggest lines of a total, and the biggest kinds of item within DynamoDB's writes. */
function biggest(ls: Line[], i: 2 | 3, units: ReturnType<typeof unitsOf>): string {
  const top = [...ls].sort((a, b) => b[i] - a[i]).slice(0, 3);
  const kinds = [...units]
    .sort((a, b) => b.wru + b.indexWru - (a.wru + a.indexWru))
    .slice(0, 4)
    .map(
      (u) =>
        `${u.kind} ${(u.wru + u.indexWru).toFixed(2)} WRU (${usd((u.wru + u.indexWru) * P.dynamoPerMillionWru)})`,
    );
  return `${top.map((l) => `${l[0]} ${usd(l[i])}`).join(', ')}; DynamoDB writes by item: ${kinds.join(', ')}`;
}

export const costPart: BenchPart = {
  name: 'cost',
  title: '7. Cost model (on paper)',
  stack: true,
  async run({ env, fixtures, data }) {
    const own = quick ? 200 : 600;
    const measured = (
      data.hotlink as
        | { capacity?: Record<'hot' | 'spread', MeasuredCapacity> & { burst?: MeasuredCapacity } }
        | undefined
    )?.capacity;
    const visits = measured ?? (await measureCapacity(env, 'visit', own));
    const actions = await measureCapacity(env, 'action', own);

    const p50 = async (name: string, spec: () => RequestSpec) =>
      (data.latency as LatencyRow[] | undefined)?.find((r) => r.key === name)?.p50 ??
      (await p50Of(env, spec));
    const visitMs = await p50('Visit', () => ({
      method: 'GET',
      path: `/r/${fixtures.referral_code}`,
      headers: { 'user-agent': BROWSER },
    }));
    const actionMs = await p50('CreateLinkAction', () => ({
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_code: fixtures.referral_code, action_type: 'purchase' },
    }));
    const cold = (name: string) => {
      const v = importMs(data.cold, routeNamed(name).handler);
      return Number.isFinite(v) ? v : 0;
    };

    const visit = lines(
      [same('API Gateway HTTP API', '1 request (no authorizer on /r)', P.httpApiPerMillion)],
      visits,
      visitMs,
      cold('Visit'),
      logBytes(
        'Visit',
        'VisitsRecorded',
        accessSample('GET', '/r/ALICE-SPRING', 'GET /r/{referral_code}', '302', BROWSER),
      ),
    );
    // One link at a viral rate: the hot-link part's burst, whose visit items were written straight
    // into the table and counted by the real consumer (full stream batches). Its units per visit,
    // with what the burst did not do: the request's visitor marker (1 WRU) and its two strongly
    // consistent reads (the link, the campaign's check: 1 RRU each); the rest as one link above.
    const burst = measured?.burst && visitsAtBurst(measured.burst, visit);
    const action = lines(
      [
        same('API Gateway HTTP API', '1 request', P.httpApiPerMillion),
        same(
          'Authorizer (Lambda + GetItem)',
          'cached 60 s per key by API Gateway: ~1 call per key per minute, ≈ 0 per million',
          0,
        ),
      ],
      actions,
      actionMs,
      cold('CreateLinkAction'),
      logBytes(
        'CreateLinkAction',
        'ActionsRecorded',
        accessSample(
          'POST',
          '/api/v1/action/referral_link',
          'POST /api/v1/action/referral_link',
          '201',
          'python-requests/2.32.3',
        ),
      ),
    );
    const webhookBytes = 1400;
    const webhook: Line[] = [
      same(
        'Event pipeline: SQS',
        'SendMessageBatch + ReceiveMessage + DeleteMessageBatch, 10 per call: ~0.3 requests',
        0.3 * P.sqsPerMillionRequests,
      ),
      same(
        'Delivery Lambda (batch 10)',
        `0.1 invocation, ~${NO_URL_DELIVERY_MS} ms per batch of its own work`,
        0.1 * P.lambdaPerMillionRequests + 0.1 * lambdaMs(NO_URL_DELIVERY_MS),
      ),
      same(
        'DynamoDB: the delivery reads its campaign',
        '1 strongly consistent read (the URL in force at delivery time)',
        P.dynamoPerMillionRru,
      ),
      same(
        'Delivery Lambda waiting on the receiver (batch 10 in parallel)',
        `assumed ${DELIVERY_MS} ms per batch: 0.1 × ${DELIVERY_MS} ms`,
        0.1 * lambdaMs(DELIVERY_MS),
      ),
      same(
        'Data transfer out (the POST)',
        `~${webhookBytes} B body and headers`,
        (webhookBytes * 1e6 * P.dataTransferOutPerGb) / 1024 ** 3,
      ),
    ];
    const runs = (c: Record<'hot' | 'spread', MeasuredCapacity>, what: string) =>
      `${c.hot.requests} ${what} on one link at ${c.hot.perSecond.toFixed(0)}/s, ${c.spread.requests} spread over ${settings.hotlinkSpreadLinks} links at ${c.spread.perSecond.toFixed(0)}/s`;
    const [vHot, vSpread, aHot, aSpread] = [
      total(visit, 2),
      total(visit, 3),
      total(action, 2),
      total(action, 3),
    ];
    const miss = (
      what: string,
      value: number,
      goal: number,
      ls: Line[],
      i: 2 | 3,
      units: ReturnType<typeof unitsOf>,
    ) =>
      value > goal &&
      `Cost model: ${usd(value)} per million ${what} (goal ≤ ${usd(goal)}); the biggest items: ${biggest(ls, i, units)}.`;
    return {
      body: [
        `USD per million requests. DynamoDB is measured on the wire: every item the stack read or wrote by key while it served a run and until its stream consumers were done with it (the counting proxy's item tracking), priced per kind of item by the item's size read back from the table, with DynamoDB's rules (\`scripts/bench/capacity.ts\`): 1 WRU per KB for a standard write, 2 per KB for every item of a transaction (ConditionCheck included), 1 per KB for each index copy a write rewrites (2 for a ranking entry, whose value is GSI4's sort key: its copy is deleted and put again), 1 RRU per 4 KB for a strongly consistent read, half for an eventually consistent one. The rollups are amortised over the visits of the run: how many visits one rollup transaction counts depends on how many come in one stream batch, so the figures hold at the rate measured (${runs(visits, 'visits')}; ${runs(actions, 'API actions')}). The authorizer's key lookups are left out (cached per key in AWS). Prices: Lambda arm64 $${P.lambdaArmGbSecond} per GB-s and $${P.lambdaPerMillionRequests} per million requests; HTTP API $${P.httpApiPerMillion.toFixed(2)}/M; DynamoDB on-demand $${P.dynamoPerMillionWru}/M WRU, $${P.dynamoPerMillionRru}/M RRU; SQS $${P.sqsPerMillionRequests.toFixed(2)}/M; CloudWatch Logs $${P.cloudWatchLogsPerGb.toFixed(2)}/GB; transfer out $${P.dataTransferOutPerGb.toFixed(2)}/GB (AWS us-east-1 public list prices as known to the author (pricing pages, 2025); not fetched live).`,
        '**Per million visits** (`GET /r/{code}`):',
        costTable(visit),
        '**DynamoDB units per visit**, by item (writes / transaction checks per visit; WRU with the index copies’ share; RRU):',
        unitsTable(visits),
        burst
          ? `**One link at a viral rate**: the hot-link part's burst of ${measured!.burst!.requests.toLocaleString('en-US')} visits written into the table at ${measured!.burst!.perSecond.toFixed(0)}/s and counted by the stream consumer (full batches) used ${(burst.wru - 2).toFixed(2)} WRU and ${(burst.rru - 2).toFixed(2)} RRU a visit besides what a request itself does (its visitor marker, 1 WRU, its visit item, and its two reads, 2 RRU): ${burst.wru.toFixed(2)} WRU and ${burst.rru.toFixed(2)} RRU in all, so **${usd(burst.total)} per million visits** with the other lines as on one link above.`
          : '',
        '**Per million API actions** (`POST /api/v1/action/referral_link`):',
        costTable(action),
        '**DynamoDB units per API action**, by item:',
        unitsTable(actions),
        '**Add-on per million webhook deliveries** (events of a campaign with a `webhook_url`; the totals above are for campaigns without one, whose events are in the feed only):',
        costTable(webhook),
        `Assumptions:

- Item sizes are those of the items this run wrote, read back, with DynamoDB’s size rules (names + values); an UpdateItem is priced at the item’s size after it.
- The runs' visits are all unique (each comes from a visitor of its own, as on a link that goes viral), the worst case for the rollups: each raises the \`unique_visits\` rankings and series counters too. On one link a stream batch's visits share their rollup items; spread over many links, nearly every visit in a batch is its link's only one, so it writes its link's and its referrer's series (hour and day) and rankings (visits, unique visits) and its link's \`total_clicks\` (the link item alone: no index copies a counter) by itself.
- Each visit is an event: the stream consumer writes it into the events feed (the events of one feed transaction share one deflated feed item, 2 WRU per KB; an action's event has no lookup item, redelivery reads the action item itself) and reads the campaigns of each batch once to decide which events go on the webhook queue (none here). All of it is in the measured units.
- Lambda duration uses the handler’s p50 through the local gateway against DynamoDB Local; in AWS, DynamoDB answers in single-digit ms, so this is an upper-end guess. At 256 MB each millisecond costs $0.0033 per million.
- The stream consumer: ${CONSUMER_BATCH_MS} ms per full batch of 100 plus ${CONSUMER_TRANSACTION_MS} ms per rollup transaction (assumed; the transactions are measured). At low traffic a batch holds fewer records, so more transactions per visit: the rollups cost more per visit than measured here.
- Cold starts: ${COLD_SHARE * 100} % of invocations, INIT billed at the function’s memory; the import time is the function’s median import CPU time (part 4; 0 when it did not run).
- SQS requests (webhook add-on) assume full batches of 10 on send, receive and delete.
- Not included: storage ($0.25/GB-month: a visit leaves a visit item of about 0.8 KB and its share of a feed item, a few hundred bytes for 30 days), the stream's own storage, CloudWatch alarms, data transfer of API responses.`,
      ],
      summary: `Cost model: ${usd(vHot)} per million visits on one link${burst ? ` (${usd(burst.total)} in a burst at ${measured!.burst!.perSecond.toFixed(0)}/s)` : ''}, ${usd(vSpread)} spread; ${usd(aHot)} per million API actions on one link, ${usd(aSpread)} spread; +${usd(total(webhook, 2))} per million webhook POSTs.`,
      findings: [
        miss('visits on one hot link', vHot, VISIT_GOAL, visit, 2, unitsOf(visits.hot)),
        miss(
          `visits spread over ${settings.hotlinkSpreadLinks} links`,
          vSpread,
          VISIT_GOAL,
          visit,
          3,
          unitsOf(visits.spread),
        ),
        miss('API actions on one link', aHot, ACTION_GOAL, action, 2, unitsOf(actions.hot)),
        miss(
          `API actions spread over ${settings.hotlinkSpreadLinks} links`,
          aSpread,
          ACTION_GOAL,
          action,
          3,
          unitsOf(actions.spread),
        ),
      ],
      data: {
        visit: { hot: vHot, spread: vSpread },
        action: { hot: aHot, spread: aSpread },
        webhook: total(webhook, 2),
        visitUnits: { hot: unitsOf(visits.hot), spread: unitsOf(visits.spread) },
        actionUnits: { hot: unitsOf(actions.hot), spread: unitsOf(actions.spread) },
        sizes: Object.fromEntries(
          [...visits.hot.usage, ...actions.spread.usage].map((u: KindUsage) => [u.kind, u.bytes]),
        ),
      },
    };
  },
};
