/**
 * The bench's results as sections of tables (Markdown for bench/results.md, plain text for the
 * console) with Mermaid charts, which the code host renders, and the summary and goals-missed lists.
 */

import type { OutageResult } from '../../test/support/outage.ts';
import { BUDGET_DESCRIPTIONS, BUNDLE_BUDGETS, budgetClassOf } from './bundles.ts';
import { type CallsResult, formatOps } from './calls.ts';
import type { ColdStartResult } from './coldstart.ts';
import { type CostLine, type CostModel, PRICES } from './cost.ts';
import type { LatencyRow } from './latency.ts';
import type { LoadResultSet } from './load.ts';
import type { ScaleResult } from './scale.ts';
import { kib, ms, ratio } from './stats.ts';
import type { IsolationOutcome, IsolationResult, WebhookOutcome } from './webhooks.ts';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  os: string;
  loadAverageStart: string;
  loadAverageEnd: string;
}

export type Phase<T> = { ok: true; value: T } | { ok: false; reason: string };

export interface BenchResults {
  date: string;
  quick: boolean;
  seconds: number;
  machine: Machine;
  settings: Record<string, string | number>;
  calls: Phase<CallsResult>;
  latency: Phase<LatencyRow[]>;
  load: Phase<LoadResultSet>;
  coldStart: Phase<ColdStartResult>;
  webhooks: Phase<WebhookOutcome>;
  isolation: Phase<IsolationOutcome>;
  outage: Phase<OutageResult>;
  scale: Phase<ScaleResult>;
  cost: Phase<CostModel>;
  /** Route-table rows the bench has no request for. */
  unmeasuredRoutes: string[];
}

export const LATENCY_GOAL = 1.25;
/** Contract: another campaign's first attempt starts within 1 s of its event, whatever others do. */
export const ISOLATION_GOAL_MS = 1000;
export const COLD_GOAL = 1.15;
const PAGE_NOISE = 1.25;

type Cell = string | number;
interface Table {
  headers: string[];
  rows: Cell[][];
}
/** A section's body: prose and charts (Markdown only) and tables (Markdown and console). */
type Part = string | Table;

const mdTable = ({ headers, rows }: Table) => {
  const line = (cells: Cell[]) => `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
};

export function textTable({ headers, rows }: Table): string {
  const cells = [headers, ...rows].map((r) => r.map(String));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [fmt(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(fmt)].join('\n');
}

/**
 * A Mermaid `xychart-beta` block (rendered by the code host, no code of ours): one bar per row
 * for our figure, and the floor as a line across the same rows.
 */
export function mermaidChart(
  title: string,
  unit: string,
  rows: Array<{ label: string; value: number; floor: number }>,
): string {
  const num = (v: number) => (Number.isFinite(v) ? Number(v.toFixed(2)) : 0);
  const max = Math.max(...rows.flatMap((r) => [num(r.value), num(r.floor)]), 1);
  return [
    '```mermaid',
    'xychart-beta',
    `  title "${title}"`,
    `  x-axis [${rows.map((r) => JSON.stringify(r.label)).join(', ')}]`,
    `  y-axis "${unit}" 0 --> ${Math.ceil(max * 1.1)}`,
    `  bar [${rows.map((r) => num(r.value)).join(', ')}]`,
    `  line [${rows.map((r) => num(r.floor)).join(', ')}]`,
    '```',
  ].join('\n');
}

const pct = (value: number, floor: number) =>
  `${value >= floor ? '+' : ''}${(((value - floor) / floor) * 100).toFixed(0)} %`;
const usd = (v: number) =>
  v >= 0.1 ? `$${v.toFixed(2)}` : v >= 0.001 ? `$${v.toFixed(3)}` : v > 0 ? `$${v.toFixed(4)}` : '$0';
const yes = (ok: boolean, no = 'NO') => (ok ? 'yes' : no);
const goalPct = `≤ +${Math.round((COLD_GOAL - 1) * 100)} %`;
const pageVerdict = (s: ScaleResult) => {
  const near = (x: number) => x <= PAGE_NOISE && x >= 1 / PAGE_NOISE;
  if (near(s.pages.ratio)) return 'same within noise';
  return near(s.pages.floorLast.p50 / s.pages.floorFirst.p50)
    ? 'DIFFERENT'
    : 'different, and so is the floor';
};
const costTable = (lines: CostLine[]): Table => ({
  headers: ['component', 'per request', 'USD per million'],
  rows: [
    ...lines.map((l) => [l.component, l.quantity, usd(l.perMillion)]),
    ['**total**', '', `**${usd(lines.reduce((a, l) => a + l.perMillion, 0))}**`],
  ],
});

