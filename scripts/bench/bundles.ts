/**
 * Function bundles built the way the CDK stack builds them (`infra/functions.ts`: NodejsFunction
 * with local esbuild), shared by `npm run bench` (sizes, import times) and the bundle-size test.
 *
 * The esbuild options come from `infra/bundling.ts`, the one definition the stack bundles with too.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Metafile } from 'esbuild';
import { esbuildOptions, writeBundleFiles } from '../../infra/bundling.ts';
import { routes } from '../../lib/routes.ts';

export const projectRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

export type BundleKind = 'route' | 'authorizer' | 'fallback' | 'queue' | 'stream' | 'floor';

export interface BundleEntry {
  /** Handler module under `functions/` (e.g. `http/get-campaign`), or `floor`. */
  name: string;
  kind: BundleKind;
  /** Absolute path of the entry source file. */
  entry: string;
  /** Route path for route functions (the docs budget applies to documentation routes). */
  path?: string;
}

/**
 * The floors, by the AWS SDK clients a function bundles (`clientsOf`): each a bundle of nothing
 * but those clients and one command each (`scripts/bench/floors/`).
 */
export const FLOORS = ['dynamodb', 'dynamodb-sqs', 'sqs'] as const;
export type FloorName = (typeof FLOORS)[number];

/** The floor for a bundle: its SDK clients (`@aws-sdk/client-*`), DynamoDB's for one with none. */
export function floorOf(packages: Record<string, number>): FloorName {
  const clients = Object.keys(packages)
    .filter((p) => p.startsWith('@aws-sdk/client-'))
    .map((p) => p.slice('@aws-sdk/client-'.length))
    .sort()
    .join('-');
  return (FLOORS as readonly string[]).includes(clients) ? (clients as FloorName) : 'dynamodb';
}

/**
 * Every function the stack deploys: one per route-table row, the authorizer, the `$default`
 * fallback, every SQS consumer under `functions/queue/` and every table-stream consumer under
 * `functions/stream/` (found on disk, so consumers that land later are measured without touching
 * this file).
 */
export function functionEntries(): BundleEntry[] {
  const entries: BundleEntry[] = [];
  const seen = new Set<string>();
  const add = (name: string, kind: BundleKind, path?: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    entries.push({
      name,
      kind,
      entry: join(projectRoot, 'functions', `${name}.ts`),
      ...(path ? { path } : {}),
    });
  };
  for (const route of routes) add(route.handler, 'route', route.path);
  add('auth/authorizer', 'authorizer');
  add('http/fallback', 'fallback');
  for (const kind of ['queue', 'stream'] as const) {
    for (const file of readdirSync(join(projectRoot, 'functions', kind)).sort()) {
      if (file.endsWith('.ts') && !file.endsWith('.test.ts')) add(`${kind}/${basename(file, '.ts')}`, kind);
    }
  }
  return entries;
}

export const floorEntries = (): BundleEntry[] =>
  FLOORS.map((name) => ({
    name: `floor/${name}`,
    kind: 'floor',
    entry: join(projectRoot, 'scripts', 'bench', 'floors', `${name}.ts`),
  }));

export interface BuiltBundle extends BundleEntry {
  /** The bundle's `index.mjs`. */
  file: string;
  /** Size of `index.mjs` in bytes (what Lambda loads; the source map is separate). */
  bytes: number;
  mapBytes: number;
  /** Whether the DynamoDB client is in the bundle (decided from the bundle, not declared). */
  usesDynamo: boolean;
  /** Whether any AWS SDK client (DynamoDB, SQS, ...) is in the bundle. */
  usesAwsSdk: boolean;
  /** Bytes in the output per npm package (or per top-level source folder). */
  packages: Record<string, number>;
}

const OPTIONS: BuildOptions = {
  ...esbuildOptions(),
  logLevel: 'error',
  metafile: true,
  absWorkingDir: projectRoot,
};

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
 * Build each entry into `<dir>/<name>/index.mjs` (NodejsFunction's file name for ESM).
 *
 * `separate` (the bench): one esbuild build per entry, exactly like one NodejsFunction asset.
 * `shared` (the test): one esbuild call with every entry and no code splitting, which gives each
 * entry its own complete bundle from the same options, about twice as fast on two cores.
 */
export async function buildBundles(
  entries: BundleEntry[],
  dir: string,
  mode: 'separate' | 'shared' = 'separate',
): Promise<BuiltBundle[]> {
  const outputs = new Map<string, Metafile['outputs'][string]>();
  const outFile = (e: BundleEntry) => join(dir, e.name, 'index.mjs');
  if (mode === 'shared') {
    const result = await build({
      ...OPTIONS,
      entryPoints: entries.map((e) => ({ in: e.entry, out: `${e.name}/index` })),
      outdir: dir,
      outExtension: { '.js': '.mjs' },
    });
    for (const [file, output] of Object.entries(result.metafile?.outputs ?? {})) {
      outputs.set(resolve(projectRoot, file), output);
    }
  } else {
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < entries.length; i = next++) {
        const entry = entries[i]!;
        const result = await build({ ...OPTIONS, entryPoints: [entry.entry], outfile: outFile(entry) });
        for (const [file, output] of Object.entries(result.metafile?.outputs ?? {})) {
          outputs.set(resolve(projectRoot, file), output);
        }
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
  }
  return entries.map((entry) => {
    const file = outFile(entry);
    const output = outputs.get(file);
    if (!output) throw new Error(`esbuild produced no ${file}`);
    // The files CDK's afterBundling hook writes beside this function's bundle (the docs' Redoc).
    writeBundleFiles(entry.name, dirname(file));
    const packages = packagesOf(output);
    return {
      ...entry,
      file,
      bytes: statSync(file).size,
      mapBytes: statSync(`${file}.map`).size,
      usesDynamo: '@aws-sdk/client-dynamodb' in packages,
      usesAwsSdk: Object.keys(packages).some((p) => p.startsWith('@aws-sdk/client-')),
      packages,
    };
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
 *   116 KiB -> 140 KiB (was 652 KiB, when the page inlined Redoc: 543 KiB).
 */
export const BUNDLE_BUDGETS = {
  sdk: 496 * 1024,
  noSdk: 46 * 1024,
  docs: 140 * 1024,
} as const;

export type BudgetClass = keyof typeof BUNDLE_BUDGETS;

export const BUDGET_DESCRIPTIONS: Record<BudgetClass, string> = {
  sdk: 'functions with an AWS SDK client',
  noSdk: 'functions without an AWS SDK client',
  docs: 'documentation functions (openapi/docs routes)',
};

export function budgetClassOf(bundle: Pick<BuiltBundle, 'name' | 'path' | 'usesAwsSdk'>): BudgetClass {
  if (/openapi|docs/i.test(`${bundle.name} ${bundle.path ?? ''}`)) return 'docs';
  return bundle.usesAwsSdk ? 'sdk' : 'noSdk';
}
