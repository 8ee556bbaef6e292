/**
 * Part 4: cold start. Every function's bundle, built as CDK builds it (`bundles.ts`), beside its
 * floor: a bundle of the AWS SDK clients it uses and nothing else (`tools/floors/`; DynamoDB's for a
 * function with none). Import times are taken in fresh `node` processes, functions and floors
 * alike, with the environment a function gets in AWS (`--enable-source-maps` included, as
 * `infra/functions.ts` sets it), each import's wall time and the CPU time (user + system) of the
 * process while it imports. A function is always timed in a pair with its floor, one process right
 * after the other, which goes first alternating, the pairs round-robin over the functions; it is
 * compared with its floor by the median of its paired differences in CPU time, which the other load
 * on a shared machine hardly moves (wall time there is mostly waiting for a core).
 */
import { execFile } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import {
  BUNDLE_BUDGETS,
  type BuiltBundle,
  budgetClassOf,
  buildBundles,
  bundleDir,
  CLIENTS,
  FLOOR_GOAL,
  FLOORS,
  type FloorName,
  floorEntries,
  floorOf,
  functionEntries,
  removeBundleDir,
} from '../../tools/bundles.ts';
import { type BenchPart, settings } from './environment.ts';
import { chart } from './report.ts';
import { kib, median, ms, pct, yes } from './stats.ts';

const GOAL = FLOOR_GOAL;

/** One import in a fresh process: wall time, and the process's CPU time while importing (ms). */
type Sample = { wall: number; cpu: number };

/** What the functions read at module load, with placeholder values (nothing is called). */
const FUNCTION_ENV: Record<string, string> = {
  TABLE_NAME: 'referrals-bench',
  STAGE: 'bench',
  POWERTOOLS_SERVICE_NAME: 'referral-api',
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhooks.fifo',
  WEBHOOK_RETRY_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhooks-retry',
  WEBHOOK_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhooks-dlq',
  PURGE_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/purge',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  LOG_LEVEL: 'WARN',
  // The SDK warns on Node < 22 at load; Lambda runs Node 22, where it does not.
  NODE_NO_WARNINGS: '1',
  NODE_OPTIONS: '--enable-source-maps',
};