function calls(c: CallsResult): Part[] {
  return [
    'Counted by the proxy between the stack and DynamoDB Local (`scripts/bench/proxy-server.ts`) by `X-Amz-Target`, never by the handlers: one request at a time once the table has been quiet for 250 ms, counters diffed around each, 3 samples per row. Budget: the route’s `dynamoCalls` in `lib/routes.ts`, which `test/integration/round-trips.test.ts` also enforces. The authorizer’s api-key GetItem (a separate Lambda in AWS, cached 60 s per key), id-block reservations (one UpdateItem per 100 ids) and background work (stream polls, webhook deliveries, the stream consumer’s writes) are told apart by what they touch and not counted. Each `POST /api/v1/action/referred_user` is the first action of a referred user made for it: the worst case.',
    {
      headers: [
        'endpoint',
        'DynamoDB calls (by operation)',
        'calls',
        'budget',
        'result',
        'authorizer GetItem',
      ],
      rows: c.rows.map((r) => [
        r.label,
        formatOps(r.ops) + (r.varied ? ' (samples varied: max shown)' : ''),
        r.calls,
        `≤ ${r.budget}`,
        r.pass ? 'PASS' : 'OVER',
        r.authorizerCalls || '—',
      ]),
    },
  ];
}

function latency(rows: LatencyRow[]): Part[] {
  const ids = rows.filter((x) => x.idBlocksPerRequest > 0);
  return [
    `${rows[0]?.n} sequential requests per endpoint over one keep-alive connection, after a warm-up, through the local gateway (payload 2.0 event, authorizer, middy handler, validation, serialisation). ` +
      'The floor is the DynamoDB requests the stack made for one request of the endpoint (the local authorizer’s api-key GetItem included), recorded by the counting proxy and replayed as recorded through a bare AWS SDK client with keep-alive (`scripts/bench/floor.ts`): the same operations, keys, item sizes, consistency and order (calls that overlapped are sent together), without our code. ' +
      'A replayed write meets the state the recorded one left, so a write guarded by a condition (a new item’s Put, a Delete of an item now gone) is refused: the same round trip (DynamoDB reads the item and evaluates the condition), no write; the floor column names them. ' +
      `Floor runs are interleaved with the requests (${rows[0]?.floorN} per endpoint) so both see the same background load, and both go through the proxy. The last column counts every stack DynamoDB call during the run per request, background work it set off and id blocks included.`,
    {
      headers: [
        'endpoint',
        'n (floor n)',
        'p50 ms',
        'floor p50',
        'ratio p50',
        `≤ ${LATENCY_GOAL}`,
        'p99 ms',
        'floor p99',
        'floor: DynamoDB requests replayed',
        'stack calls/request',
      ],
      rows: rows.map((r) => [
        r.label,
        `${r.n} (${r.floorN})`,
        ms(r.stack.p50),
        ms(r.floor.p50),
        ratio(r.stack.p50, r.floor.p50),
        Number.isFinite(r.ratioP50) ? yes(r.ratioP50 <= LATENCY_GOAL) : '—',
        ms(r.stack.p99),
        ms(r.floor.p99),
        r.floorOps + (r.floorRefused.length ? ` (refused on replay: ${r.floorRefused.join(', ')})` : ''),
        r.stackCallsPerRequest.toFixed(2),
      ]),
    },
    mermaidChart(
      'p50 latency: bars through the gateway, line the floor',
      'ms',
      rows.map((x) => ({ label: x.key, value: x.stack.p50, floor: x.floor.p50 })),
    ),
    ids.length
      ? `Id-block reservations: ${ids.map((x) => `${x.label} ${x.idBlocksPerRequest.toFixed(3)}`).join(', ')} per request.`
      : '',
  ];
}

