/**
 * Turns the bench's results into bench/results.md, the console tables and the chart's panels.
 */

import { BUDGET_DESCRIPTIONS, BUNDLE_BUDGETS, budgetClassOf } from './bundles.ts';
import type { CallsResult } from './calls.ts';
import { formatOps } from './calls.ts';
import type { ColdStartResult } from './coldstart.ts';
import { type CostLine, type CostModel, PRICES } from './cost.ts';
import type { LatencyRow } from './latency.ts';
import type { LoadResultSet } from './load.ts';
import type { OutageResult } from './outage.ts';
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

function mdTable(headers: string[], rows: Array<Array<string | number>>): string {
  const line = (cells: Array<string | number>) =>
    `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

export function textTable(headers: string[], rows: Array<Array<string | number>>): string {
  const cells = [headers, ...rows].map((r) => r.map(String));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  const fmt = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [fmt(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(fmt)].join('\n');
}

const pct = (value: number, floor: number) =>
  `${value >= floor ? '+' : ''}${(((value - floor) / floor) * 100).toFixed(0)} %`;
const usd = (v: number) =>
  v >= 0.1 ? `$${v.toFixed(2)}` : v >= 0.001 ? `$${v.toFixed(3)}` : v > 0 ? `$${v.toFixed(4)}` : '$0';

/** One section's tables, as [title, headers, rows] for both outputs. */
interface Table {
  headers: string[];
  rows: Array<Array<string | number>>;
}

export function callsTable(calls: CallsResult): Table {
  return {
    headers: [
      'endpoint',
      'DynamoDB calls (by operation)',
      'calls',
      'budget',
      'result',
      'authorizer GetItem (separate)',
    ],
    rows: calls.rows.map((r) => [
      r.label,
      formatOps(r.ops) + (r.varied ? ' (samples varied: max shown)' : ''),
      r.calls,
      `≤ ${r.budget}`,
      r.pass ? 'PASS' : 'OVER',
      r.authorizerCalls ? `${r.authorizerCalls}` : '—',
    ]),
  };
}

export function latencyTable(rows: LatencyRow[]): Table {
  return {
    headers: [
      'endpoint',
      'n (floor n)',
      'p50 ms',
      'floor p50',
      'ratio p50',
      `≤ ${LATENCY_GOAL}`,
      'p99 ms',
      'floor p99',
      'floor: DynamoDB operations',
      'stack DynamoDB calls/request during the run',
    ],
    rows: rows.map((r) => [
      r.label,
      `${r.n} (${r.floorN})`,
      ms(r.stack.p50),
      ms(r.floor.p50),
      ratio(r.stack.p50, r.floor.p50),
      Number.isFinite(r.ratioP50) ? (r.ratioP50 <= LATENCY_GOAL ? 'yes' : 'NO') : '—',
      ms(r.stack.p99),
      ms(r.floor.p99),
      r.floorOps + (r.floorRefused.length ? ` (refused on replay: ${r.floorRefused.join(', ')})` : ''),
      r.stackCallsPerRequest.toFixed(2),
    ]),
  };
}

export function loadTable({ rows, floors }: LoadResultSet): Table {
  const floorOf = (label: string) => floors.find((f) => f.label === label);
  return {
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
      'floor ops/s (DynamoDB only)',
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
      floorOf(r.label) ? floorOf(r.label)!.operationsPerSecond.toFixed(0) : 'n/a',
      `${r.counter.actual} vs ${r.counter.expected}: ${r.counter.pass ? 'PASS' : 'FAIL'}`,
    ]),
  };
}

export function coldTable(cold: ColdStartResult): Table {
  const f = cold.floor;
  const rows = cold.rows.map((r) => {
    const budget = BUNDLE_BUDGETS[budgetClassOf(r)];
    const goal = (value: number, floor: number) => {
      if (r.usesDynamo) return value <= floor * COLD_GOAL ? 'yes' : 'NO';
      if (budgetClassOf(r) === 'docs') return value < floor ? 'below' : 'n/a (docs)';
      if (r.usesAwsSdk) return 'n/a (SQS client)';
      return value < floor * 0.5 ? 'far below' : value < floor ? 'below' : 'NO';
    };
    const sizeGoal = goal(r.bytes, f.bytes);
    const importGoal = goal(r.importMs, f.importMs);
    return [
      r.name,
      r.usesDynamo ? 'DynamoDB' : r.usesAwsSdk ? 'SQS only' : 'no SDK',
      kib(r.bytes),
      pct(r.bytes, f.bytes),
      sizeGoal,
      `${kib(budget)} (${r.bytes <= budget ? 'ok' : 'OVER'})`,
      ms(r.importMs),
      pct(r.importMs, f.importMs),
      importGoal,
    ];
  });
  rows.push([
    '**floor** (document client + 1 GetCommand)',
    'DynamoDB',
    kib(f.bytes),
    '—',
    '—',
    '—',
    ms(f.importMs),
    '—',
    '—',
  ]);
  return {
    headers: [
      'function',
      'AWS SDK',
      'KiB',
      'vs floor',
      `≤ +${Math.round((COLD_GOAL - 1) * 100)} %`,
      'budget KiB',
      'import ms (median)',
      'vs floor',
      `≤ +${Math.round((COLD_GOAL - 1) * 100)} %`,
    ],
    rows,
  };
}

/** What the largest DynamoDB function carries that the floor does not, by package. */
export function bundleDeltaTable(cold: ColdStartResult): { name: string; table: Table } | undefined {
  const dynamo = cold.rows.filter((r) => r.usesDynamo);
  const largest = dynamo.sort((a, b) => b.bytes - a.bytes)[0];
  if (!largest) return undefined;
  const delta = Object.entries(largest.packages)
    .map(([pkg, bytes]) => [pkg, bytes - (cold.floor.packages[pkg] ?? 0)] as const)
    .filter(([, d]) => Math.abs(d) >= 1024)
    .sort((a, b) => b[1] - a[1]);
  return {
    name: largest.name,
    table: {
      headers: ['package or folder', 'KiB more than the floor'],
      rows: delta.map(([p, d]) => [p, kib(d)]),
    },
  };
}

function costTable(lines: CostLine[]): Table {
  return {
    headers: ['component', 'per request', 'USD per million'],
    rows: [
      ...lines.map((l) => [l.component, l.quantity, usd(l.perMillion)]),
      ['**total**', '', `**${usd(lines.reduce((a, l) => a + l.perMillion, 0))}**`],
    ],
  };
}

const md = (t: Table) => mdTable(t.headers, t.rows);

const withinNoise = (ratio: number) => ratio <= PAGE_NOISE && ratio >= 1 / PAGE_NOISE;

function pageVerdict(s: ScaleResult): string {
  if (withinNoise(s.pages.ratio)) return 'same within noise';
  const floorRatio = s.pages.floorLast.p50 / s.pages.floorFirst.p50;
  return withinNoise(floorRatio) ? 'DIFFERENT' : 'different, and so is the floor: DynamoDB Local';
}

function pricesText(): string {
  const p = PRICES;
  return [
    `Lambda arm64 $${p.lambdaArmGbSecond} per GB-s and $${p.lambdaPerMillionRequests} per million requests`,
    `API Gateway HTTP API $${p.httpApiPerMillion.toFixed(2)} per million requests`,
    `DynamoDB on-demand $${p.dynamoPerMillionWru} per million WRU and $${p.dynamoPerMillionRru} per million RRU`,
    `SQS standard $${p.sqsPerMillionRequests.toFixed(2)} per million requests`,
    `EventBridge Pipes $${p.pipesPerMillionRequests.toFixed(2)} per million requests`,
    `DynamoDB Streams reads $${p.streamsPerMillionReadRequests.toFixed(2)} per million (free when Lambda reads the stream)`,
    `CloudWatch Logs ingestion $${p.cloudWatchLogsPerGb.toFixed(2)} per GB`,
    `data transfer out $${p.dataTransferOutPerGb.toFixed(2)} per GB`,
    `(${p.source})`,
  ].join('; ');
}

/** Figures that miss a goal or a budget, and anything broken: the report's first section. */
export function findings(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.calls.ok) {
    for (const row of r.calls.value.rows.filter((x) => !x.pass)) {
      out.push(
        `DynamoDB calls: ${row.label} makes ${row.calls} calls (${formatOps(row.ops)}), budget ${row.budget}.`,
      );
    }
  }
  if (r.latency.ok) {
    const over = r.latency.value.filter((x) => x.ratioP50 > LATENCY_GOAL);
    if (over.length) {
      out.push(
        `Latency: p50 over ${LATENCY_GOAL}× the floor for ${over.map((x) => `${x.label} (${ratio(x.stack.p50, x.floor.p50)}×, ${ms(x.stack.p50)} vs ${ms(x.floor.p50)} ms; ${x.stackCallsPerRequest.toFixed(2)} stack DynamoDB calls per request during the run, background work included)`).join('; ')}. Background work (a purge per deleted campaign, webhook deliveries) runs in the gateway’s own process locally, and in other functions in AWS.`,
      );
    }
  }
  if (r.load.ok) {
    for (const row of r.load.value.rows) {
      if (!row.counter.pass)
        out.push(
          `Counters: ${row.label}: total_clicks ${row.counter.actual} after ${row.counter.expected} accepted requests.`,
        );
      if (row.errors || row.rejected)
        out.push(`Load: ${row.label}: ${row.errors} errors, ${row.rejected} responses with other statuses.`);
    }
  }
  if (r.coldStart.ok) {
    const c = r.coldStart.value;
    const f = c.floor;
    const big = c.rows.filter((x) => x.usesDynamo && x.bytes > f.bytes * COLD_GOAL);
    if (big.length) {
      const worst = Math.max(...big.map((x) => x.bytes));
      out.push(
        `Bundle size: ${big.length} of ${c.rows.filter((x) => x.usesDynamo).length} DynamoDB functions are more than ${Math.round((COLD_GOAL - 1) * 100)} % above the floor (${kib(f.bytes)} KiB); the largest is ${kib(worst)} KiB (${pct(worst, f.bytes)}).`,
      );
    }
    const slow = c.rows.filter((x) => x.usesDynamo && x.importMs > f.importMs * COLD_GOAL);
    if (slow.length) {
      const worst = Math.max(...slow.map((x) => x.importMs));
      out.push(
        `Cold import: ${slow.length} of ${c.rows.filter((x) => x.usesDynamo).length} DynamoDB functions import more than ${Math.round((COLD_GOAL - 1) * 100)} % slower than the floor (${ms(f.importMs)} ms); the slowest takes ${ms(worst)} ms (${pct(worst, f.importMs)}).`,
      );
    }
    const overBudget = c.rows.filter((x) => x.bytes > BUNDLE_BUDGETS[budgetClassOf(x)]);
    for (const x of overBudget) out.push(`Bundle budget exceeded: ${x.name} is ${kib(x.bytes)} KiB.`);
  }
  if (r.webhooks.ok && r.webhooks.value.available) {
    const w = r.webhooks.value;
    if (w.emptyMetadata.delivered < w.emptyMetadata.sent) {
      out.push(
        `Webhooks: ${w.emptyMetadata.sent - w.emptyMetadata.delivered} of ${w.emptyMetadata.sent} actions sent without metadata (stored as an empty map, the contract's default) were never delivered on the local stack.`,
      );
    }
    if (w.latency.missing || w.backlog.missing)
      out.push(
        `Webhooks: ${w.latency.missing + w.backlog.missing} events were not delivered within the wait.`,
      );
    if (w.verifyFailures)
      out.push(`Webhooks: ${w.verifyFailures} deliveries failed standardwebhooks verification.`);
  }
  if (r.scale.ok) {
    const s = r.scale.value;
    if (!s.pages.lastPageOk)
      out.push('Scale: the last page did not hold the last 100 links, or still had a next cursor.');
    if (s.pages.ratio > PAGE_NOISE || s.pages.ratio < 1 / PAGE_NOISE) {
      const floorRatio = s.pages.floorLast.p50 / s.pages.floorFirst.p50;
      out.push(
        `Scale: the last page's p50 is ${s.pages.ratio.toFixed(2)}× the first page's through the gateway; the floor (the same DynamoDB operations) shows ${floorRatio.toFixed(2)}×` +
          (floorRatio > PAGE_NOISE
            ? ', so the difference is DynamoDB Local’s own (its Query slows down deep in a large partition; DynamoDB seeks to the ExclusiveStartKey).'
            : ', so the difference is in our code.'),
      );
    }
    if (s.purge.available && !s.purge.finished)
      out.push(`Scale: the purge left ${s.purge.remaining} links after ${s.purge.seconds.toFixed(0)} s.`);
  }
  if (r.isolation.ok && r.isolation.value.available) {
    const { beside } = r.isolation.value;
    if (beside.max >= ISOLATION_GOAL_MS || beside.missing)
      out.push(
        `Webhook isolation: with slow and failing receivers beside it, a healthy campaign's first attempt took up to ${ms(beside.max)} ms after its 201 (goal: under ${ISOLATION_GOAL_MS} ms), ${beside.missing} not delivered.`,
      );
  }
  if (r.outage.ok) {
    const o = r.outage.value;
    if (o.clicks.counted !== o.clicks.expected || o.referrals.counted !== o.referrals.expected)
      out.push(
        `DynamoDB outage: counters off after retries with Idempotency-Keys (clicks ${o.clicks.counted} for ${o.clicks.expected} keys, referrals ${o.referrals.counted} for ${o.referrals.expected}).`,
      );
  }
  for (const [name, phase] of Object.entries({
    calls: r.calls,
    latency: r.latency,
    load: r.load,
    'cold start': r.coldStart,
    webhooks: r.webhooks,
    'webhook isolation': r.isolation,
    'DynamoDB outage': r.outage,
    scale: r.scale,
    cost: r.cost,
  })) {
    if (!phase.ok) out.push(`The ${name} part did not run: ${phase.reason}`);
  }
  return out;
}

