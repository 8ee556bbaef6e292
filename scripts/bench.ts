/**
 * `npm run bench`: the performance report. Starts its own local stack (DynamoDB Local in memory
 * behind a counting proxy, its own port), measures every figure beside its floor or goal in the
 * same run, prints the tables and writes the report (Markdown with Mermaid charts, and JSON) to a
 * temporary directory it names, or with `--write` to bench/results.md and bench/results.json.
 * `--full` runs the reference scales (about an hour) instead of the default run's (about 10
 * minutes on 2 cores); `--help` lists each scale and the environment variable that overrides it
 * (BENCH_LATENCY_N, BENCH_LOAD_SECONDS, BENCH_HOTLINK_SECONDS, BENCH_SCALE_LINKS, BENCH_EVENTS and
 * BENCH_PAGE_SAMPLES as before; BENCH_QUICK is gone: the default run is the short one).
 * BENCH_PARTS (e.g. `freshness,cost`) runs only the parts named, and part 1, which starts the stack.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../tools/bundles.ts';
import { analyticsPart } from './bench/analytics.ts';
import { coldPart } from './bench/coldstart.ts';
import { costPart } from './bench/cost.ts';
import { dashboardPart } from './bench/dashboard.ts';
import { waitPipelineIdle } from './bench/environment.ts';
import { freshnessPart } from './bench/freshness.ts';
import { hotlinkPart } from './bench/hotlink.ts';
import { outagePart } from './bench/outage.ts';
import * as report from './bench/report.ts';
import { callsPart, latencyPart, loadPart } from './bench/requests.ts';
import { scalePart } from './bench/scale.ts';
import { full, help, settings } from './bench/settings.ts';
import { isolationPart, webhooksPart } from './bench/webhooks.ts';

/**
 * The parts in the order they run: the cold start first (pure CPU, it wants the machine to
 * itself); isolation after the other webhook parts (its bad receivers' retries stay scheduled);
 * the outage last (it stops DynamoDB Local for a while). The report orders them by number.
 */
const PARTS: report.BenchPart[] = [
  coldPart,
  callsPart,
  dashboardPart,
  latencyPart,
  webhooksPart,
  loadPart,
  hotlinkPart,
  freshnessPart,
  scalePart,
  analyticsPart,
  isolationPart,
  costPart,
  outagePart,
];

if (process.argv.includes('--help')) {
  console.log(
    `npm run bench [-- --full] [-- --write]\n\nBENCH_PARTS: ${PARTS.map((p) => p.name).join(', ')}\n\nscale (environment variable, default run / --full):\n${help}`,
  );
  process.exit(0);
}
const only = (process.env.BENCH_PARTS ?? '').split(',').flatMap((p) => p.trim() || []);
for (const name of only)
  if (!PARTS.some((p) => p.name === name)) throw new Error(`BENCH_PARTS: unknown part "${name}"`);
const wanted = (p: report.BenchPart) => only.length === 0 || only.includes(p.name);
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
  log(`${full ? 'full run (--full)' : 'default run'} on ${cpu}, Node ${process.version}`);
  const failures: string[] = [];
  const ctx = { data: {} } as report.Context;
  const sections: Array<report.Section & report.Outcome & { name: string; seconds: number }> = [];
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
        const seconds = (performance.now() - t) / 1000;
        log(`${part.title} done in ${seconds.toFixed(1)} s`);
        sections.push({ title: part.title, name: part.name, seconds, ...outcome });
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
  const findings = [...sections.flatMap((s) => report.findingsOf(s.name, s)), ...failures];
  const seconds = (performance.now() - started) / 1000;
  const parts = Object.fromEntries(sections.map((s) => [s.name, Math.round(s.seconds)]));
  const out: report.Report = {
    intro: `Generated by \`npm run bench -- --write${full ? ' --full' : ''}\` (scripts/bench.ts) on ${date}${full ? '' : ' — **the default run: shorter than `--full`, whose scales are the reference**'}, in one run of ${Math.round(seconds)} s against the local stack the bench starts itself (DynamoDB Local in memory); every figure stands beside its floor or goal from the same run. The machine is shared: absolute milliseconds move with its load, the ratios to floors measured interleaved are the figures to compare.`,
    machine: report.rows(`
machine | value
CPU | ${cpu}
memory | ${(totalmem() / 1024 ** 3).toFixed(1)} GiB
OS | ${type()} ${release()}
Node.js | ${process.version}
load average (1/5/15 min) at start → end | ${loadAtStart} → ${loadAverage()}
scales | ${Object.entries(settings)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ')}
seconds per part | ${Object.entries(parts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`),
    summary: sections.map((s) => s.summary),
    findings,
    sections,
    rerun:
      '`npm ci && npm run bench` (needs Java 17+ for DynamoDB Local, and Chromium for the dashboard part) prints the tables and writes this report to a temporary directory; `npm run bench -- --write` writes `bench/results.md` and `bench/results.json`; `--full` runs the reference scales. `BENCH_PARTS=freshness,cost` runs only the parts named; `npm run bench -- --help` lists every scale and the environment variable that overrides it.',
  };
  const write = process.argv.includes('--write');
  const outDir = write ? join(projectRoot, 'bench') : mkdtempSync(join(tmpdir(), 'bench-'));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'results.md'), report.renderMarkdown(out));
  // Each section's tables hold its figures; `data` what a part kept for later parts.
  const json = sections.map(({ title, seconds, summary, checks, body, data }) => {
    const tables = body.filter((b) => typeof b !== 'string' && b !== false);
    return { title, seconds, summary, checks, tables, data };
  });
  const results = { date, full, seconds, settings, findings, sections: json };
  writeFileSync(join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  console.log(report.renderConsole(out));
  log(`wrote ${join(outDir, 'results.md')} and results.json${write ? '' : ' (`--write` writes bench/)'}`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
