/**
 * `npm run bench`: the performance report. Starts its own local stack (DynamoDB Local in memory
 * behind a counting proxy, its own port), measures every figure beside its floor in the same run
 * and prints the tables. The Markdown report (tables and Mermaid charts) and the JSON go to a
 * temporary directory it names; `npm run bench -- --write` writes them to bench/results.md and
 * bench/results.json instead, so a plain run never dirties the working tree.
 *
 * Settings (`scripts/bench/environment.ts`): BENCH_QUICK=1 shortens every part; BENCH_LATENCY_N,
 * BENCH_LOAD_SECONDS and BENCH_SCALE_LINKS override single settings; BENCH_HOTLINK_SECONDS is the
 * length of each of the hot-link part's four runs (default 10 s, quick 4 s); BENCH_EVENTS the
 * visits of the analytics part's campaign of BENCH_SCALE_LINKS links (default 1,000,000, quick
 * 20,000: about 3 million items written into DynamoDB Local at 1,500–2,500 items/s on 2 shared
 * cores, so some 20–35 minutes for that part alone; it prints its progress). BENCH_PARTS (e.g.
 * `webhooks,isolation`) runs only the parts named: cold, calls, latency, webhooks, load, hotlink,
 * scale, analytics, isolation, cost, outage, dashboard.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../tools/bundles.ts';
import { measureOutage } from '../tools/outage.ts';
import { analyticsPart } from './bench/analytics.ts';
import { coldPart } from './bench/coldstart.ts';
import { costPart } from './bench/cost.ts';
import { dashboardPart } from './bench/dashboard.ts';
import { callsPart } from './bench/endpoints.ts';
import {
  type BenchPart,
  type Context,
  type Outcome,
  quick,
  settings,
  waitPipelineIdle,
} from './bench/environment.ts';
import { hotlinkPart } from './bench/hotlink.ts';
import { latencyPart } from './bench/latency.ts';
import { loadPart } from './bench/load.ts';
import { type Report, renderConsole, renderMarkdown, type Section } from './bench/report.ts';
import { scalePart } from './bench/scale.ts';
import { ms } from './bench/stats.ts';
import { isolationPart, webhooksPart } from './bench/webhooks.ts';

const outagePart: BenchPart = {
  name: 'outage',
  title: '5c. A DynamoDB outage: what a client sees, and the recovery',
  stack: true,
  async run({ env }) {
    const signal = (name: NodeJS.Signals) => () => void process.kill(env.dynamo.pid!, name);
    const pauseMs = settings.outageSeconds * 1000;
    const { baseUrl } = env.stack;
    const o = await measureOutage({
      baseUrl,
      apiKey: env.apiKey,
      pause: signal('SIGSTOP'),
      resume: signal('SIGCONT'),
      pauseMs,
    });
    const exact = o.clicks.counted === o.clicks.expected && o.referrals.counted === o.referrals.expected;
    const answers = Object.entries(o.duringOutage).map(
      ([status, n]) => `${n} × ${status === '0' ? 'no answer' : status}`,
    );
    return {
      body: [
        'DynamoDB Local paused (SIGSTOP) under keyed writes (actions, signups), each retried with its `Idempotency-Key` after a 5xx, a 409 in progress or a dropped connection (`tools/outage.ts`, which the fault suite also runs). DynamoDB calls have a 5 s deadline and the authorizer 2 s: a 503 with `Retry-After` within about 7 s, never a 500 or a hang; afterwards every counter equals the keys that got a 2xx.',
        [
          ['measure', 'value'],
          [
            'DynamoDB paused',
            `${(o.pauseMs / 1000).toFixed(1)} s, under ${o.logicalRequests} keyed writes (${o.attempts} attempts)`,
          ],
          ['answers to attempts made during the pause', answers.join(', ') || 'none'],
          ['Retry-After of the 503s', o.retryAfterValues.join(', ') || '—'],
          ['longest wait for an answer during the pause', `${ms(o.slowestAnswerDuringOutageMs)} ms`],
          ['from the resume to the first 2xx of a new attempt', `${ms(o.recoveryMs)} ms`],
          ['total_clicks: keys answered 2xx / counted', `${o.clicks.expected} / ${o.clicks.counted}`],
          [
            'total_referrals: keys answered 2xx / counted',
            `${o.referrals.expected} / ${o.referrals.counted}`,
          ],
          ['retries answered from a stored answer', o.replays],
        ],
      ],
      summary: `DynamoDB outage (${(o.pauseMs / 1000).toFixed(0)} s): answers within ${ms(o.slowestAnswerDuringOutageMs)} ms (${Object.keys(o.duringOutage).join('/')}), recovery ${ms(o.recoveryMs)} ms, counters ${exact ? 'exact' : 'OFF'}.`,
      findings: [
        !exact &&
          `DynamoDB outage: counters off after retries (clicks ${o.clicks.counted} for ${o.clicks.expected} keys, referrals ${o.referrals.counted} for ${o.referrals.expected}).`,
      ],
      data: o,
    };
  },
};

/**
 * The parts in the order they run: the cold start first (pure CPU, it wants the machine to
 * itself); isolation after the other webhook parts (its bad receivers' retries stay scheduled);
 * the outage last (it stops DynamoDB Local for a while). The report orders them by number.
 */
