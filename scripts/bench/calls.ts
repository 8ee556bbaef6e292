/**
 * Part 1: DynamoDB calls per request, counted by the proxy (never by the handlers). Requests are
 * sent one at a time once the table has been quiet for a moment, and the proxy's counters are
 * diffed around each; background work (stream polls, webhook deliveries) is told apart by what
 * it touches (see `proxy-server.ts`) and reported on its own.
 */
import { type CountingProxy, type Counts, diffCounts } from './counting-proxy.ts';
import type { EndpointCase } from './endpoints.ts';
import { replayFloor } from './floor.ts';
import type { BenchClient, RequestSpec } from './http-client.ts';
import { sleep } from './stats.ts';

export interface CallsRow {
  label: string;
  /** Endpoint calls by operation (the authorizer and id blocks excluded). */
  ops: Record<string, number>;
  calls: number;
  budget: number;
  pass: boolean;
  /** The authorizer's api-key GetItem (a separate Lambda in AWS, cached 60 s by API Gateway). */
  authorizerCalls: number;
  /** True when the samples did not all agree (the maximum is reported). */
  varied: boolean;
}

const QUIET_MS = 250;

/** Wait until no non-stream DynamoDB call has been seen for `quietMs` (at most 5 s). */
export async function waitQuiet(proxy: CountingProxy, quietMs = QUIET_MS): Promise<void> {
  const started = Date.now();
  for (;;) {
    const { lastActivity } = await proxy.snapshot();
    const idle = Date.now() - lastActivity;
    if (idle >= quietMs || Date.now() - started > 5_000) return;
    await sleep(quietMs - idle + 5);
  }
}

export async function countRequest(
  proxy: CountingProxy,
  client: BenchClient,
  spec: RequestSpec,
  status: number,
  quietMs = QUIET_MS,
): Promise<Counts> {
  await waitQuiet(proxy, quietMs);
  const before = await proxy.snapshot();
  const res = await client.send(spec);
  const after = await proxy.snapshot();
  if (res.status !== status)
    throw new Error(`${spec.method} ${spec.path}: ${res.status} ${res.body.slice(0, 200)}`);
  return diffCounts(before.counts, after.counts);
}

function split(counts: Counts) {
  const ops: Record<string, number> = {};
  let authorizer = 0;
  let idBlocks = 0;
  for (const [key, n] of Object.entries(counts)) {
    const [category, op] = key.split(':') as [string, string];
    if (category === 'request') ops[op] = (ops[op] ?? 0) + n;
    else if (category === 'apikey') authorizer += n;
    else if (category === 'idblock') idBlocks += n;
  }
  return { ops, authorizer, idBlocks };
}

function row(label: string, budget: number, samples: Counts[]): CallsRow {
  const parts = samples.map(split);
  const totals = parts.map((p) => Object.values(p.ops).reduce((a, b) => a + b, 0));
  const maxIndex = totals.indexOf(Math.max(...totals));
  const chosen = parts[maxIndex]!;
  const calls = totals[maxIndex]!;
  const varied = new Set(parts.map((p) => JSON.stringify(Object.entries(p.ops).sort()))).size > 1;
  return {
    label,
    ops: chosen.ops,
    calls,
    budget,
    pass: calls <= budget,
    authorizerCalls: Math.max(...parts.map((p) => p.authorizer)),
    varied,
  };
}

export const formatOps = (ops: Record<string, number>) =>
  Object.entries(ops)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, n]) => (n === 1 ? op : `${n}× ${op}`))
    .join(' + ') || '—';

export interface CallsResult {
  rows: CallsRow[];
  /** Id-block reservations seen while counting (reported apart from the per-request figure). */
  idBlocksSeen: number;
}

export async function measureCalls(
  proxy: CountingProxy,
  client: BenchClient,
  cases: EndpointCase[],
  samples = 3,
): Promise<CallsResult> {
  const rows: CallsRow[] = [];
  let idBlocksSeen = 0;
  for (const endpoint of cases) {
    await endpoint.prepare(samples);
    const seen: Counts[] = [];
    for (let i = 0; i < samples; i++)
      seen.push(await countRequest(proxy, client, endpoint.request(), endpoint.status, endpoint.quietMs));
    idBlocksSeen += seen.reduce((a, s) => a + split(s).idBlocks, 0);
    rows.push(row(endpoint.label, endpoint.budget, seen));
  }
  return { rows, idBlocksSeen };
}

/**
 * Each case's floor: one request sent once the table is quiet, the DynamoDB requests the proxy
 * saw for it recorded, then replayed once (which also learns which writes a replay sees refused).
 */
export async function recordFloors(
  proxy: CountingProxy,
  client: BenchClient,
  cases: EndpointCase[],
): Promise<void> {
  for (const endpoint of cases) {
    await endpoint.prepare(1);
    await waitQuiet(proxy, endpoint.quietMs);
    proxy.record();
    const res = await client.send(endpoint.request());
    const recorded = await proxy.recorded();
    if (res.status !== endpoint.status)
      throw new Error(
        `${endpoint.label}: expected ${endpoint.status}, got ${res.status} ${res.body.slice(0, 200)}`,
      );
    endpoint.floor = replayFloor(recorded, proxy.url);
    await endpoint.floor?.run();
  }
}