function load({ rows, floors }: LoadResultSet): Part[] {
  return [
    `autocannon in a child process, ${rows[0]?.connections ?? 32} connections against the local gateway, each endpoint on one fresh hot link (every request raises the same counter), the webhook pipeline idle at the start. autocannon runs in amount mode (a calibration run sets the rate, the main run sends what fills the duration at it), so every request is answered and "accepted" is exact: the links’ total_clicks must equal the accepted responses of both runs. "Cancelled tx" counts transactions DynamoDB Local rejected for a concurrent one (retried). ` +
      `The floor is the endpoint’s recorded DynamoDB requests (the latency floor’s replay, its conditional writes refused) run by as many concurrent loops for ${floors[0]?.seconds.toFixed(0) ?? 5} s. Everything shares the same cores here; in AWS each request gets its own Lambda.`,
    {
      headers: [
        'endpoint',
        'connections',
        'seconds',
        'requests',
        'accepted',
        'req/s',
        'errors',
        'other statuses',
        'p50 / p99 ms',
        'cancelled tx per request',
        'floor ops/s',
        'total_clicks = accepted',
      ],
      rows: rows.map((r) => [
        r.label,
        r.connections,
        r.seconds.toFixed(1),
        r.requests,
        `${r.accepted} (${r.acceptedStatus})`,
        r.requestsPerSecond.toFixed(0),
        r.errors,
        r.rejected,
        `${r.latency.p50} / ${r.latency.p99}`,
        r.cancelledTransactionsPerRequest.toFixed(2),
        floors.find((f) => f.label === r.label)?.operationsPerSecond.toFixed(0) ?? 'n/a',
        `${r.counter.actual} vs ${r.counter.expected}: ${r.counter.pass ? 'PASS' : 'FAIL'}`,
      ]),
    },
  ];
}

const CLIENTS = { dynamodb: 'DynamoDB', 'dynamodb-sqs': 'DynamoDB + SQS', sqs: 'SQS' } as const;
type ColdRow = ColdStartResult['rows'][number];
/** A function's floor: the bundle of the SDK clients it uses alone (DynamoDB's for one with none). */
const floorFor = (c: ColdStartResult, r: ColdRow) => c.floors?.[r.floor] ?? c.floor;

function cold(c: ColdStartResult): Part[] {
  const goal = (r: ColdRow, value: number, floor: number) => {
    if (r.usesAwsSdk) return yes(value <= floor * COLD_GOAL);
    if (budgetClassOf(r) === 'docs') return value < floor ? 'below' : 'n/a (docs)';
    return value < floor * 0.5 ? 'far below' : value < floor ? 'below' : 'NO';
  };
  const largest = c.rows.filter((r) => r.usesDynamo).sort((a, b) => b.bytes - a.bytes)[0];
  const delta = largest
    ? Object.entries(largest.packages)
        .map(([p, bytes]) => [p, bytes - (floorFor(c, largest).packages[p] ?? 0)] as const)
        .filter(([, d]) => Math.abs(d) >= 1024)
        .sort((a, b) => b[1] - a[1])
    : [];
  const floors = Object.entries(c.floors ?? { dynamodb: c.floor }) as Array<[keyof typeof CLIENTS, ColdRow]>;
  return [
    `Every function bundled as the CDK stack bundles it (\`infra/bundling.ts\`; build ${c.buildSeconds.toFixed(1)} s). Import time: median of ${c.floor.runs.length} fresh \`node\` processes importing \`index.mjs\`, round-robin, with \`--enable-source-maps\` and the function’s environment. Each function’s floor is a bundle of the AWS SDK clients it uses and nothing else, one command each (\`scripts/bench/floors/\`): DynamoDB for the HTTP functions, DynamoDB + SQS for the consumers that also send to SQS; a function without an SDK client is held to the DynamoDB floor. Goal: within 15 % of its floor for every function with an SDK client. Budgets (\`test/unit/bundle-size.test.ts\`): ${Object.entries(
      BUNDLE_BUDGETS,
    )
      .map(([k, v]) => `${BUDGET_DESCRIPTIONS[k as keyof typeof BUNDLE_BUDGETS]} ${kib(v)} KiB`)
      .join('; ')}.`,
    {
      headers: [
        'function',
        'floor (SDK clients)',
        'KiB',
        'vs floor',
        goalPct,
        'budget KiB',
        'import ms (median)',
        'vs floor',
        goalPct,
      ],
      rows: [
        ...c.rows.map((r) => {
          const budget = BUNDLE_BUDGETS[budgetClassOf(r)];
          const f = floorFor(c, r);
          return [
            r.name,
            r.usesAwsSdk ? CLIENTS[r.floor] : 'no SDK (DynamoDB floor)',
            kib(r.bytes),
            pct(r.bytes, f.bytes),
            goal(r, r.bytes, f.bytes),
            `${kib(budget)} (${r.bytes <= budget ? 'ok' : 'OVER'})`,
            ms(r.importMs),
            pct(r.importMs, f.importMs),
            goal(r, r.importMs, f.importMs),
          ];
        }),
        ...floors.map(([name, f]) => [
          `**floor: ${CLIENTS[name]}**`,
          CLIENTS[name],
          kib(f.bytes),
          '—',
          '—',
          '—',
          ms(f.importMs),
          '—',
          '—',
        ]),
      ],
    },
    mermaidChart(
      'Bundle size: bars the function, line its floor',
      'KiB',
      c.rows.map((x) => ({ label: x.name, value: x.bytes / 1024, floor: floorFor(c, x).bytes / 1024 })),
    ),
    mermaidChart(
      'Cold import (median): bars the function, line its floor',
      'ms',
      c.rows.map((x) => ({ label: x.name, value: x.importMs, floor: floorFor(c, x).importMs })),
    ),
    largest ? `What the largest DynamoDB function (${largest.name}) carries beyond its floor (≥ 1 KiB):` : '',
    { headers: ['package or folder', 'KiB more than the floor'], rows: delta.map(([p, d]) => [p, kib(d)]) },
  ];
}