export function unavailable(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.unmeasuredRoutes.length)
    out.push(`Routes without a request recipe in the bench: ${r.unmeasuredRoutes.join(', ')}.`);
  if (r.webhooks.ok && !r.webhooks.value.available)
    out.push(`Webhooks: not available yet (${r.webhooks.value.reason}).`);
  if (r.isolation.ok && !r.isolation.value.available)
    out.push(`Webhook isolation: not available yet (${r.isolation.value.reason}).`);
  if (r.scale.ok && !r.scale.value.purge.available)
    out.push(`Purge after delete: not available yet (${r.scale.value.purge.reason}).`);
  return out;
}

/** What a client retrying with Idempotency-Keys saw while DynamoDB Local was paused, and after. */
export function outageTable(o: OutageResult): Table {
  const statuses = Object.entries(o.duringOutage)
    .map(([status, n]) => `${n} × ${status === '0' ? 'no answer' : status}`)
    .join(', ');
  return {
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
      ['retries answered from a stored answer', String(o.replays)],
    ],
  };
}

export function isolationTable(i: IsolationResult): Table {
  const row = (label: string, pick: (l: IsolationResult['alone']) => string) => [
    label,
    pick(i.alone),
    pick(i.beside),
  ];
  return {
    headers: [
      'healthy campaign, first attempt (201 → arrival)',
      'alone',
      `beside ${i.receivers.length} bad receivers, ${i.backlogPerReceiver} pending events each`,
    ],
    rows: [
      row(`events (one every ${i.paceMs} ms for ${i.seconds} s)`, (l) => String(l.events)),
      row('p50', (l) => `${ms(l.p50)} ms`),
      row('p99', (l) => `${ms(l.p99)} ms`),
      row('max', (l) => `${ms(l.max)} ms`),
      row('not delivered', (l) => String(l.missing)),
    ],
  };
}

