/**
 * `npm run bench`: the performance report (issue 7). Starts its own local stack (DynamoDB Local
 * in memory behind a counting proxy, its own port), measures every figure beside its floor in
 * the same run and prints the tables. The Markdown report (tables and Mermaid charts) and the JSON
 * go to a temporary directory it names; `npm run bench -- --write` writes them to bench/results.md
 * and bench/results.json instead, so a plain run never dirties the working tree.
 *
 * Settings: BENCH_QUICK=1 shortens every part; BENCH_LATENCY_N, BENCH_LOAD_SECONDS and
 * BENCH_SCALE_LINKS override single settings; BENCH_PARTS (e.g. `webhooks,isolation`) runs only
 * the parts named, of cold, calls, latency, webhooks, isolation, load, scale, cost and outage.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { measureOutage } from '../test/support/outage.ts';
import { projectRoot } from './bench/bundles.ts';
import { measureCalls, recordFloors } from './bench/calls.ts';
import { measureColdStart } from './bench/coldstart.ts';
import { costModel, measureItemSizes } from './bench/cost.ts';
import { createFixtures, endpointCases, warmUp } from './bench/endpoints.ts';
import { type BenchEnvironment, startBenchEnvironment } from './bench/environment.ts';
import { measureLatency } from './bench/latency.ts';
import { measureLoad } from './bench/load.ts';
import {
  type BenchResults,
  consoleReport,
  type Machine,
  type Phase,
  renderMarkdown,
} from './bench/report.ts';
import { measureScale } from './bench/scale.ts';
import { ms } from './bench/stats.ts';
import { measureWebhookIsolation, measureWebhooks, waitPipelineIdle } from './bench/webhooks.ts';

const quick = process.env.BENCH_QUICK === '1';
const write = process.argv.slice(2).includes('--write');
const PARTS = [
  'cold',
  'calls',
  'latency',
  'webhooks',
  'isolation',
  'load',
  'scale',
  'cost',
  'outage',
] as const;
type Part = (typeof PARTS)[number];
const only = (process.env.BENCH_PARTS ?? '')
  .split(',')
  .map((p) => p.trim())
  .filter(Boolean);
for (const p of only) {
  if (!(PARTS as readonly string[]).includes(p)) throw new Error(`BENCH_PARTS: unknown part "${p}"`);
}
const NOT_SELECTED = 'not selected (BENCH_PARTS)';
const selected = (part: Part) => only.length === 0 || only.includes(part);
const num = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number, got "${v}"`);
  return n;
};
const settings = {
  latencyRequests: num('BENCH_LATENCY_N', quick ? 200 : 1000),
  latencyFloorEvery: 4,
  loadSeconds: num('BENCH_LOAD_SECONDS', quick ? 5 : 20),
  loadFloorSeconds: 5,
  loadConnections: 32,
  scaleLinks: num('BENCH_SCALE_LINKS', quick ? 10_000 : 100_000),
  coldStartRuns: quick ? 5 : 10,
  webhookLatencyEvents: quick ? 50 : 200,
  webhookBacklog: quick ? 300 : 2000,
  webhookPaceMs: 25,
  isolationSeconds: quick ? 20 : 25,
  isolationPaceMs: 200,
  isolationBacklog: quick ? 50 : 100,
  outageSeconds: quick ? 5 : 10,
  pageSamples: quick ? 10 : 30,
  purgeTimeoutSeconds: quick ? 60 : 180,
};

const started = performance.now();
const log = (message: string) =>
  console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

async function phase<T>(name: string, run: () => Promise<T>, part?: Part): Promise<Phase<T>> {
  if (part && !selected(part)) return { ok: false, reason: NOT_SELECTED };
  log(`${name}…`);
  const t = performance.now();
  try {
    const value = await run();
    log(`${name} done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    return { ok: true, value };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log(`${name} FAILED: ${reason}`);
    if (err instanceof Error && err.stack) console.error(err.stack);
    return { ok: false, reason };
  }
}

const skipped = <T>(reason: string): Phase<T> => ({ ok: false, reason });

async function main(): Promise<number> {
  const cpuList = cpus();
  const machine: Machine = {
    cpu: cpuList[0]?.model.trim() ?? 'unknown',
    cores: cpuList.length,
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    os: `${type()} ${release()}`,
    loadAverageStart: load(),
    loadAverageEnd: '',
  };
  const date = new Date().toISOString().slice(0, 10);
  log(`${quick ? 'QUICK run' : 'full run'} on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}`);

  // Cold start first, before the stack runs: it is pure CPU and wants the machine to itself.
  const coldStart = await phase(
    'cold start: bundles and imports',
    () => measureColdStart(settings.coldStartRuns),
    'cold',
  );

  let env: BenchEnvironment | undefined;
  const stackPhases = [
    'calls',
    'latency',
    'load',
    'webhooks',
    'isolation',
    'outage',
    'scale',
    'cost',
  ] as const;
  const skipAll = (reason: string) =>
    Object.fromEntries(stackPhases.map((k) => [k, skipped(reason)])) as Pick<
      BenchResults,
      (typeof stackPhases)[number]
    >;
  const results: BenchResults = {
    date,
    quick,
    seconds: 0,
    machine,
    settings,
    coldStart,
    ...skipAll('the local stack did not start'),
    unmeasuredRoutes: [],
  };
  try {
    const started = await phase(
      'starting DynamoDB Local, the counting proxy and the local stack',
      startBenchEnvironment,
    );
    if (started.ok) {
      env = started.value;
      const e = env;
      log(`stack at ${e.stack.baseUrl}, DynamoDB Local at ${e.dynamo.endpoint} behind ${e.proxy.url}`);
      const fixtures = await phase(
        'fixtures (campaign, 150 links, a referred user), warm-up and floors',
        async () => {
          const f = await createFixtures(e);
          const { cases, unmeasured } = endpointCases(e, f, () => waitPipelineIdle(e, e.proxy, 30_000));
          results.unmeasuredRoutes = unmeasured;
          await warmUp(e.client, cases);
          await recordFloors(e.proxy, e.client, cases);
          return { f, cases };
        },
      );
      if (fixtures.ok) {
        const { f, cases } = fixtures.value;
        results.calls = await phase(
          '1. DynamoDB calls per request',
          () => measureCalls(e.proxy, e.client, cases),
          'calls',
        );
        results.latency = await phase(
          `2. latency, ${settings.latencyRequests} requests per endpoint`,
          () =>
            measureLatency(
              e.proxy,
              e.client,
              cases,
              settings.latencyRequests,
              settings.latencyFloorEvery,
              (row) =>
                log(
                  `   ${row.label}: p50 ${ms(row.stack.p50)} ms${row.floorN ? ` vs floor ${ms(row.floor.p50)} ms (${row.ratioP50.toFixed(2)}×)` : ' (no DynamoDB call: no floor)'}`,
                ),
            ),
          'latency',
        );
        const sizes = await phase('item sizes for the cost model', () =>
          measureItemSizes(e, f.campaign.id, f.link.referral_code),
        );
        results.webhooks = await phase(
          '5. webhooks',
          async () => {
            await waitPipelineIdle(e, e.proxy);
            return measureWebhooks(e, {
              latencyEvents: settings.webhookLatencyEvents,
              backlogEvents: settings.webhookBacklog,
              paceMs: settings.webhookPaceMs,
            });
          },
          'webhooks',
        );
        results.load = await phase(
          `3. throughput, ${settings.loadSeconds} s per endpoint`,
          async () => {
            await waitPipelineIdle(e, e.proxy, 60_000);
            return measureLoad(e, f.campaign.id, {
              seconds: settings.loadSeconds,
              floorSeconds: settings.loadFloorSeconds,
              beforeRun: () => waitPipelineIdle(e, e.proxy, 30_000),
              visitFloor: cases.find((c) => c.key === 'visit')?.floor?.run,
              actionFloor: cases.find((c) => c.key === 'post-link-action')?.floor?.run,
              connections: settings.loadConnections,
            });
          },
          'load',
        );
        results.scale = await phase(
          `6. scale, ${settings.scaleLinks} links`,
          async () => {
            await waitPipelineIdle(e, e.proxy, 60_000);
            return measureScale(e, {
              links: settings.scaleLinks,
              pageSamples: settings.pageSamples,
              purgeTimeoutSeconds: settings.purgeTimeoutSeconds,
            });
          },
          'scale',
        );
        // Last of the stack's phases: the bad receivers' campaigns leave retries scheduled.
        results.isolation = await phase(
          '5b. webhook isolation',
          async () => {
            await waitPipelineIdle(e, e.proxy, 60_000);
            return measureWebhookIsolation(e, {
              seconds: settings.isolationSeconds,
              paceMs: settings.isolationPaceMs,
              backlogPerReceiver: settings.isolationBacklog,
            });
          },
          'isolation',
        );
        results.cost = await phase(
          '7. cost model',
          async () => {
            if (!sizes.ok) throw new Error(`no item sizes: ${sizes.reason}`);
            const lat = results.latency.ok ? results.latency.value : [];
            const cold = results.coldStart.ok ? results.coldStart.value.rows : [];
            const calls = results.calls.ok ? results.calls.value.rows : [];
            const p50 = (key: string) => lat.find((x) => x.key === key)?.stack.p50 ?? Number.NaN;
            const importMs = (name: string) => cold.find((x) => x.name === name)?.importMs ?? Number.NaN;
            const callsOf = (label: string) => {
              const row = calls.find((x) => x.label === label);
              return row ? `${row.calls} (${Object.keys(row.ops).join(' + ')})` : 'not measured';
            };
            return costModel({
              date,
              sizes: sizes.value,
              visitMs: p50('visit'),
              actionMs: p50('post-link-action'),
              visitImportMs: importMs('http/visit'),
              actionImportMs: importMs('http/post-link-action'),
              visitCalls: callsOf('GET /r/{referral_code}'),
              actionCalls: callsOf('POST /api/v1/action/referral_link'),
            });
          },
          'cost',
        );
        // Last of all: it stops DynamoDB Local for a while.
        results.outage = await phase(
          '8. a DynamoDB outage',
          async () => {
            const pid = e.dynamo.pid;
            if (!pid) throw new Error('no DynamoDB Local process to pause');
            return measureOutage({
              baseUrl: e.stack.baseUrl,
              apiKey: e.apiKey,
              pause: () => void process.kill(pid, 'SIGSTOP'),
              resume: () => void process.kill(pid, 'SIGCONT'),
              pauseMs: settings.outageSeconds * 1000,
            });
          },
          'outage',
        );
      } else Object.assign(results, skipAll(`fixtures failed: ${fixtures.reason}`));
    }
  } finally {
    if (env) {
      log('stopping the stack');
      await env.stop();
    }
  }

  results.seconds = (performance.now() - started) / 1000;
  machine.loadAverageEnd = load();
  const outDir = write ? join(projectRoot, 'bench') : mkdtempSync(join(tmpdir(), 'bench-'));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'results.md'), renderMarkdown(results));
  writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(consoleReport(results));
  log(
    `wrote ${join(outDir, 'results.md')} and results.json in ${results.seconds.toFixed(0)} s${write ? '' : ' (`npm run bench -- --write` writes bench/)'}`,
  );

  const crashed = [results.coldStart, ...stackPhases.map((k) => results[k])].some(
    (p) => !p.ok && p.reason !== NOT_SELECTED,
  );
  return crashed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