function webhooks(w: WebhookOutcome): Part[] {
  if (!w.available) return [`Not available yet: ${w.reason}.`];
  return [
    'Through the local pipeline as `npm start` runs it: table stream → stream poller → stream consumer → local SQS → queue poller → delivery → a node:http receiver (the campaign’s webhook_url). Latency: actions through the API, each timed from its 201 to its delivery. Backlog: action items written straight into the table (exactly like the handler’s), drained by the pipeline. Every delivery is verified with `standardwebhooks`. The floor is the last hop alone: the same body signed and POSTed to the same receiver. Most of the latency is polling (the local stream poller reads every 150 ms); in AWS the mappings poll continuously. Endpoint 5’s actions take one stream hop more (the stream consumer writes their action item).',
    {
      headers: ['measure', 'pipeline', 'floor (direct signed POST)'],
      rows: [
        [
          `latency, ${w.latency.events} actions one every ${w.latency.paceMs} ms: p50`,
          `${ms(w.latency.p50)} ms`,
          `${ms(w.floorLatency.p50)} ms`,
        ],
        ['latency p95', `${ms(w.latency.p95)} ms`, `${ms(w.floorLatency.p95)} ms`],
        ['latency max', `${ms(w.latency.max)} ms`, ''],
        [
          `latency, ${w.userActionLatency.events} actions of a referred user (endpoint 5): p50 / p95 / max`,
          `${ms(w.userActionLatency.p50)} / ${ms(w.userActionLatency.p95)} / ${ms(w.userActionLatency.max)} ms`,
          '',
        ],
        [
          `backlog of ${w.backlog.events} written in ${w.backlog.writeSeconds.toFixed(1)} s: deliveries/s, first to last`,
          w.backlog.deliveriesPerSecond.toFixed(0),
          `${w.floorDeliveriesPerSecond.toFixed(0)} (10 at a time)`,
        ],
        ['deliveries/s after the last write', w.backlog.drainPerSecond.toFixed(0), ''],
        ['first write to last delivery', `${w.backlog.totalSeconds.toFixed(1)} s`, ''],
        [
          'not delivered / duplicates / verified / failed verification',
          `${w.latency.missing + w.userActionLatency.missing + w.backlog.missing} / ${w.duplicates} / ${w.verified} / ${w.verifyFailures}`,
          '',
        ],
        ['actions without metadata delivered', `${w.emptyMetadata.delivered} of ${w.emptyMetadata.sent}`, ''],
      ],
    },
  ];
}

function isolation(i: IsolationOutcome): Part[] {
  if (!i.available) return [`Not available yet: ${i.reason}.`];
  const row = (label: string, pick: (l: IsolationResult['alone']) => Cell) => [
    label,
    pick(i.alone),
    pick(i.beside),
  ];
  return [
    `A healthy campaign's actions, one every ${i.paceMs} ms for ${i.seconds} s, each timed from its 201 to its first attempt: alone, then while ${i.receivers.length} other campaigns' receivers misbehave with ${i.backlogPerReceiver} pending events each. Contract: under ${ISOLATION_GOAL_MS} ms whatever the others do (the lanes of lib/webhooks/lanes.ts).`,
    {
      headers: [
        'healthy campaign, first attempt (201 → arrival)',
        'alone',
        `beside ${i.receivers.length} bad receivers`,
      ],
      rows: [
        row(`events (one every ${i.paceMs} ms for ${i.seconds} s)`, (l) => l.events),
        row('p50', (l) => `${ms(l.p50)} ms`),
        row('p99', (l) => `${ms(l.p99)} ms`),
        row('max', (l) => `${ms(l.max)} ms`),
        row('not delivered', (l) => l.missing),
      ],
    },
    {
      headers: [
        'bad receiver',
        'behaviour',
        'requests in the run',
        'in its first 14 s (before any 15 s timeout)',
      ],
      rows: i.receivers.map((x) => [x.name, x.behaviour, x.requests, x.beforeFirstTimeout]),
    },
  ];
}

