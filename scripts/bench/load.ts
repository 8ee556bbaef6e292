/**
 * Part 3: throughput of the visit redirect and of action recording under load (autocannon in a
 * child process, `load-worker.ts`), each on one fresh hot link: every request raises the same
 * counter, the exact-counter test and the worst case for transaction conflicts. A calibration run
 * sets the rate, the main run sends what fills the duration at it; the link's total_clicks must
 * equal the accepted responses of both. The floor is the endpoint's recorded DynamoDB requests
 * (the latency floor's replay) run by as many concurrent loops: what DynamoDB Local sustains.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BROWSER } from './endpoints.ts';
import { type BenchPart, settings, waitPipelineIdle } from './environment.ts';
import type { LoadJob, LoadResult } from './load-worker.ts';
import type { Row } from './report.ts';

/** One autocannon run in its own process (`load-worker.ts`). */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const worker = fileURLToPath(new URL('./load-worker.ts', import.meta.url));
  const args = [...process.execArgv, worker, JSON.stringify(job)];
  return JSON.parse((await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 24 })).stdout);
}

/** Operations per second of `run` in `connections` concurrent loops for `seconds`. */
async function floorRate(run: () => Promise<unknown>, connections: number, seconds: number) {
  let done = 0;
  const started = performance.now();
  const loop = async () => {
    for (; performance.now() < started + seconds * 1000; done++) await run();
  };
  await Promise.all(Array.from({ length: connections }, loop));
  return done / ((performance.now() - started) / 1000);
}

const TARGETS = {
  Visit: (code: string) => ({ method: 'GET' as const, path: `/r/${code}` }),
  CreateLinkAction: (code: string) => ({
    method: 'POST' as const,
    path: '/api/v1/action/referral_link',
    body: JSON.stringify({ referral_code: code, action_type: 'purchase', metadata: { source: 'load' } }),
  }),
};

export const loadPart: BenchPart = {
  name: 'load',
  title: '3. Throughput under load, and exact counters',
  stack: true,
  async run({ env, fixtures, cases }) {
    const { loadConnections: connections, loadSeconds, loadFloorSeconds } = settings;
    const headers = { 'api-key': env.apiKey, 'content-type': 'application/json', 'user-agent': BROWSER };
    const call = env.client.call<{ referral_code: string; total_clicks: number }>;
    const rows = [];
    const table: Row[] = [];
    for (const [key, target] of Object.entries(TARGETS)) {
      const c = cases.find((x) => x.key === key)!;
      const floorPerSecond = await floorRate(c.floor!.run, connections, loadFloorSeconds);
      const code = (await call('POST', '/api/v1/referral_link', { campaign_id: fixtures.campaign_id }))
        .referral_code;
      const { path, ...request } = target(code);
      const job = (amount: number) => ({
        ...request,
        url: `${env.stack.baseUrl}${path}`,
        headers,
        connections,
        amount,
      });
      const accepted = (r: LoadResult) => r.statuses[c.status] ?? 0;
      const others = (r: LoadResult) => Object.values(r.statuses).reduce((a, n) => a + n, 0) - accepted(r);
      const calibration = await runLoad(job(connections * 8));
      const rate = accepted(calibration) / (calibration.durationMs / 1000);
      const before = (await env.proxy.snapshot()).counts['failed:TransactWriteItems'] ?? 0;
      const main = await runLoad(job(Math.max(connections, Math.round(rate * loadSeconds))));
      const cancelled = ((await env.proxy.snapshot()).counts['failed:TransactWriteItems'] ?? 0) - before;
      const clicks = (await call('GET', `/api/v1/referral_link?referral_code=${code}`)).total_clicks;
      const expected = accepted(calibration) + accepted(main);
      const perSecond = accepted(main) / (main.durationMs / 1000);
      const [errors, other] = [main.errors + calibration.errors, others(main) + others(calibration)];
      rows.push({ label: c.label, perSecond, floorPerSecond, clicks, expected, errors, other });
      table.push({
        endpoint: c.label,
        connections,
        seconds: (main.durationMs / 1000).toFixed(1),
        requests: accepted(main) + others(main),
        accepted: `${accepted(main)} (${c.status})`,
        'req/s': perSecond.toFixed(0),
        errors,
        'other statuses': other,
        'p50 / p99 ms': `${main.latency.p50} / ${main.latency.p99}`,
        'cancelled tx per request': (cancelled / Math.max(1, accepted(main))).toFixed(2),
        'floor ops/s': floorPerSecond.toFixed(0),
        'total_clicks = accepted': `${clicks} vs ${expected}: ${clicks === expected ? 'PASS' : 'FAIL'}`,
      });
      // The next run starts with the webhook pipeline idle, not working through this one's events.
      await waitPipelineIdle(env);
    }
    return {
      body: [
        `autocannon in a child process, ${connections} connections against the local gateway, each endpoint on one fresh hot link (every request raises the same counter), the webhook pipeline idle at the start. autocannon runs in amount mode (a calibration run sets the rate, the main run sends what fills ${loadSeconds} s at it), so every request is answered and "accepted" is exact: the link’s total_clicks must equal the accepted responses of both runs. "Cancelled tx" counts transactions DynamoDB Local rejected for a concurrent one (retried). The floor is the endpoint’s recorded DynamoDB requests (the latency floor’s replay, its conditional writes refused) run by as many concurrent loops for ${loadFloorSeconds} s. Everything shares the same cores here; in AWS each request gets its own Lambda.`,
        table,
      ],
      summary: `Throughput: ${rows.map((r) => `${r.label} ${r.perSecond.toFixed(0)} req/s`).join('; ')} (floors: ${rows.map((r) => `${r.floorPerSecond.toFixed(0)} ops/s`).join(', ')}); counters ${rows.every((r) => r.clicks === r.expected) ? 'exact in every run' : 'WRONG'}.`,
      findings: rows.flatMap((r) => [
        r.clicks !== r.expected &&
          `Counters: ${r.label}: total_clicks ${r.clicks} after ${r.expected} accepted requests.`,
        (r.errors || r.other) > 0 &&
          `Load: ${r.label}: ${r.errors} errors, ${r.other} responses with other statuses.`,
      ]),
      data: rows,
    };
  },
};
