/** Part 4: bundles beside their floors, imported in pairs; by CPU time, which other load hardly moves. */
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as bundles from '../../tools/bundles.ts';
import { type BenchPart, chart, type Point, rows } from './report.ts';
import { settings } from './settings.ts';
import { kib, median, ms, pct, sec, signed, timed, yes } from './stats.ts';

const { BUNDLE_BUDGETS, CLIENTS, FLOOR_GOAL: GOAL, FLOORS, budgetClassOf } = bundles;
/** One import in a fresh process: wall time, and the process's CPU time while importing (ms). */
type Sample = { wall: number; cpu: number };
/** What the functions read at module load, with placeholder values (nothing is called). */
const SQS = 'https://sqs.us-east-1.amazonaws.com/000000000000';
const FUNCTION_ENV: Record<string, string> = {
  ...{ TABLE_NAME: 'referrals-bench', STAGE: 'bench', POWERTOOLS_SERVICE_NAME: 'referral-api' },
  LOG_LEVEL: 'WARN',
  ...{ WEBHOOK_QUEUE_URL: `${SQS}/webhooks.fifo`, WEBHOOK_RETRY_QUEUE_URL: `${SQS}/webhooks-retry` },
  ...{ WEBHOOK_DLQ_URL: `${SQS}/webhooks-dlq`, PURGE_QUEUE_URL: `${SQS}/purge` },
  ...{ AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'bench', AWS_SECRET_ACCESS_KEY: 'bench' },
  // The SDK warns on Node < 22 at load; Lambda runs Node 22, where it does not.
  ...{ NODE_NO_WARNINGS: '1', NODE_OPTIONS: '--enable-source-maps' },
};