function outage(o: OutageResult): Part[] {
  const statuses = Object.entries(o.duringOutage)
    .map(([status, n]) => `${n} × ${status === '0' ? 'no answer' : status}`)
    .join(', ');
  return [
    'DynamoDB Local paused (SIGSTOP) under keyed writes (actions, signups), each retried with its `Idempotency-Key` after a 5xx, a 409 in progress or a dropped connection. DynamoDB calls have a 5 s deadline and the authorizer 2 s: a 503 with `Retry-After` within about 7 s, never a 500 or a hang; afterwards every counter equals the keys that got a 2xx.',
    {
      headers: ['measure', 'value'],
      rows: [
        [
          'DynamoDB paused',
          `${(o.pauseMs / 1000).toFixed(1)} s, under ${o.logicalRequests} keyed writes (${o.attempts} attempts)`,
        ],
        ['answers to attempts made during the pause', statuses || 'none'],
        ['Retry-After of the 503s', o.retryAfterValues.join(', ') || '—'],
        ['longest wait for an answer during the pause', `${ms(o.slowestAnswerDuringOutageMs)} ms`],
        ['from the resume to the first 2xx of a new attempt', `${ms(o.recoveryMs)} ms`],
        ['total_clicks: keys answered 2xx / counted', `${o.clicks.expected} / ${o.clicks.counted}`],
        ['total_referrals: keys answered 2xx / counted', `${o.referrals.expected} / ${o.referrals.counted}`],
        ['retries answered from a stored answer', o.replays],
      ],
    },
  ];
}

function scale(s: ScaleResult): Part[] {
  const purge = s.purge.available
    ? s.purge.finished
      ? `${s.purge.seconds.toFixed(1)} s (${s.purge.itemsPerSecond.toFixed(0)} items/s; every link key read back: ${s.purge.remaining} left)`
      : `not finished after ${s.purge.seconds.toFixed(0)} s: ${s.purge.remaining} links left`
    : `not available yet: ${s.purge.reason}`;
  return [
    `${s.links.toLocaleString('en-US')} links written straight into the table in the item shape \`createLink\` writes (BatchWriteItem, ${s.loadSeconds.toFixed(1)} s). First and last page of the campaign’s list (limit 100) timed ${s.pages.samples} times each, interleaved; the last page through a cursor built by \`encodeCursor\`. The floor is each page’s DynamoDB requests, recorded and replayed (as in part 2).`,
    {
      headers: ['measure', 'through the gateway', 'floor (DynamoDB requests replayed)'],
      rows: [
        [
          'first page p50 (p95)',
          `${ms(s.pages.first.p50)} ms (${ms(s.pages.first.p95)})`,
          `${ms(s.pages.floorFirst.p50)} ms`,
        ],
        [
          'last page p50 (p95)',
          `${ms(s.pages.last.p50)} ms (${ms(s.pages.last.p95)})`,
          `${ms(s.pages.floorLast.p50)} ms`,
        ],
        [
          'last / first at p50',
          `${s.pages.ratio.toFixed(2)} (${pageVerdict(s)})`,
          (s.pages.floorLast.p50 / s.pages.floorFirst.p50).toFixed(2),
        ],
        ['last page holds the last 100 links, no next cursor', yes(s.pages.lastPageOk), ''],
        ['DELETE of the campaign answered 204 in', `${ms(s.deleteMs)} ms`, ''],
        ['from the 204 until no item of it remains', purge, ''],
      ],
    },
  ];
}

function cost(c: CostModel): Part[] {
  const p = PRICES;
  return [
    `USD per million requests, from the calls counted above, the sizes of items this run wrote (campaign ${c.sizes.campaign} B, link ${c.sizes.link} B, visit action ${c.sizes.visitAction} B, API action ${c.sizes.linkAction} B) and the durations measured above. Prices used on ${c.date}: Lambda arm64 $${p.lambdaArmGbSecond} per GB-s and $${p.lambdaPerMillionRequests} per million requests; HTTP API $${p.httpApiPerMillion.toFixed(2)}/M; DynamoDB on-demand $${p.dynamoPerMillionWru}/M WRU, $${p.dynamoPerMillionRru}/M RRU; SQS $${p.sqsPerMillionRequests.toFixed(2)}/M; EventBridge Pipes $${p.pipesPerMillionRequests.toFixed(2)}/M; Streams reads $${p.streamsPerMillionReadRequests.toFixed(2)}/M (free for Lambda); CloudWatch Logs $${p.cloudWatchLogsPerGb.toFixed(2)}/GB; transfer out $${p.dataTransferOutPerGb.toFixed(2)}/GB (${p.source}).`,
    '**Per million visits** (`GET /r/{code}`):',
    costTable(c.visit),
    '**Per million actions** (`POST /api/v1/action/referral_link`):',
    costTable(c.action),
    '**Add-on per million webhook deliveries** (the event pipeline is already in both totals above):',
    costTable(c.webhook),
    `Assumptions:\n\n${c.assumptions.map((a) => `- ${a}`).join('\n')}`,
  ];
}

