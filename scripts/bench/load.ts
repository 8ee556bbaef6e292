/**
 * Part 3: throughput of the visit redirect and of action recording under concurrent load
 * (autocannon, 32 connections), then the links' counters checked against the accepted requests.
 *
 * Each endpoint runs on one fresh hot link: every request raises the same counter, the exact-
 * counter test and the worst case for transaction conflicts. The proxy's count of failed
 * TransactWriteItems calls shows how many transactions a concurrent one cancelled (retried).
 *
 * The floor is the endpoint's recorded DynamoDB requests (the latency floor's replay) run by 32
 * concurrent loops straight to DynamoDB Local: what DynamoDB Local itself sustains.
 * (Hot link and 32 links gave the same rates locally, with no cancelled transaction, so only
 * the hot link is run.)
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CountingProxy } from './counting-proxy.ts';
import type { BenchEnvironment } from './environment.ts';
import type { LoadJob, LoadResult } from './load-worker.ts';

/** The endpoint's recorded DynamoDB requests, replayed by 32 concurrent loops straight to DynamoDB Local. */
export interface LoadFloor {
  label: string;
  connections: number;
  seconds: number;
  operationsPerSecond: number;
}

export interface LoadResultSet {
  rows: LoadRow[];
  floors: LoadFloor[];
}

async function floorThroughput(
  label: string,
  run: () => Promise<unknown>,
  connections: number,
  seconds: number,
): Promise<LoadFloor> {
  let done = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      for (; performance.now() < deadline; done++) await run();
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return { label, connections, seconds: elapsed, operationsPerSecond: done / elapsed };
}

export interface LoadRow {
  label: string;
  links: number;
  connections: number;
  /** Wall time of the measured run (the calibration run excluded). */
  seconds: number;
  requests: number;
  accepted: number;
  acceptedStatus: number;
  requestsPerSecond: number;
  errors: number;
  /** Responses with any other status. */
  rejected: number;
  latency: { p50: number; p99: number; max: number };
  /** TransactWriteItems calls DynamoDB cancelled (conflicts), per accepted request. */
  cancelledTransactionsPerRequest: number;
  /** Sum of total_clicks over the links after both runs, and what it must equal. */
  counter: { expected: number; actual: number; pass: boolean };
}

function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = fork(fileURLToPath(new URL('./load-worker.ts', import.meta.url)), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: LoadResult | { error: string }) => {
      if ('error' in m) reject(new Error(m.error));
      else resolve(m);
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code) reject(new Error(`load worker exited with ${code}`));
    });
    child.send(job);
  });
}

interface Target {
  label: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** One request per link code. */
  variant: (code: string) => { path: string; body?: string };
  acceptedStatus: number;
}

/**
 * Calibrate with a short run, then send as many requests as fill `seconds` at that rate (amount
 * mode, see load-worker.ts). The links' counters must equal the accepted responses of both runs.
 */
