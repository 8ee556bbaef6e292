/**
 * Function bundles built the way the CDK stack builds them (`infra/functions.ts`: NodejsFunction
 * with local esbuild, its options from `infra/bundling.ts`, the one definition the stack bundles
 * with too), and their size budgets: for the bundle-size test, and for `npm run bench` (sizes and
 * import times beside each function's floor, `scripts/bench/coldstart.ts`).
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { esbuildOptions, writeBundleFiles } from '../infra/bundling.ts';
import { routes } from '../lib/routes.ts';

export const projectRoot = resolve(fileURLToPath(new URL('..', import.meta.url)));

export interface BundleEntry {
  /** Handler module under `functions/` (e.g. `http/get-campaign`), or another name (the bench's floors). */
  name: string;
  /** Absolute path of the entry source file. */
  entry: string;
  /** Route path for route functions (the docs budget applies to documentation routes). */
  path?: string;
}

/**
 * Every function the stack deploys: one per route-table row, the authorizer, the `$default`
 * fallback, every SQS consumer under `functions/queue/` and every table-stream consumer under
 * `functions/stream/` (found on disk, so consumers that land later are measured without touching
 * this file).
 */
export function functionEntries(): BundleEntry[] {
  const entry = (name: string, path?: string) => ({
    name,
    entry: join(projectRoot, 'functions', `${name}.ts`),
    path,
  });
  const consumers = ['queue', 'stream', 'scheduled'].flatMap((kind) =>
    readdirSync(join(projectRoot, 'functions', kind))
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .sort()
      .map((f) => entry(`${kind}/${basename(f, '.ts')}`)),
  );
  const all = [
    ...routes.map((r) => entry(r.handler, r.path)),
    entry('auth/authorizer'),
    entry('http/fallback'),
  ];
  return [...all, ...consumers].filter((e, i, list) => list.findIndex((x) => x.name === e.name) === i);
}

/** Each function's bundle is held within 15 % of its floor's size (and import time, in the bench). */
export const FLOOR_GOAL = 1.15;
/** The floors, by the AWS SDK clients a function bundles: a bundle of those clients alone, one command each. */
export const CLIENTS = { dynamodb: 'DynamoDB', 'dynamodb-sqs': 'DynamoDB + SQS', sqs: 'SQS' } as const;
export type FloorName = keyof typeof CLIENTS;
export const FLOORS = Object.keys(CLIENTS) as FloorName[];

/** The floors' entries (`tools/floors/<name>.ts`), named `floor/<name>`. */
export function floorEntries(): BundleEntry[] {
  return FLOORS.map((name) => ({
    name: `floor/${name}`,
    entry: join(projectRoot, 'tools', 'floors', `${name}.ts`),
  }));
}

/** A bundle's floor: its SDK clients (`@aws-sdk/client-*`), DynamoDB's for one with none. */
export function floorOf(packages: Record<string, number>): FloorName {
  const clients = Object.keys(packages)
    .filter((p) => p.startsWith('@aws-sdk/client-'))
    .map((p) => p.slice('@aws-sdk/client-'.length))
    .sort()
    .join('-');
  return clients in CLIENTS ? (clients as FloorName) : 'dynamodb';
}

export interface BuiltBundle extends BundleEntry {
  /** The bundle's `index.mjs`. */
  file: string;
  /** Size of `index.mjs` in bytes (what Lambda loads; the source map is separate). */
  bytes: number;
  /** Whether any AWS SDK client (DynamoDB, SQS, ...) is in the bundle (decided from the bundle). */
  usesAwsSdk: boolean;
  /** Bytes in the output per npm package (or per top-level source folder). */
  packages: Record<string, number>;
}

function packagesOf(output: Metafile['outputs'][string]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [file, { bytesInOutput }] of Object.entries(output.inputs)) {
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    const key = m ? m[1]! : file.split('/').slice(0, 2).join('/');
    out[key] = (out[key] ?? 0) + bytesInOutput;
  }
  return out;
}

/**
 * Build each entry into `<dir>/<name>/index.mjs` (NodejsFunction's file name for ESM), with the
 * files CDK's afterBundling hook writes beside it. One esbuild call with every entry and no code
 * splitting gives each entry its own complete bundle, byte for byte what one NodejsFunction asset
 * holds, in less than half the time of one build per entry.
 */
export async function buildBundles(entries: BundleEntry[], dir: string): Promise<BuiltBundle[]> {
  const result = await build({
    ...esbuildOptions(),
    logLevel: 'error',
    metafile: true,
    absWorkingDir: projectRoot,
    entryPoints: entries.map((e) => ({ in: e.entry, out: `${e.name}/index` })),
    outdir: dir,
    outExtension: { '.js': '.mjs' },
  });
  const outputs = new Map(
    Object.entries(result.metafile.outputs).map(([f, o]) => [resolve(projectRoot, f), o]),
  );
  return entries.map((entry) => {
    const file = join(dir, entry.name, 'index.mjs');
    const output = outputs.get(file);
    if (!output) throw new Error(`esbuild produced no ${file}`);
    writeBundleFiles(entry.name, dirname(file));
    const packages = packagesOf(output);
    const usesAwsSdk = Object.keys(packages).some((p) => p.startsWith('@aws-sdk/client-'));
    return { ...entry, file, bytes: statSync(file).size, usesAwsSdk, packages };
  });
}

/** A fresh temporary directory for one set of bundles. */
export function bundleDir(): string {
  return mkdtempSync(join(tmpdir(), 'referral-bundles-'));
}

export function removeBundleDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Size budgets the bundle-size test enforces (bytes of `index.mjs`), about 20 % above the sizes
 * measured when they were set (bench/results.md states them beside today's sizes), last set once
 * the validators were generated at build time (TypeBox left every bundle):
 * - a function with an AWS SDK client (DynamoDB, SQS): largest 413 KiB (the webhook consumers;
 *   HTTP functions 374–384 KiB) -> 496 KiB (was 576 KiB);
 * - a function with no AWS SDK client (the `$default` fallback, 38 KiB) -> 46 KiB (was 124 KiB);
 * - a documentation function (a route under `openapi` or `docs`: the document and its TypeBox
 *   schemas; the reference page's Redoc script is a file beside the bundle, not in it), largest
 *   116 KiB -> 140 KiB (was 652 KiB, when the page inlined Redoc: 543 KiB); 144 KiB once the
 *   document gained conversions, click ids and the referred-user list (five routes, their schemas
 *   and examples: the document is what grew) -> 172 KiB. The dashboard's
 *   function (`/dashboard`: its page, script and stylesheet inside the bundle, 58 KiB) is held to
 *   the same budget.
 */
export const BUNDLE_BUDGETS = {
  sdk: 496 * 1024,
  noSdk: 46 * 1024,
  docs: 172 * 1024,
} as const;

export type BudgetClass = keyof typeof BUNDLE_BUDGETS;

export function budgetClassOf(bundle: Pick<BuiltBundle, 'name' | 'path' | 'usesAwsSdk'>): BudgetClass {
  if (/openapi|docs|dashboard/i.test(`${bundle.name} ${bundle.path ?? ''}`)) return 'docs';
  return bundle.usesAwsSdk ? 'sdk' : 'noSdk';
}