/** Every section, in report order, with its body or why it did not run. */
function sections(r: BenchResults): Array<[string, Phase<Part[]>]> {
  const body = <T>(p: Phase<T>, f: (v: T) => Part[]): Phase<Part[]> =>
    p.ok ? { ok: true, value: f(p.value) } : p;
  return [
    ['1. DynamoDB calls per request (warm)', body(r.calls, calls)],
    ['2. Latency through the local gateway vs the DynamoDB floor', body(r.latency, latency)],
    ['3. Throughput under load, and exact counters', body(r.load, load)],
    ['4. Cold start: bundle size and import time vs the floor', body(r.coldStart, cold)],
    ['5. Webhooks: from the 201 to the signed delivery', body(r.webhooks, webhooks)],
    ['5b. Isolation: a healthy campaign beside slow and failing receivers', body(r.isolation, isolation)],
    ['5c. A DynamoDB outage: what a client sees, and the recovery', body(r.outage, outage)],
    ['6. Scale: a campaign with many links', body(r.scale, scale)],
    ['7. Cost model (on paper)', body(r.cost, cost)],
  ];
}

/** Figures that miss a goal or a budget, and anything broken: the report's first list. */
export function findings(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.calls.ok)
    for (const x of r.calls.value.rows.filter((x) => !x.pass))
      out.push(
        `DynamoDB calls: ${x.label} makes ${x.calls} calls (${formatOps(x.ops)}), budget ${x.budget}.`,
      );
  if (r.latency.ok) {
    const over = r.latency.value.filter((x) => x.ratioP50 > LATENCY_GOAL);
    if (over.length)
      out.push(
        `Latency: p50 over ${LATENCY_GOAL}× the floor for ${over.map((x) => `${x.label} (${ratio(x.stack.p50, x.floor.p50)}×, ${ms(x.stack.p50)} vs ${ms(x.floor.p50)} ms)`).join('; ')}.`,
      );
  }
  if (r.load.ok)
    for (const x of r.load.value.rows) {
      if (!x.counter.pass)
        out.push(
          `Counters: ${x.label}: total_clicks ${x.counter.actual} after ${x.counter.expected} accepted requests.`,
        );
      if (x.errors || x.rejected)
        out.push(`Load: ${x.label}: ${x.errors} errors, ${x.rejected} responses with other statuses.`);
    }
  if (r.coldStart.ok) {
    const c = r.coldStart.value;
    const rows = c.rows;
    const sdk = rows.filter((x) => x.usesAwsSdk);
    for (const [what, of, unit, fmt] of [
      ['Bundle size', (x: ColdRow) => x.bytes, 'KiB', kib],
      ['Cold import', (x: ColdRow) => x.importMs, 'ms', ms],
    ] as const) {
      const over = sdk.filter((x) => of(x) > of(floorFor(c, x)) * COLD_GOAL);
      if (!over.length) continue;
      const worst = over.sort((a, b) => of(b) / of(floorFor(c, b)) - of(a) / of(floorFor(c, a)))[0]!;
      out.push(
        `${what}: ${over.length} of ${sdk.length} functions with an SDK client are more than ${Math.round((COLD_GOAL - 1) * 100)} % above their floor; the furthest is ${worst.name}, ${fmt(of(worst))} ${unit} (${pct(of(worst), of(floorFor(c, worst)))} over the ${CLIENTS[worst.floor]} floor).`,
      );
    }
    for (const x of rows.filter((x) => x.bytes > BUNDLE_BUDGETS[budgetClassOf(x)]))
      out.push(`Bundle budget exceeded: ${x.name} is ${kib(x.bytes)} KiB.`);
  }
  if (r.webhooks.ok && r.webhooks.value.available) {
    const w = r.webhooks.value;
    if (w.emptyMetadata.delivered < w.emptyMetadata.sent)
      out.push(
        `Webhooks: ${w.emptyMetadata.sent - w.emptyMetadata.delivered} of ${w.emptyMetadata.sent} actions without metadata were never delivered.`,
      );
    if (w.latency.missing + w.backlog.missing)
      out.push(
        `Webhooks: ${w.latency.missing + w.backlog.missing} events were not delivered within the wait.`,
      );
    if (w.verifyFailures)
      out.push(`Webhooks: ${w.verifyFailures} deliveries failed standardwebhooks verification.`);
  }
  if (r.isolation.ok && r.isolation.value.available) {
    const { beside } = r.isolation.value;
    if (beside.max >= ISOLATION_GOAL_MS || beside.missing)
      out.push(
        `Webhook isolation: beside slow and failing receivers, a healthy campaign's first attempt took up to ${ms(beside.max)} ms after its 201 (goal: under ${ISOLATION_GOAL_MS} ms), ${beside.missing} not delivered.`,
      );
  }
  if (r.outage.ok) {
    const o = r.outage.value;
    if (o.clicks.counted !== o.clicks.expected || o.referrals.counted !== o.referrals.expected)
      out.push(
        `DynamoDB outage: counters off after retries (clicks ${o.clicks.counted} for ${o.clicks.expected} keys, referrals ${o.referrals.counted} for ${o.referrals.expected}).`,
      );
  }
  if (r.scale.ok) {
    const s = r.scale.value;
    if (!s.pages.lastPageOk)
      out.push('Scale: the last page did not hold the last 100 links, or still had a next cursor.');
    if (pageVerdict(s) !== 'same within noise')
      out.push(
        `Scale: the last page's p50 is ${s.pages.ratio.toFixed(2)}× the first page's; the floor shows ${(s.pages.floorLast.p50 / s.pages.floorFirst.p50).toFixed(2)}× (${pageVerdict(s) === 'DIFFERENT' ? 'so the difference is in our code' : 'so it is DynamoDB Local’s own'}).`,
      );
    if (s.purge.available && !s.purge.finished)
      out.push(`Scale: the purge left ${s.purge.remaining} links after ${s.purge.seconds.toFixed(0)} s.`);
  }
  for (const [title, phase] of sections(r))
    if (!phase.ok) out.push(`Part ${title.split(':')[0]} did not run: ${phase.reason}`);
  if (r.unmeasuredRoutes.length)
    out.push(`Routes without a request recipe in the bench: ${r.unmeasuredRoutes.join(', ')}.`);
  return out;
}