async function loadOne(
  env: BenchEnvironment,
  proxy: CountingProxy,
  target: Target,
  codes: string[],
  seconds: number,
  connections: number,
): Promise<LoadRow> {
  const variants = codes.map(target.variant);
  const job = (amount: number): LoadJob => ({
    url: `${env.stack.baseUrl}${variants[0]!.path}`,
    method: target.method,
    headers: target.headers,
    body: variants[0]!.body,
    connections,
    amount,
    ...(variants.length > 1 ? { variants } : {}),
  });
  const calibration = await runLoad(job(connections * 8));
  // Amount mode needs a request count: fill `seconds` at the measured rate, topping up while
  // the runs so far fell short of the duration.
  const before = await proxy.snapshot();
  const runs: LoadResult[] = [];
  let elapsedMs = 0;
  let rate = calibration.requestsPerSecond;
  let amount = 0;
  while (elapsedMs < seconds * 950) {
    const batch = Math.max(connections, Math.round((rate * (seconds * 1000 - elapsedMs)) / 1000));
    const run = await runLoad(job(batch));
    runs.push(run);
    amount += batch;
    elapsedMs += run.durationMs;
    rate = run.requestsPerSecond;
  }
  const after = await proxy.snapshot();
  const main: LoadResult = {
    statuses: {},
    errors: runs.reduce((a, r) => a + r.errors, 0),
    timeouts: runs.reduce((a, r) => a + r.timeouts, 0),
    durationMs: elapsedMs,
    requestsPerSecond: 0,
    // The longest run's percentiles stand for the whole (top-ups are short).
    latency: runs.reduce((a, r) => (r.durationMs > a.durationMs ? r : a)).latency,
  };
  for (const r of runs) {
    for (const [status, n] of Object.entries(r.statuses))
      main.statuses[status] = (main.statuses[status] ?? 0) + n;
  }
  const accepted = (r: LoadResult) => r.statuses[String(target.acceptedStatus)] ?? 0;
  const others = (r: LoadResult) =>
    Object.entries(r.statuses)
      .filter(([s]) => s !== String(target.acceptedStatus))
      .reduce((a, [, n]) => a + n, 0);
  let actual = 0;
  for (const code of codes) {
    const link = await env.client.expect<{ total_clicks: number }>(
      { method: 'GET', path: `/api/v1/referral_link?referral_code=${code}` },
      200,
    );
    actual += link.total_clicks;
  }
  const expected = accepted(calibration) + accepted(main);
  const cancelled =
    (after.counts['failed:TransactWriteItems'] ?? 0) - (before.counts['failed:TransactWriteItems'] ?? 0);
  return {
    label: target.label,
    links: codes.length,
    connections,
    seconds: main.durationMs / 1000,
    requests: amount,
    accepted: accepted(main),
    acceptedStatus: target.acceptedStatus,
    requestsPerSecond: accepted(main) / (main.durationMs / 1000),
    errors: main.errors + main.timeouts + calibration.errors + calibration.timeouts,
    rejected: others(main) + others(calibration),
    latency: main.latency,
    cancelledTransactionsPerRequest: cancelled / Math.max(1, accepted(main)),
    counter: { expected, actual, pass: expected === actual },
  };
}

export async function measureLoad(
  env: BenchEnvironment,
  campaignId: string,
  options: {
    seconds: number;
    floorSeconds: number;
    connections: number;
    /** Called before each run (the bench waits for the webhook pipeline to be idle). */
    beforeRun?: () => Promise<unknown>;
    /** The endpoint cases' floors (visit, link action): the operations without our code. */
    visitFloor?: () => Promise<unknown>;
    actionFloor?: () => Promise<unknown>;
  },
): Promise<LoadResultSet> {
  const newLinks = async (n: number) => {
    const codes: string[] = [];
    for (let i = 0; i < n; i++) {
      const link = await env.client.expect<{ referral_code: string }>(
        { method: 'POST', path: '/api/v1/referral_link', body: { campaign_id: campaignId } },
        201,
      );
      codes.push(link.referral_code);
    }
    return codes;
  };
  const visit: Target = {
    label: 'GET /r/{referral_code}',
    method: 'GET',
    headers: { 'user-agent': 'Mozilla/5.0 (bench load)' },
    variant: (code) => ({ path: `/r/${code}` }),
    acceptedStatus: 302,
  };
  const action: Target = {
    label: 'POST /api/v1/action/referral_link',
    method: 'POST',
    headers: { 'api-key': env.apiKey, 'content-type': 'application/json' },
    variant: (code) => ({
      path: '/api/v1/action/referral_link',
      body: JSON.stringify({ referral_code: code, action_type: 'purchase', metadata: { source: 'load' } }),
    }),
    acceptedStatus: 201,
  };
  const rows: LoadRow[] = [];
  const floors: LoadFloor[] = [];
  for (const [label, run] of [
    [visit.label, options.visitFloor],
    [action.label, options.actionFloor],
  ] as const) {
    if (run) floors.push(await floorThroughput(label, run, options.connections, options.floorSeconds));
  }
  for (const target of [visit, action]) {
    // Each run starts with the webhook pipeline idle: the previous run's events would otherwise
    // be processed in this process during it.
    await options.beforeRun?.();
    rows.push(await loadOne(env, env.proxy, target, await newLinks(1), options.seconds, options.connections));
  }
  return { rows, floors };
}
