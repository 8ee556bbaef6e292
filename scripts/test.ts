/**
 * `npm test`: everything CI runs (lint, type check, every vitest project), in the wall time two
 * cores allow. The files that time things or wait on stacks run in one vitest, group after group
 * (vitest.config.ts); meanwhile the work that only computes and measures nothing (Biome, tsc,
 * the `unit` and `infra` projects) runs beside it at the lowest CPU priority, so it takes only
 * the CPU those files leave idle (the emulator's and the timed files' groups use about one core)
 * and never the CPU a timed file is measured with. Their output is printed once the tests end.
 *
 * Arguments go to both vitests (`npm test -- test/unit/url.test.ts`: lint, type check and the
 * files that match).
 */
import { spawn } from 'node:child_process';
import { constants, setPriority } from 'node:os';

interface Outcome {
  name: string;
  code: number;
  seconds: number;
  output: string;
}

function run(
  name: string,
  command: string,
  args: string[],
  lowPriority: boolean,
  env: NodeJS.ProcessEnv = {},
): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    // The foreground run is shown as it goes and also kept, so its failures can close the output.
    if (!lowPriority) {
      child.stdout?.pipe(process.stdout);
      child.stderr?.pipe(process.stderr);
    }
    // Before the child has started its own children (tsc, vitest's workers), which inherit it.
    if (lowPriority && child.pid) setPriority(child.pid, constants.priority.PRIORITY_LOW);
    let output = '';
    child.stdout?.on('data', (d: Buffer) => {
      output += d;
    });
    child.stderr?.on('data', (d: Buffer) => {
      output += d;
    });
    child.on('error', (err) => {
      output += `${err.message}\n`;
    });
    child.on('close', (code, signal) =>
      resolve({
        name,
        code: code ?? (signal ? 1 : 0),
        seconds: (performance.now() - started) / 1000,
        output,
      }),
    );
  });
}

const filters = process.argv.slice(2);
/** With filters, one of the two vitests may match no file: that is not a failure. */
const vitestArgs = ['vitest', 'run', ...(filters.length > 0 ? ['--passWithNoTests', ...filters] : [])];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';

const background = [
  run('lint', npm, ['run', '--silent', 'lint'], true),
  run('typecheck', npm, ['run', '--silent', 'typecheck'], true),
  run('vitest: the computing projects', npx, vitestArgs, true, { TEST_PART: 'computing' }),
];
const foreground = await run('vitest: the other projects', npx, vitestArgs, false, {
  TEST_PART: 'others',
});
const outcomes = [...(await Promise.all(background)), foreground];

for (const o of outcomes.slice(0, -1)) {
  if (!o.output.trim()) continue;
  console.log(`\n── ${o.name} (${o.code === 0 ? 'passed' : `failed, exit ${o.code}`}) ──`);
  process.stdout.write(o.output.endsWith('\n') ? o.output : `${o.output}\n`);
}
/**
 * CI keeps only the last few lines of a long output: each failed vitest's own "Failed Tests"
 * block is repeated here, and below it one line per failed test with its first error, so the
 * summary's last lines name what failed.
 */
const brief: string[] = [];
for (const o of outcomes) {
  if (o.code === 0) continue;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: strips the colours vitest adds on CI
  const lines = o.output.replace(/\u001b\[[0-9;]*m/g, '').split('\n');
  const start = lines.findIndex((l) => /Failed Tests \d+/.test(l));
  const failed = start >= 0 ? lines.slice(start) : lines.slice(-60);
  console.log(`\n── failures of ${o.name} ──`);
  console.log(failed.slice(0, 200).join('\n'));
  failed.forEach((line, i) => {
    if (!/^\s*FAIL\s/.test(line)) return;
    const error = failed.slice(i + 1, i + 6).find((l) => /\w*Error\b|expected/i.test(l));
    brief.push(`  ${line.trim()}${error ? `\n      ${error.trim().slice(0, 160)}` : ''}`);
  });
}
if (brief.length > 0) console.log(`\nfailed:\n${brief.slice(0, 16).join('\n')}`);
console.log('\nnpm test:');
for (const o of outcomes) {
  console.log(`  ${o.code === 0 ? 'ok  ' : 'FAIL'} ${o.name} (${o.seconds.toFixed(0)} s)`);
}
process.exitCode = outcomes.some((o) => o.code !== 0) ? 1 : 0;