/** One line per part: the summary. */
export function headline(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.calls.ok) {
    const rows = r.calls.value.rows;
    out.push(
      `DynamoDB calls per request: ${rows.filter((x) => x.pass).length} of ${rows.length} rows within their route budgets.`,
    );
  }
  if (r.latency.ok) {
    const rows = r.latency.value.filter((x) => Number.isFinite(x.ratioP50));
    const ratios = rows.map((x) => x.ratioP50);
    out.push(
      `Latency p50 vs floor: ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× (goal ≤ ${LATENCY_GOAL}); ${rows.filter((x) => x.ratioP50 <= LATENCY_GOAL).length} of ${rows.length} endpoints meet it.`,
    );
  }
  if (r.load.ok) {
    const { rows, floors } = r.load.value;
    out.push(
      `Throughput: ${rows.map((x) => `${x.label} ${x.requestsPerSecond.toFixed(0)} req/s`).join('; ')} (floors: ${floors.map((x) => `${x.operationsPerSecond.toFixed(0)} ops/s`).join(', ')}); counters ${rows.every((x) => x.counter.pass) ? 'exact in every run' : 'WRONG'}.`,
    );
  }
  if (r.coldStart.ok) {
    const c = r.coldStart.value;
    const { rows, floor } = c;
    const dyn = rows.filter((x) => x.usesAwsSdk && (x.floor ?? 'dynamodb') === 'dynamodb');
    const range = (of: (x: (typeof rows)[number]) => number, f: (n: number) => string) =>
      `${f(Math.min(...dyn.map(of)))}–${f(Math.max(...dyn.map(of)))}`;
    const within = rows.filter((x) => x.usesAwsSdk && x.bytes <= floorFor(c, x).bytes * COLD_GOAL);
    out.push(
      `Bundles: DynamoDB-only functions ${range((x) => x.bytes, kib)} KiB vs their floor ${kib(floor.bytes)} KiB, import ${range((x) => x.importMs, ms)} ms vs ${ms(floor.importMs)} ms; ${within.length} of ${rows.filter((x) => x.usesAwsSdk).length} functions with an SDK client within +15 % of their own floor in size.`,
    );
  }
  if (r.webhooks.ok && r.webhooks.value.available) {
    const w = r.webhooks.value;
    out.push(
      `Webhooks: 201 → delivery p50 ${ms(w.latency.p50)} ms, p95 ${ms(w.latency.p95)} ms (endpoint 5: p50 ${ms(w.userActionLatency.p50)} ms); backlog of ${w.backlog.events} at ${w.backlog.deliveriesPerSecond.toFixed(0)} deliveries/s.`,
    );
  }
  if (r.isolation.ok && r.isolation.value.available) {
    const i = r.isolation.value;
    out.push(
      `Webhook isolation: first attempt p50 ${ms(i.beside.p50)} ms, p99 ${ms(i.beside.p99)} ms beside ${i.receivers.length} bad receivers (alone: p50 ${ms(i.alone.p50)} ms, p99 ${ms(i.alone.p99)} ms).`,
    );
  }
  if (r.outage.ok) {
    const o = r.outage.value;
    out.push(
      `DynamoDB outage (${(o.pauseMs / 1000).toFixed(0)} s): answers within ${ms(o.slowestAnswerDuringOutageMs)} ms (${Object.keys(o.duringOutage).join('/')}), recovery ${ms(o.recoveryMs)} ms, counters ${o.clicks.counted === o.clicks.expected && o.referrals.counted === o.referrals.expected ? 'exact' : 'OFF'}.`,
    );
  }
  if (r.scale.ok) {
    const s = r.scale.value;
    out.push(
      `Scale (${s.links.toLocaleString('en-US')} links): first page ${ms(s.pages.first.p50)} ms, last page ${ms(s.pages.last.p50)} ms; purge ${s.purge.available ? (s.purge.finished ? `${s.purge.seconds.toFixed(1)} s` : `unfinished (${s.purge.remaining} left)`) : 'not available yet'}.`,
    );
  }
  if (r.cost.ok) {
    const t = r.cost.value.totals;
    out.push(
      `Cost model: ${usd(t.visit)} per million visits, ${usd(t.action)} per million actions, +${usd(t.webhook)} per million webhook POSTs.`,
    );
  }
  return out;
}