/** One import of `file` in a fresh process with the function's environment. */
async function importOnce(file: string): Promise<Sample> {
  const code = `const c = process.cpuUsage(), t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const u = process.cpuUsage(c); process.stdout.write(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...FUNCTION_ENV };
  return JSON.parse(
    (await promisify(execFile)(process.execPath, ['--input-type=module', '-e', code], { env })).stdout,
  );
}

/** Every function and floor bundled; each function imported `pairs` times in a pair with its floor. */
export async function measureColdStart(pairs: number) {
  const dir = bundleDir();
  try {
    const t = performance.now();
    const all = await buildBundles([...functionEntries(), ...floorEntries()], dir);
    const buildSeconds = (performance.now() - t) / 1000;
    const floors = Object.fromEntries(
      FLOORS.map((name) => [name, all.find((b) => b.name === `floor/${name}`)!]),
    );
    const rows = all
      .filter((b) => !b.name.startsWith('floor/'))
      .map((b) => ({ ...b, floor: floorOf(b.packages), own: [] as Sample[], paired: [] as Sample[] }));
    await importOnce(all[0]!.file); // the file cache warm before the first pair
    for (let round = 0; round < pairs; round++) {
      for (const [i, row] of rows.entries()) {
        const pair = [
          async () => row.own.push(await importOnce(row.file)),
          async () => row.paired.push(await importOnce(floors[row.floor]!.file)),
        ];
        if ((round + i) % 2) pair.reverse();
        for (const run of pair) await run();
      }
    }
    return { rows, floors: floors as Record<FloorName, BuiltBundle>, buildSeconds };
  } finally {
    removeBundleDir(dir);
  }
}
type ColdRow = Awaited<ReturnType<typeof measureColdStart>>['rows'][number];

const med = (samples: Sample[], of: keyof Sample) => median(samples.map((s) => s[of]));
/** A function's import CPU time (the median of its imports), from this part's data. */
export function importMs(data: unknown, name: string): number {
  const row = (data as ColdRow[] | undefined)?.find((r) => r.name === name);
  return row ? med(row.own, 'cpu') : Number.NaN;
}
/** Its import CPU time over its floor's: the median of its paired differences. */
const cpuOver = (r: ColdRow) => median(r.own.map((s, i) => s.cpu - r.paired[i]!.cpu));
const signed = (v: number) => `${v >= 0 ? '+' : ''}${ms(v)}`;
const range = (values: number[], f: (n: number) => string) =>
  `${f(Math.min(...values))}–${f(Math.max(...values))}`;

export const coldPart: BenchPart = {
  name: 'cold',
  title: '4. Cold start: bundle size and import time vs the floor',
  stack: false,
  async run() {
    const c = await measureColdStart(settings.coldStartPairs);
    const floorRuns = (name: FloorName) => c.rows.filter((r) => r.floor === name).flatMap((r) => r.paired);
    const floorCpu = (name: FloorName) => med(floorRuns(name), 'cpu');
    /** Within the goal; a function without an SDK client is below the DynamoDB floor. */
    const within = (r: ColdRow, value: number, floor: number) =>
      r.usesAwsSdk || value >= floor ? yes(value <= floor * GOAL) : value < floor / 2 ? 'far below' : 'below';
    const sdk = c.rows.filter((r) => r.usesAwsSdk);
    const sizeRatio = (r: ColdRow) => r.bytes / c.floors[r.floor].bytes;
    const cpuRatio = (r: ColdRow) => 1 + cpuOver(r) / floorCpu(r.floor);
    const worst = (rows: ColdRow[], of: (r: ColdRow) => number) => rows.sort((a, b) => of(b) - of(a))[0];
    const sizeOver = sdk.filter((r) => sizeRatio(r) > GOAL);
    const cpuOverGoal = sdk.filter((r) => cpuRatio(r) > GOAL);
    const [sizeWorst, cpuWorst] = [worst(sizeOver, sizeRatio), worst(cpuOverGoal, cpuRatio)];
    const largest = worst(
      sdk.filter((r) => '@aws-sdk/client-dynamodb' in r.packages),
      (r) => r.bytes,
    )!;
    const dynamo = sdk.filter((r) => r.floor === 'dynamodb');
    const sizes = range(
      dynamo.map((r) => r.bytes),
      kib,
    );
    const cpus = range(
      dynamo.map((r) => med(r.own, 'cpu')),
      ms,
    );
    return {
      body: [
        `Every function bundled as the CDK stack bundles it (\`infra/bundling.ts\`; build ${c.buildSeconds.toFixed(1)} s). Each function’s floor is a bundle of the AWS SDK clients it uses and nothing else, one command each (\`tools/floors/\`): DynamoDB for the HTTP functions, DynamoDB + SQS for the consumers that also send to SQS; a function without an SDK client is held to the DynamoDB floor. Import: a fresh \`node\` process imports \`index.mjs\` with \`--enable-source-maps\` and the function’s environment, floors exactly as functions, timed in wall time and in CPU time (user + system of the process while it imports). Each function is imported ${settings.coldStartPairs} times in a pair with its floor (one process right after the other, which goes first alternating, the pairs round-robin over the functions) and compared with it by the median of the paired differences in CPU time: the machine is shared, so wall time there is mostly waiting for a core, and what load remains falls on both sides of a pair alike. Goal: within 15 % of its floor, in size and in import CPU time, for every function with an SDK client. Budgets (\`test/unit/bundle-size.test.ts\`): functions with an AWS SDK client ${kib(BUNDLE_BUDGETS.sdk)} KiB; without one ${kib(BUNDLE_BUDGETS.noSdk)} KiB; documentation functions (openapi/docs routes) ${kib(BUNDLE_BUDGETS.docs)} KiB.`,
        [
          ...c.rows.map((r) => {
            const [floor, budget] = [c.floors[r.floor], BUNDLE_BUDGETS[budgetClassOf(r)]];
            return {
              function: r.name,
              'floor (SDK clients)': r.usesAwsSdk ? CLIENTS[r.floor] : 'no SDK (DynamoDB floor)',
              KiB: kib(r.bytes),
              'size vs floor': pct(r.bytes, floor.bytes),
              'size ≤ +15 %': within(r, r.bytes, floor.bytes),
              'budget KiB': `${kib(budget)} (${r.bytes <= budget ? 'ok' : 'OVER'})`,
              'import ms, wall (median)': ms(med(r.own, 'wall')),
              'import ms, CPU (median)': ms(med(r.own, 'cpu')),
              'CPU over its floor (median of pairs)': `${signed(cpuOver(r))} ms`,
              'CPU vs floor': pct(floorCpu(r.floor) + cpuOver(r), floorCpu(r.floor)),
              'CPU ≤ +15 %': within(r, floorCpu(r.floor) + cpuOver(r), floorCpu(r.floor)),
            };
          }),
          ...FLOORS.map((name) => ({
            function: `**floor: ${CLIENTS[name]}**`,
            'floor (SDK clients)': CLIENTS[name],
            KiB: kib(c.floors[name].bytes),
            'import ms, wall (median)': ms(med(floorRuns(name), 'wall')),
            'import ms, CPU (median)': floorRuns(name).length ? ms(floorCpu(name)) : 'no function uses it',
          })),
        ],
        chart(
          'Bundle size: bars the function, line its floor',
          'KiB',
          c.rows.map((r) => [r.name, r.bytes / 1024, c.floors[r.floor].bytes / 1024]),
        ),
        chart(
          'Import CPU time (medians): bars the function, line its floor in the same pairs',
          'ms',
          c.rows.map((r) => [r.name, med(r.own, 'cpu'), med(r.paired, 'cpu')]),
        ),
        `What the largest DynamoDB function (${largest.name}) carries beyond its floor (≥ 1 KiB):`,
        [
          ['package or folder', 'KiB more than the floor'],
          ...Object.entries(largest.packages)
            .map(([p, bytes]) => [p, bytes - (c.floors[largest.floor].packages[p] ?? 0)] as const)
            .filter(([, d]) => Math.abs(d) >= 1024)
            .sort((a, b) => b[1] - a[1])
            .map(([p, d]) => [p, kib(d)]),
        ],
      ],
      summary: `Bundles: DynamoDB-only functions ${sizes} KiB vs their floor ${kib(c.floors.dynamodb.bytes)} KiB, import CPU ${cpus} ms vs ${ms(floorCpu('dynamodb'))} ms (${range(dynamo.map(cpuOver), signed)} ms in the median pair); of ${sdk.length} functions with an SDK client, ${sdk.length - sizeOver.length} within +15 % of their own floor in size, ${sdk.length - cpuOverGoal.length} in import CPU time.`,
      findings: [
        sizeWorst &&
          `Bundle size: ${sizeOver.length} of ${sdk.length} functions with an SDK client are more than 15 % above their floor; the furthest is ${sizeWorst.name}, ${kib(sizeWorst.bytes)} KiB (${pct(sizeWorst.bytes, c.floors[sizeWorst.floor].bytes)} over the ${CLIENTS[sizeWorst.floor]} floor).`,
        cpuWorst &&
          `Cold import: ${cpuOverGoal.length} of ${sdk.length} functions with an SDK client take more than 15 % more CPU time to import than their floor; the furthest is ${cpuWorst.name}, ${signed(cpuOver(cpuWorst))} ms over the ${CLIENTS[cpuWorst.floor]} floor’s ${ms(floorCpu(cpuWorst.floor))} ms in the median pair.`,
        ...c.rows.map(
          (r) =>
            r.bytes > BUNDLE_BUDGETS[budgetClassOf(r)] &&
            `Bundle budget exceeded: ${r.name} is ${kib(r.bytes)} KiB.`,
        ),
      ],
      data: c.rows,
    };
  },
};