export function renderMarkdown(r: BenchResults): string {
  const m = r.machine;
  const parts: string[] = [];
  parts.push('# Benchmark results');
  parts.push('');
  parts.push(
    `Generated by \`npm run bench\` (scripts/bench.ts) on ${r.date}${r.quick ? ' — **QUICK run (BENCH_QUICK=1): shortened, not the reference figures**' : ''}. ` +
      `Everything below was measured in one run of ${Math.round(r.seconds)} s against the local stack the bench starts itself ` +
      '(DynamoDB Local in memory, its own port); every figure stands beside its floor from the same run.',
  );
  parts.push('');
  parts.push(
    md({
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
  );
  parts.push('');
  parts.push(
    'The machine is shared (the load average shows how busy it was): absolute milliseconds move with it, while the ratios to the floors, measured interleaved in the same run, are the figures to compare.',
  );
  parts.push('');

  const f = findings(r);
  const na = unavailable(r);
  parts.push('## Summary');
  parts.push('');
  parts.push(...headline(r).map((l) => `- ${l}`));
  parts.push('');
  parts.push('### Goals missed, budgets exceeded, problems found');
  parts.push('');
  parts.push(...(f.length ? f.map((l) => `- ${l}`) : ['- None.']));
  parts.push('');
  if (na.length) {
    parts.push('### Not available in this run');
    parts.push('');
    parts.push(...na.map((l) => `- ${l}`));
    parts.push('');
  }

  parts.push('## 1. DynamoDB calls per request (warm)');
  parts.push('');
  if (r.calls.ok) {
    parts.push(
      'Counted by a proxy between the stack and DynamoDB Local (`scripts/bench/proxy-server.ts`), by `X-Amz-Target`, never by the handlers: ' +
        'requests go one at a time once the table has been quiet for 250 ms, and the counters are diffed around each (3 samples per row; all agreed unless marked). ' +
        'Budget: each route’s `dynamoCalls` in `lib/routes.ts` (1 for the campaign endpoints, at most 2 for the others, 0 for the documentation), which `test/integration/round-trips.test.ts` also enforces. The authorizer’s api-key GetItem is a separate Lambda in AWS whose answer API Gateway caches for 60 s per key, so it is shown apart and not in the count. ' +
        'Id-block reservations (one UpdateItem per 100 ids) are also apart: see the last column of the latency table for their amortised rate. ' +
        'Background work (stream polls, webhook deliveries’ campaign reads, the stream consumer’s writes of referred users’ action items) is told apart by what it touches and never counted.',
    );
    parts.push('');
    parts.push(md(callsTable(r.calls.value)));
    parts.push('');
    parts.push(
      'Every request of `POST /api/v1/action/referred_user` is the first action of a referred user made for it just before (outside the count and the timing), so the row is that endpoint’s worst case.',
    );
  } else parts.push(`Did not run: ${r.calls.reason}`);
  parts.push('');

  parts.push('## 2. Latency through the local gateway vs the DynamoDB floor');
  parts.push('');
  if (r.latency.ok) {
    const n = r.latency.value[0]?.n ?? 0;
    const floorN = r.latency.value[0]?.floorN ?? 0;
    parts.push(
      `${n} sequential requests per endpoint over one keep-alive connection, after a warm-up, from this process (node:http client) through the local gateway (payload 2.0 event, authorizer, middy handler, validation, serialisation). ` +
        'The floor is the DynamoDB requests the stack made for one request of the endpoint (the api-key GetItem the local gateway’s authorizer makes on every protected request included), recorded by the counting proxy and replayed byte for byte straight to DynamoDB Local over a bare keep-alive HTTP client (`scripts/bench/floor.ts`): the same operations, keys, item sizes, consistency and order (calls that overlapped are sent together), without our code and without the SDK. ' +
        'A replayed write meets the state the recorded one left: a write guarded by a condition (a new item’s Put, a Delete of an item now gone, a transaction’s Put of an existing action) is refused, still the same round trip (DynamoDB reads the item and evaluates the condition) but no write; the floor column names the operations refused. ' +
        `The ${floorN} floor iterations per endpoint are interleaved with the requests (one after every ${Math.round(n / Math.max(1, floorN))}, before or after it in turn) so both see the same background load. ` +
        'Both paths go through the counting proxy (one extra localhost hop per DynamoDB call on both sides), and the HTTP client runs in the same process as the gateway, so its own cost is counted on our side.',
    );
    parts.push('');
    parts.push(md(latencyTable(r.latency.value)));
    parts.push('');
    parts.push(
      mermaidChart(
        'p50 latency: bars through the gateway, line the floor',
        'ms',
        r.latency.value.map((x) => ({ label: x.key, value: x.stack.p50, floor: x.floor.p50 })),
      ),
    );
    parts.push('');
    parts.push(
      'The last column counts every DynamoDB call of the stack during the run per request (the authorizer’s and the stream polls excepted): the request’s own calls, id-block reservations, and background work the run set off — webhook deliveries reading the campaign, the stream consumer writing the item of each referred user’s action from the link update that recorded it, the purge of each deleted campaign (the floor’s actions and deletes included). ' +
        'Background work runs in the same Node.js process as the gateway, so it also slows the requests it interleaves with; DELETE sets off the most (a purge pass per campaign).',
    );
    parts.push('');
    const ids = r.latency.value.filter((x) => x.idBlocksPerRequest > 0);
    if (ids.length) {
      parts.push(
        `Id-block reservations during these runs: ${ids.map((x) => `${x.label} ${x.idBlocksPerRequest.toFixed(3)}`).join(', ')} per request (one UpdateItem per 100 ids, as designed).`,
      );
      parts.push('');
    }
  } else parts.push(`Did not run: ${r.latency.reason}`);
  parts.push('');

  parts.push('## 3. Throughput under load, and exact counters');
  parts.push('');
  if (r.load.ok) {
    parts.push(
      `autocannon in a child process, ${r.load.value.rows[0]?.connections ?? 32} connections against the local gateway, each endpoint on one fresh hot link (every request raises the same counter: the worst case for transaction conflicts), each run started with the webhook pipeline idle. ` +
        'To make "accepted" exact, autocannon runs in amount mode: a short calibration run measures the rate, then the main run sends as many requests as fill the target duration at that rate, and every request gets its response before the run ends (a duration-bounded run abandons the requests in flight, which the server may still commit). ' +
        'Afterwards the links’ total_clicks must equal the accepted responses of both runs exactly. "Cancelled tx" counts TransactWriteItems calls DynamoDB Local rejected (a concurrent transaction on the same item), which the code retries with backoff. ' +
        `The floor is the endpoint’s recorded DynamoDB requests (the latency floor’s replay, its conditional writes refused) run by the same number of concurrent loops for ${r.load.value.floors[0]?.seconds.toFixed(0) ?? 5} s: what DynamoDB Local itself sustains on this machine.`,
    );
    parts.push('');
    parts.push(md(loadTable(r.load.value)));
    parts.push('');
    parts.push(
      'On this machine the gateway, the handlers, the webhook pollers, the counting proxy, DynamoDB Local and the load generator share the same cores, so these rates say more about the local stack than about AWS, where each request gets its own Lambda.',
    );
  } else parts.push(`Did not run: ${r.load.reason}`);
  parts.push('');

  parts.push('## 4. Cold start: bundle size and import time vs the floor');
  parts.push('');
  if (r.coldStart.ok) {
    const c = r.coldStart.value;
    parts.push(
      `Every function bundled as the CDK stack bundles it (esbuild: ESM, minify, source map without sources, platform node, target node22, every module bundled including the AWS SDK, main fields module,main, the createRequire banner) — build took ${c.buildSeconds.toFixed(1)} s. ` +
        `Import time: median of ${c.floor.runs.length} fresh \`node\` processes each importing \`index.mjs\`, round-robin over the bundles, with \`NODE_OPTIONS=--enable-source-maps\` as deployed and the function’s environment set so module-load configuration passes. ` +
        'The floor is a bundle of nothing but the DynamoDB document client and one GetCommand (`scripts/bench/floor-handler.ts`). Goal: within 15 % of the floor for functions that use DynamoDB; functions without it well below.',
    );
    parts.push('');
    parts.push(md(coldTable(c)));
    parts.push('');
    parts.push(
      mermaidChart(
        'Bundle size: bars the function, line the floor',
        'KiB',
        c.rows.map((x) => ({ label: x.name, value: x.bytes / 1024, floor: c.floor.bytes / 1024 })),
      ),
    );
    parts.push('');
    parts.push(
      mermaidChart(
        'Cold import (median): bars the function, line the floor',
        'ms',
        c.rows.map((x) => ({ label: x.name, value: x.importMs, floor: c.floor.importMs })),
      ),
    );
    parts.push('');
    parts.push(
      `Budgets enforced by \`test/unit/bundle-size.test.ts\` (about 20 % over the sizes when they were set): ${Object.entries(
        BUNDLE_BUDGETS,
      )
        .map(([k, v]) => `${BUDGET_DESCRIPTIONS[k as keyof typeof BUNDLE_BUDGETS]} ${kib(v)} KiB`)
        .join('; ')}.`,
    );
    parts.push('');
    const delta = bundleDeltaTable(c);
    if (delta) {
      parts.push(
        `What the largest DynamoDB function (${delta.name}) carries beyond the floor, by package (≥ 1 KiB):`,
      );
      parts.push('');
      parts.push(md(delta.table));
      parts.push('');
    }
  } else parts.push(`Did not run: ${r.coldStart.reason}`);
  parts.push('');

  parts.push('## 5. Webhooks: from the 201 to the signed delivery');
  parts.push('');
  if (r.webhooks.ok && r.webhooks.value.available) {
    const w = r.webhooks.value;
    parts.push(
      'Through the local pipeline exactly as `npm start` runs it: table stream → stream poller → stream-consumer handler → local SQS → queue poller → delivery handler → a node:http receiver on 127.0.0.1 (the campaign’s webhook_url set by PATCH). ' +
        'Latency: actions through the API, one every few ms, each timed from its 201 to the arrival of its delivery. Backlog: the API writes about as fast as the local pipeline delivers, so a burst through it builds no backlog; the backlog is written straight into the table instead, as action items exactly like the handler’s (event attributes included, ids from the action sequence), and the pipeline drains it. ' +
        'Every delivery is verified with `standardwebhooks` and the campaign’s secret. The floor is the last hop alone: the same body signed and POSTed to the same receiver from this process.',
    );
    parts.push('');
    parts.push(
      md({
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
            `backlog of ${w.backlog.events} action items written into the table in ${w.backlog.writeSeconds.toFixed(1)} s: deliveries/s, first to last delivery`,
            w.backlog.deliveriesPerSecond.toFixed(0),
            `${w.floorDeliveriesPerSecond.toFixed(0)} (10 at a time)`,
          ],
          ['deliveries/s after the last write', w.backlog.drainPerSecond.toFixed(0), ''],
          ['time from the first write to the last delivery', `${w.backlog.totalSeconds.toFixed(1)} s`, ''],
          [
            'not delivered / duplicates / verified / failed verification',
            `${w.latency.missing + w.userActionLatency.missing + w.backlog.missing} / ${w.duplicates} / ${w.verified} / ${w.verifyFailures}`,
            '',
          ],
          [
            'actions without metadata delivered',
            `${w.emptyMetadata.delivered} of ${w.emptyMetadata.sent}`,
            '',
          ],
        ],
      }),
    );
    parts.push('');
    parts.push(
      'Most of the pipeline’s latency is its polling: the local stream poller reads every 150 ms and the queue poller sleeps briefly when the queue is empty; in AWS the stream → Lambda and SQS → Lambda mappings poll continuously. ' +
        'The first rows use actions on a link (endpoint 12), whose action item carries its event from the start. An action of a referred user (endpoint 5) is recorded on its link’s item so that it costs two DynamoDB calls; the stream consumer then writes its action item, whose event takes the stream once more. Locally that adds little: the stream poller reads again at once after a batch that had records (in AWS, one more stream → Lambda hop).',
    );
  } else if (r.webhooks.ok && !r.webhooks.value.available) {
    parts.push(`Not available yet: ${r.webhooks.value.reason}.`);
  } else if (!r.webhooks.ok) parts.push(`Did not run: ${r.webhooks.reason}`);
  parts.push('');

  parts.push('### 5b. Isolation: a healthy campaign beside slow and failing receivers');
  parts.push('');
  if (r.isolation.ok && r.isolation.value.available) {
    const i = r.isolation.value;
    parts.push(
      `A healthy campaign's actions through the API, one every ${i.paceMs} ms for ${i.seconds} s, each timed from its 201 to the arrival of its first attempt: first alone, then while ${i.receivers.length} other campaigns' receivers misbehave, each with ${i.backlogPerReceiver} pending events written into the table at once (run last: the bad campaigns are deleted afterwards). ` +
        `Contract: under ${ISOLATION_GOAL_MS} ms whatever the other receivers do. The lanes (lib/webhooks/lanes.ts): one campaign holds at most 10 first-attempt slots, an endpoint that fails or is slow moves to the slow lane, retries have their own lane.`,
    );
    parts.push('');
    parts.push(md(isolationTable(i)));
    parts.push('');
    parts.push(
      md({
        headers: [
          'bad receiver',
          'behaviour',
          'requests in the run',
          'in its first 14 s (before any 15 s timeout)',
        ],
        rows: i.receivers.map((x) => [x.name, x.behaviour, x.requests, x.beforeFirstTimeout]),
      }),
    );
  } else if (r.isolation.ok && !r.isolation.value.available) {
    parts.push(`Not available yet: ${r.isolation.value.reason}.`);
  } else if (!r.isolation.ok) parts.push(`Did not run: ${r.isolation.reason}`);
  parts.push('');

  parts.push('### 5c. A DynamoDB outage: what a client sees, and the recovery');
  parts.push('');
  if (r.outage.ok) {
    parts.push(
      'DynamoDB Local paused (SIGSTOP) while a client sends keyed writes (actions on a link, actions of a referred user, signups) and retries each with its `Idempotency-Key` after a 5xx, a 409 in progress or a dropped connection, as the README says a client should. Every request has a 5 s deadline for its DynamoDB calls and the authorizer 2 s (locally it runs on every request): a 503 with `Retry-After` within about 7 s, never a 500 or a hang, and afterwards every counter equals the number of keys that got a 2xx.',
    );
    parts.push('');
    parts.push(md(outageTable(r.outage.value)));
  } else parts.push(`Did not run: ${r.outage.reason}`);
  parts.push('');

  parts.push('## 6. Scale: a campaign with many links');
  parts.push('');
  if (r.scale.ok) {
    const s = r.scale.value;
    parts.push(
      `${s.links.toLocaleString('en-US')} links written straight into the table in the exact item shape \`createLink\` writes (ids reserved from the link sequence; BatchWriteItem, ${s.loadSeconds.toFixed(1)} s). ` +
        `First and last page of the campaign’s list (limit 100) timed ${s.pages.samples} times each, interleaved; the last page is reached with a cursor built by \`encodeCursor\` for the link before it. The floor is each page’s DynamoDB requests, recorded from one request and replayed straight to DynamoDB Local (as in part 2).`,
    );
    parts.push('');
    parts.push(
      md({
        headers: ['measure', 'through the gateway', 'floor (DynamoDB operations only)'],
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
          ['last page holds the last 100 links, no next cursor', s.pages.lastPageOk ? 'yes' : 'NO', ''],
          ['DELETE of the campaign answered 204 in', `${ms(s.deleteMs)} ms`, ''],
          [
            'from the 204 until no item of it remains',
            s.purge.available
              ? s.purge.finished
                ? `${s.purge.seconds.toFixed(1)} s (${s.purge.itemsPerSecond.toFixed(0)} items/s; every link key read back: ${s.purge.remaining} left)`
                : `not finished after ${s.purge.seconds.toFixed(0)} s: ${s.purge.remaining} links left (${s.purge.itemsPerSecond.toFixed(0)} items/s)`
              : `not available yet: ${s.purge.reason}`,
            '',
          ],
        ],
      }),
    );
  } else parts.push(`Did not run: ${r.scale.reason}`);
  parts.push('');

  parts.push('## 7. Cost model (on paper)');
  parts.push('');
  if (r.cost.ok) {
    const c = r.cost.value;
    parts.push(
      `USD per million requests, from the calls counted above, the sizes of items this run wrote (campaign ${c.sizes.campaign} B, link ${c.sizes.link} B, visit action ${c.sizes.visitAction} B, API action ${c.sizes.linkAction} B) and the durations measured above. ` +
        `Prices used on ${c.date}: ${pricesText()}.`,
    );
    parts.push('');
    parts.push('**Per million visits** (`GET /r/{code}`):');
    parts.push('');
    parts.push(md(costTable(c.visit)));
    parts.push('');
    parts.push('**Per million actions** (`POST /api/v1/action/referral_link`):');
    parts.push('');
    parts.push(md(costTable(c.action)));
    parts.push('');
    parts.push(
      '**Add-on per million webhook deliveries** (events of campaigns with a webhook_url; the event pipeline itself is already in both totals above):',
    );
    parts.push('');
    parts.push(md(costTable(c.webhook)));
    parts.push('');
    parts.push('Assumptions:');
    parts.push('');
    parts.push(...c.assumptions.map((a) => `- ${a}`));
  } else parts.push(`Did not run: ${r.cost.reason}`);
  parts.push('');

  parts.push('## How to rerun');
  parts.push('');
  parts.push(
    '`npm ci && npm run bench` (needs Java 17+ for DynamoDB Local). `BENCH_QUICK=1` shortens every part (fewer requests, 5 s load runs, 10,000 links); ' +
      '`BENCH_SCALE_LINKS`, `BENCH_LATENCY_N` and `BENCH_LOAD_SECONDS` override single settings; `BENCH_PARTS=webhooks,isolation` runs only the parts named (cold, calls, latency, webhooks, isolation, load, scale, cost, outage). A plain run prints the tables and writes the report to a temporary directory it names; `npm run bench -- --write` writes this file and `bench/results.json`.',
  );
  parts.push('');
  return parts.join('\n');
}