const list = (lines: string[]) => (lines.length ? lines.map((l) => `- ${l}`).join('\n') : '- None.');

export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const out = [
    '# Benchmark results',
    `Generated by \`npm run bench -- --write\` (scripts/bench.ts) on ${r.date}${r.quick ? ' — **QUICK run (BENCH_QUICK=1): shortened, not the reference figures**' : ''}, in one run of ${Math.round(r.seconds)} s against the local stack the bench starts itself (DynamoDB Local in memory); every figure stands beside its floor from the same run. The machine is shared: absolute milliseconds move with its load, the ratios to floors measured interleaved are the figures to compare.`,
    mdTable({
      headers: ['machine', ''],
      rows: [
        ['CPU', `${m.cpu}, ${m.cores} cores`],
        ['memory', `${m.memoryGiB.toFixed(1)} GiB`],
        ['OS', m.os],
        ['Node.js', m.node],
        ['load average (1/5/15 min) at start → end', `${m.loadAverageStart} → ${m.loadAverageEnd}`],
        [
          'settings',
          Object.entries(r.settings)
            .map(([k, v]) => `${k}=${v}`)
            .join(', '),
        ],
      ],
    }),
    `## Summary\n\n${list(headline(r))}`,
    `### Goals missed, budgets exceeded, problems found\n\n${list(findings(r))}`,
  ];
  for (const [title, phase] of sections(r)) {
    out.push(`${title.startsWith('5b') || title.startsWith('5c') ? '###' : '##'} ${title}`);
    if (!phase.ok) out.push(`Did not run: ${phase.reason}`);
    else
      out.push(...phase.value.filter((p) => p !== '').map((p) => (typeof p === 'string' ? p : mdTable(p))));
  }
  out.push(
    '## How to rerun',
    '`npm ci && npm run bench` (needs Java 17+ for DynamoDB Local) prints the tables and writes this report to a temporary directory; `npm run bench -- --write` writes `bench/results.md` and `bench/results.json`. `BENCH_QUICK=1` shortens every part; `BENCH_SCALE_LINKS`, `BENCH_LATENCY_N` and `BENCH_LOAD_SECONDS` override single settings; `BENCH_PARTS=webhooks,isolation` runs only the parts named (cold, calls, latency, webhooks, isolation, load, scale, cost, outage).',
  );
  return `${out.join('\n\n')}\n`;
}

export function consoleReport(r: BenchResults): string {
  const out: string[] = [];
  for (const [title, phase] of sections(r)) {
    if (!phase.ok) continue;
    const tables = phase.value.filter((p): p is Table => typeof p !== 'string');
    out.push(`\n== ${title} ==\n${tables.map(textTable).join('\n\n')}`);
  }
  out.push(`\n== Summary ==\n${list(headline(r))}`);
  out.push(`\n== Goals missed / budgets exceeded / problems ==\n${list(findings(r))}`);
  return out.join('\n');
}
