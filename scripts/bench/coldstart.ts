/**
 * Part 4: cold start. Every function's bundle, built as CDK builds it, is imported in a fresh
 * `node` process (10 times, round-robin over the bundles so load on the machine hits all alike)
 * with the environment the function gets in AWS, including `NODE_OPTIONS=--enable-source-maps`
 * as `infra/functions.ts` sets it. Each function's floor is a bundle of the AWS SDK clients it
 * uses and nothing else (DynamoDB for the HTTP functions, DynamoDB + SQS for the consumers that
 * send to SQS): `scripts/bench/floors/`.
 */
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import {
  type BuiltBundle,
  buildBundles,
  bundleDir,
  FLOORS,
  type FloorName,
  floorEntries,
  floorOf,
  functionEntries,
  removeBundleDir,
} from './bundles.ts';
import { median } from './stats.ts';

export interface ColdStartRow
  extends Pick<
    BuiltBundle,
    'name' | 'kind' | 'path' | 'bytes' | 'mapBytes' | 'usesDynamo' | 'usesAwsSdk' | 'packages'
  > {
  /** Median time to import the bundle in a fresh process. */
  importMs: number;
  runs: number[];
  /** The floor it is compared with: the bundle of the same SDK clients alone. */
  floor: FloorName;
}

export interface ColdStartResult {
  rows: ColdStartRow[];
  /** The DynamoDB-only floor (every HTTP function's). */
  floor: ColdStartRow;
  floors: Record<FloorName, ColdStartRow>;
  buildSeconds: number;
}

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

function importOnce(file: string): Promise<number> {
  const code = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...FUNCTION_ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('close', (status) => {
      const ms = Number(out);
      if (status !== 0 || !Number.isFinite(ms))
        reject(new Error(`import of ${file} failed: ${err.slice(0, 500)}`));
      else resolve(ms);
    });
  });
}

export async function measureColdStart(runs: number): Promise<ColdStartResult> {
  const dir = bundleDir();
  try {
    const t = performance.now();
    const bundles = await buildBundles([...functionEntries(), ...floorEntries()], dir);
    const buildSeconds = (performance.now() - t) / 1000;
    const times = bundles.map(() => [] as number[]);
    await importOnce(bundles[0]!.file); // warm the file cache once
    for (let r = 0; r < runs; r++) {
      for (let i = 0; i < bundles.length; i++) times[i]!.push(await importOnce(bundles[i]!.file));
    }
    const all = bundles.map(
      (b, i): ColdStartRow => ({
        name: b.name,
        kind: b.kind,
        ...(b.path ? { path: b.path } : {}),
        bytes: b.bytes,
        mapBytes: b.mapBytes,
        usesDynamo: b.usesDynamo,
        usesAwsSdk: b.usesAwsSdk,
        packages: b.packages,
        importMs: median(times[i]!),
        runs: times[i]!,
        floor: floorOf(b.packages),
      }),
    );
    const floors = Object.fromEntries(
      FLOORS.map((name) => [name, all.find((r) => r.name === `floor/${name}`)!]),
    ) as Record<FloorName, ColdStartRow>;
    return { rows: all.filter((r) => r.kind !== 'floor'), floor: floors.dynamodb, floors, buildSeconds };
  } finally {
    removeBundleDir(dir);
  }
}