async function importOnce(file: string): Promise<Sample> {
  const code = `const c = process.cpuUsage(), t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...FUNCTION_ENV };
  const args = ['--input-type=module', '-e', code];
  return JSON.parse((await promisify(execFile)(process.execPath, args, { env })).stdout);
}

/** Every function and floor bundled; each function imported `pairs` times in a pair with its floor. */
async function measureColdStart(pairs: number) {
  const dir = bundles.bundleDir();
  try {
    const entries = [...bundles.functionEntries(), ...bundles.floorEntries()];
    const [all, buildMs] = await timed(() => bundles.buildBundles(entries, dir));
    const floorOf = (name: bundles.FloorName) => all.find((b) => b.name === `floor/${name}`)!;
    const floors = Object.fromEntries(FLOORS.map((name) => [name, floorOf(name)]));
    const measured = (b: bundles.BuiltBundle) => ({ ...b, floor: bundles.floorOf(b.packages) });
    const functions = all
      .filter((b) => !b.name.startsWith('floor/'))
      .map((b) => ({ ...measured(b), own: [] as Sample[], paired: [] as Sample[] }));
    await importOnce(all[0]!.file); // the file cache warm before the first pair
    for (let round = 0; round < pairs; round++)
      for (const [i, f] of functions.entries()) {
        const pair = [
          async () => f.own.push(await importOnce(f.file)),
          async () => f.paired.push(await importOnce(floors[f.floor]!.file)),
        ];
        for (const run of (round + i) % 2 ? pair.reverse() : pair) await run();
      }
    return { functions, floors: floors as Record<bundles.FloorName, bundles.BuiltBundle>, buildMs };
  } finally {
    bundles.removeBundleDir(dir);
  }
}
type Measured = Awaited<ReturnType<typeof measureColdStart>>['functions'][number];
const med = (samples: Sample[], of: keyof Sample) => median(samples.map((s) => s[of]));
export function importMs(data: unknown, name: string): number {
  const f = (data as Measured[] | undefined)?.find((r) => r.name === name);
  return f ? med(f.own, 'cpu') : Number.NaN;
}
/** Its import CPU time over its floor's: the median of its paired differences. */
const cpuOver = (f: Measured) => median(f.own.map((s, i) => s.cpu - f.paired[i]!.cpu));
const range = (xs: number[], f: (n: number) => string) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

export const coldPart: BenchPart = {
  ...{ name: 'cold', title: '4. Cold start: bundle size and import time vs the floor' },
  standalone: true,
  async run() {
    const { functions, floors, buildMs } = await measureColdStart(settings.coldStartPairs);
    const floorRuns = (name: bundles.FloorName) =>
      functions.filter((f) => f.floor === name).flatMap((f) => f.paired);
    const floorCpu = (name: bundles.FloorName) => med(floorRuns(name), 'cpu');
    /** Within the goal; a function without an SDK client is below the DynamoDB floor. */
    const within = (f: Measured, value: number, floor: number) =>
      f.usesAwsSdk || value >= floor ? yes(value <= floor * GOAL) : value < floor / 2 ? 'far below' : 'below';
    const sdk = functions.filter((f) => f.usesAwsSdk);
    const sizeRatio = (f: Measured) => f.bytes / floors[f.floor].bytes;
    const cpuRatio = (f: Measured) => 1 + cpuOver(f) / floorCpu(f.floor);
    const worst = (fs: Measured[], of: (f: Measured) => number) => [...fs].sort((a, b) => of(b) - of(a))[0];
    const sizeOver = sdk.filter((f) => sizeRatio(f) > GOAL);
    const cpuOverGoal = sdk.filter((f) => cpuRatio(f) > GOAL);
    const [sizeWorst, cpuWorst] = [worst(sdk, sizeRatio), worst(sdk, cpuRatio)];
    const withDynamo = sdk.filter((f) => '@aws-sdk/client-dynamodb' in f.packages);
    const largest = worst(withDynamo, (f) => f.bytes)!;
    const dynamo = sdk.filter((f) => f.floor === 'dynamodb');
    const row = (f: Measured) => {
      const [floor, cpu] = [floors[f.floor].bytes, floorCpu(f.floor)];
      const budget = BUNDLE_BUDGETS[budgetClassOf(f)];
      const client = f.usesAwsSdk ? CLIENTS[f.floor] : 'no SDK (DynamoDB floor)';
      return `${f.name} | ${client} | ${kib(f.bytes)} | ${pct(f.bytes, floor)} | ${within(f, f.bytes, floor)} | ${kib(budget)} (${f.bytes <= budget ? 'ok' : 'OVER'}) | ${ms(med(f.own, 'wall'))} | ${ms(med(f.own, 'cpu'))} | ${signed(cpuOver(f))} ms | ${pct(cpu + cpuOver(f), cpu)} | ${within(f, cpu + cpuOver(f), cpu)}`;
    };
    const floorRow = (name: bundles.FloorName) =>
      `**floor: ${CLIENTS[name]}** | ${CLIENTS[name]} | ${kib(floors[name].bytes)} | | | | ${ms(med(floorRuns(name), 'wall'))} | ${floorRuns(name).length ? ms(floorCpu(name)) : 'no function uses it'} | | |`;
    const beyond = Object.entries(largest.packages)
      .map(([p, bytes]) => [p, bytes - (floors[largest.floor].packages[p] ?? 0)] as const)
      .filter(([, d]) => Math.abs(d) >= 1024)
      .sort((a, b) => b[1] - a[1]);
    const [bytes, cpus] = [dynamo.map((f) => f.bytes), dynamo.map((f) => med(f.own, 'cpu'))];
    const [sizes, cpuRange, over] = [range(bytes, kib), range(cpus, ms), range(dynamo.map(cpuOver), signed)];
    const overBudget = functions.filter((f) => f.bytes > BUNDLE_BUDGETS[budgetClassOf(f)]);
    const sizePoints = functions.map((f): Point => [f.name, f.bytes / 1024, floors[f.floor].bytes / 1024]);
    const cpu = functions.map((f): Point => [f.name, med(f.own, 'cpu'), med(f.paired, 'cpu')]);
    return {
      body: [
        `Every function bundled as the CDK stack bundles it (\`infra/bundling.ts\`; build ${sec(buildMs)} s). Each function’s floor is a bundle of the AWS SDK clients it uses and nothing else, one command each (\`tools/floors/\`): DynamoDB for the HTTP functions, DynamoDB + SQS for the consumers that also send to SQS; a function without an SDK client is held to the DynamoDB floor. Import: a fresh \`node\` process imports \`index.mjs\` with \`--enable-source-maps\` and the function’s environment, floors exactly as functions, timed in wall time and in CPU time (user + system of the process while it imports). Each function is imported ${settings.coldStartPairs} times in a pair with its floor (one process right after the other, which goes first alternating, the pairs round-robin over the functions) and compared with it by the median of the paired differences in CPU time: the machine is shared, so wall time there is mostly waiting for a core, and what load remains falls on both sides of a pair alike. Goal: within 15 % of its floor, in size and in import CPU time, for every function with an SDK client. Budgets (\`test/unit/bundle-size.test.ts\`): functions with an AWS SDK client ${kib(BUNDLE_BUDGETS.sdk)} KiB; without one ${kib(BUNDLE_BUDGETS.noSdk)} KiB; documentation functions (openapi/docs routes) ${kib(BUNDLE_BUDGETS.docs)} KiB.`,
        rows(`
function | floor (SDK clients) | KiB | size vs floor | size ≤ +15 % | budget KiB | import ms, wall (median) | import ms, CPU (median) | CPU over its floor (median of pairs) | CPU vs floor | CPU ≤ +15 %
${[...functions.map(row), ...FLOORS.map(floorRow)].join('\n')}`),
        chart('Bundle size: bars the function, line its floor', 'KiB', sizePoints),
        chart('Import CPU time (medians): bars the function, line its floor in the same pairs', 'ms', cpu),
        `What the largest DynamoDB function (${largest.name}) carries beyond its floor (≥ 1 KiB):`,
        rows(`
package or folder | KiB more than the floor
${beyond.map(([p, d]) => `${p} | ${kib(d)}`).join('\n')}`),
      ],
      summary: `Bundles: DynamoDB-only functions ${sizes} KiB vs their floor ${kib(floors.dynamodb.bytes)} KiB, import CPU ${cpuRange} ms vs ${ms(floorCpu('dynamodb'))} ms (${over} ms in the median pair); of ${sdk.length} functions with an SDK client, ${sdk.length - sizeOver.length} within +15 % of their own floor in size, ${sdk.length - cpuOverGoal.length} in import CPU time.`,
      findings: [
        sizeOver.length > 0 &&
          `Bundle size: ${sizeOver.length} of ${sdk.length} functions with an SDK client are more than 15 % above their floor; the furthest is ${sizeWorst!.name}, ${kib(sizeWorst!.bytes)} KiB (${pct(sizeWorst!.bytes, floors[sizeWorst!.floor].bytes)} over the ${CLIENTS[sizeWorst!.floor]} floor).`,
        cpuOverGoal.length > 0 &&
          `Cold import: ${cpuOverGoal.length} of ${sdk.length} functions with an SDK client take more than 15 % more CPU time to import than their floor; the furthest is ${cpuWorst!.name}, ${signed(cpuOver(cpuWorst!))} ms over the ${CLIENTS[cpuWorst!.floor]} floor’s ${ms(floorCpu(cpuWorst!.floor))} ms in the median pair.`,
        ...overBudget.map((f) => `Bundle budget exceeded: ${f.name} is ${kib(f.bytes)} KiB.`),
      ],
      data: functions,
    };
  },
};