export function headline(r: BenchResults): string[] {
  const out: string[] = [];
  if (r.calls.ok) {
    const rows = r.calls.value.rows;
    out.push(
      `DynamoDB calls per request: ${rows.filter((x) => x.pass).length} of ${rows.length} rows within budget (campaign endpoints ${rows
        .filter((x) => x.budget === 1)
        .map((x) => x.calls)
        .join(
          '/',
        )}, the others ${Math.min(...rows.filter((x) => x.budget === 2).map((x) => x.calls))}–${Math.max(...rows.filter((x) => x.budget === 2).map((x) => x.calls))}).`,
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
    out.push(
      `Throughput (32 connections, one hot link): ${r.load.value.rows.map((x) => `${x.label} ${x.requestsPerSecond.toFixed(0)} req/s`).join('; ')} (DynamoDB-only floors: ${r.load.value.floors.map((x) => `${x.operationsPerSecond.toFixed(0)} ops/s`).join(', ')}); counters ${r.load.value.rows.every((x) => x.counter.pass) ? 'exact in every run' : 'WRONG'}.`,
    );
  }
  if (r.coldStart.ok) {
    const c = r.coldStart.value;
    const dyn = c.rows.filter((x) => x.usesDynamo);
    out.push(
      `Bundles: DynamoDB functions ${kib(Math.min(...dyn.map((x) => x.bytes)))}–${kib(Math.max(...dyn.map((x) => x.bytes)))} KiB vs floor ${kib(c.floor.bytes)} KiB; import ${ms(Math.min(...dyn.map((x) => x.importMs)))}–${ms(Math.max(...dyn.map((x) => x.importMs)))} ms vs floor ${ms(c.floor.importMs)} ms.`,
    );
  }
  if (r.webhooks.ok && r.webhooks.value.available) {
    const w = r.webhooks.value;
    out.push(
      `Webhooks: 201 → delivery p50 ${ms(w.latency.p50)} ms, p95 ${ms(w.latency.p95)} ms (actions of a referred user: p50 ${ms(w.userActionLatency.p50)} ms, p95 ${ms(w.userActionLatency.p95)} ms); backlog of ${w.backlog.events} at ${w.backlog.deliveriesPerSecond.toFixed(0)} deliveries/s.`,
    );
  }
  if (r.isolation.ok && r.isolation.value.available) {
    const i = r.isolation.value;
    out.push(
      `Webhook isolation: a healthy campaign's first attempt p50 ${ms(i.beside.p50)} ms, p99 ${ms(i.beside.p99)} ms after its 201 beside ${i.receivers.length} slow and failing receivers (alone: p50 ${ms(i.alone.p50)} ms, p99 ${ms(i.alone.p99)} ms).`,
    );
  }
  if (r.outage.ok) {
    const o = r.outage.value;
    out.push(
      `DynamoDB outage (${(o.pauseMs / 1000).toFixed(0)} s): answers within ${ms(o.slowestAnswerDuringOutageMs)} ms (${Object.keys(o.duringOutage).join('/')}), Retry-After ${o.retryAfterValues.join('/')}, recovery ${ms(o.recoveryMs)} ms, counters ${o.clicks.counted === o.clicks.expected && o.referrals.counted === o.referrals.expected ? 'exact' : 'OFF'}.`,
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
      `Cost model: ${usd(t.visit)} per million visits, ${usd(t.action)} per million actions (event pipeline included), +${usd(t.webhook)} per million webhook POSTs.`,
    );
  }
  return out;
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
    `  title "${title.replace(/"/g, "'")}"`,
    `  x-axis [${rows.map((r) => JSON.stringify(r.label.replace(/"/g, "'"))).join(', ')}]`,
    `  y-axis "${unit}" 0 --> ${Math.ceil(max * 1.1)}`,
    `  bar [${rows.map((r) => num(r.value)).join(', ')}]`,
    `  line [${rows.map((r) => num(r.floor)).join(', ')}]`,
    '```',
  ].join('\n');
}