const PARTS: BenchPart[] = [
  coldPart,
  callsPart,
  dashboardPart,
  latencyPart,
  webhooksPart,
  loadPart,
  hotlinkPart,
  scalePart,
  analyticsPart,
  isolationPart,
  costPart,
  outagePart,
];
const only = (process.env.BENCH_PARTS ?? '').split(',').flatMap((p) => p.trim() || []);
for (const name of only)
  if (!PARTS.some((p) => p.name === name)) throw new Error(`BENCH_PARTS: unknown part "${name}"`);
const wanted = (p: BenchPart) => only.length === 0 || only.includes(p.name);
// Part 1 starts the stack the other stack parts need.
const selected = PARTS.filter(
  (p) => wanted(p) || (p === callsPart && PARTS.some((q) => q.stack && wanted(q))),
);

const started = performance.now();
const log = (message: string) =>
  console.log(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${message}`);
const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');

async function main(): Promise<number> {
  const date = new Date().toISOString().slice(0, 10);
  const cpu = `${cpus()[0]?.model.trim() ?? 'unknown'}, ${cpus().length} cores`;
  const loadAtStart = loadAverage();
  log(`${quick ? 'QUICK run' : 'full run'} on ${cpu}, Node ${process.version}`);
  const failures: string[] = [];
  const ctx = { data: {} } as Context;
  const sections: Array<Section & Outcome> = [];
  try {
    for (const part of selected) {
      if (part.stack && part !== callsPart && !ctx.cases) {
        failures.push(`Part ${part.title} did not run: the local stack did not start`);
        continue;
      }
      if (ctx.cases) await waitPipelineIdle(ctx.env);
      log(`${part.title}…`);
      const t = performance.now();
      try {
        const outcome = await part.run(ctx);
        log(`${part.title} done in ${((performance.now() - t) / 1000).toFixed(1)} s`);
        sections.push({ title: part.title, ...outcome });
        ctx.data[part.name] = outcome.data;
      } catch (err) {
        console.error(err);
        log(`${part.title} FAILED: ${err instanceof Error ? err.message : err}`);
        failures.push(`Part ${part.title} did not run: ${err instanceof Error ? err.message : err}`);
      }
    }
  } finally {
    await ctx.env?.stop();
  }

  sections.sort((a, b) => (a.title < b.title ? -1 : 1));
  const findings = [...sections.flatMap((s) => s.findings.filter((f): f is string => !!f)), ...failures];
  const seconds = (performance.now() - started) / 1000;
  const report: Report = {
    intro: `Generated by \`npm run bench -- --write\` (scripts/bench.ts) on ${date}${quick ? ' — **QUICK run (BENCH_QUICK=1): shortened, not the reference figures**' : ''}, in one run of ${Math.round(seconds)} s against the local stack the bench starts itself (DynamoDB Local in memory); every figure stands beside its floor from the same run. The machine is shared: absolute milliseconds move with its load, the ratios to floors measured interleaved are the figures to compare.`,
    machine: [
      ['CPU', cpu],
      ['memory', `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`],
      ['OS', `${type()} ${release()}`],
      ['Node.js', process.version],
      ['load average (1/5/15 min) at start → end', `${loadAtStart} → ${loadAverage()}`],
      [
        'settings',
        Object.entries(settings)
          .map(([k, v]) => `${k}=${v}`)
          .join(', '),
      ],
    ].map(([machine, value]) => ({ machine: machine!, '': value! })),
    summary: sections.map((s) => s.summary),
    findings,
    sections,
    rerun:
      '`npm ci && npm run bench` (needs Java 17+ for DynamoDB Local) prints the tables and writes this report to a temporary directory; `npm run bench -- --write` writes `bench/results.md` and `bench/results.json`. `BENCH_QUICK=1` shortens every part; `BENCH_SCALE_LINKS`, `BENCH_LATENCY_N`, `BENCH_LOAD_SECONDS`, `BENCH_HOTLINK_SECONDS` and `BENCH_EVENTS` (the analytics campaign’s visits, default 1,000,000) override single settings; `BENCH_PARTS=webhooks,isolation` runs only the parts named (cold, calls, latency, webhooks, isolation, load, hotlink, scale, analytics, cost, outage, dashboard).',
  };
  const write = process.argv.includes('--write');
  const outDir = write ? join(projectRoot, 'bench') : mkdtempSync(join(tmpdir(), 'bench-'));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'results.md'), renderMarkdown(report));
  const data = Object.fromEntries(sections.map((s) => [s.title, s.data]));
  const json = { date, quick, seconds, settings, findings, data };
  writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(json, null, 2)}\n`);
  console.log(renderConsole(report));
  log(
    `wrote ${join(outDir, 'results.md')} and results.json${write ? '' : ' (`npm run bench -- --write` writes bench/)'}`,
  );
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