export function consoleReport(r: BenchResults): string {
  const out: string[] = [];
  const section = (title: string, body: string) => out.push(`\n== ${title} ==\n${body}`);
  if (r.calls.ok) {
    const t = callsTable(r.calls.value);
    section('1. DynamoDB calls per request (warm)', textTable(t.headers, t.rows));
  }
  if (r.latency.ok) {
    const t = latencyTable(r.latency.value);
    section('2. Latency vs floor', textTable(t.headers, t.rows));
  }
  if (r.load.ok) {
    const t = loadTable(r.load.value);
    section('3. Throughput', textTable(t.headers, t.rows));
  }
  if (r.coldStart.ok) {
    const t = coldTable(r.coldStart.value);
    section('4. Cold start', textTable(t.headers, t.rows));
  }
  if (r.webhooks.ok) {
    const w = r.webhooks.value;
    section(
      '5. Webhooks',
      w.available
        ? textTable(
            ['measure', 'pipeline', 'floor'],
            [
              ['201 -> delivery p50 ms', ms(w.latency.p50), ms(w.floorLatency.p50)],
              ['201 -> delivery p95 ms', ms(w.latency.p95), ms(w.floorLatency.p95)],
              ['endpoint 5: 201 -> delivery p50 ms', ms(w.userActionLatency.p50), ''],
              [
                `backlog ${w.backlog.events}: deliveries/s`,
                w.backlog.deliveriesPerSecond.toFixed(0),
                w.floorDeliveriesPerSecond.toFixed(0),
              ],
              [
                'not delivered / duplicates / verify failures',
                `${w.latency.missing + w.backlog.missing} / ${w.duplicates} / ${w.verifyFailures}`,
                '',
              ],
              ['no-metadata actions delivered', `${w.emptyMetadata.delivered}/${w.emptyMetadata.sent}`, ''],
            ],
          )
        : `not available yet: ${w.reason}`,
    );
  }
  if (r.isolation.ok) {
    const i = r.isolation.value;
    if (i.available) {
      const t = isolationTable(i);
      section('5b. Webhook isolation', textTable(t.headers, t.rows));
    } else section('5b. Webhook isolation', `not available yet: ${i.reason}`);
  }
  if (r.outage.ok) {
    const t = outageTable(r.outage.value);
    section('5c. A DynamoDB outage', textTable(t.headers, t.rows));
  }
  if (r.scale.ok) {
    const s = r.scale.value;
    section(
      '6. Scale',
      textTable(
        ['measure', 'value', 'floor'],
        [
          ['links', s.links, ''],
          ['first page p50 ms', ms(s.pages.first.p50), ms(s.pages.floorFirst.p50)],
          ['last page p50 ms', ms(s.pages.last.p50), ms(s.pages.floorLast.p50)],
          ['last/first', s.pages.ratio.toFixed(2), ''],
          ['DELETE 204 ms', ms(s.deleteMs), ''],
          [
            'purge',
            s.purge.available
              ? `${s.purge.seconds.toFixed(1)} s, ${s.purge.remaining} left${s.purge.finished ? '' : ' (unfinished)'}`
              : `not available yet: ${s.purge.reason}`,
            '',
          ],
        ],
      ),
    );
  }
  if (r.cost.ok) {
    const c = r.cost.value;
    section(
      '7. Cost model (USD per million)',
      textTable(
        ['', 'USD per million'],
        [
          ['visits', usd(c.totals.visit)],
          ['actions', usd(c.totals.action)],
          ['webhook POSTs (add-on; the pipeline is in both totals)', usd(c.totals.webhook)],
        ],
      ),
    );
  }
  const f = findings(r);
  section(
    'Goals missed / budgets exceeded / problems',
    f.length ? f.map((x) => `- ${x}`).join('\n') : 'none',
  );
  const na = unavailable(r);
  if (na.length) section('Not available', na.map((x) => `- ${x}`).join('\n'));
  return out.join('\n');
}
