import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE_FILES, BUNDLING, ESM_REQUIRE_BANNER, esbuildOptions } from '../../infra/bundling.ts';
import { BUNDLING as CDK_BUNDLING } from '../../infra/functions.ts';
import { routes } from '../../lib/routes.ts';
import {
  BUNDLE_BUDGETS,
  type BuiltBundle,
  budgetClassOf,
  buildBundles,
  bundleDir,
  FLOOR_GOAL,
  floorEntries,
  floorOf,
  functionEntries,
  projectRoot,
  removeBundleDir,
} from '../../tools/bundles.ts';

/**
 * Every function bundle, built as CDK builds it, stays within the budget `npm run bench` reports
 * (bench/results.md). A bundle that grows past it fails here, before it slows every cold start.
 * Nothing here can pass without checking: a missing entry fails the build, a missing bundle the
 * count below.
 */
describe('function bundle sizes', () => {
  let dir = '';
  let bundles: BuiltBundle[] = [];
  let floors: BuiltBundle[] = [];

  beforeAll(async () => {
    dir = bundleDir();
    const all = await buildBundles([...functionEntries(), ...floorEntries()], dir);
    bundles = all.filter((b) => !b.name.startsWith('floor/'));
    floors = all.filter((b) => b.name.startsWith('floor/'));
  }, 60_000);

  afterAll(() => {
    if (dir) removeBundleDir(dir);
  });

  const bundle = (name: string): BuiltBundle => {
    const found = bundles.find((b) => b.name === name);
    if (!found) throw new Error(`no bundle for ${name}`);
    return found;
  };

  it('builds every function: each route-table handler, the authorizer, the fallback, the queue and the stream consumers', () => {
    const consumers = (dir: string) =>
      readdirSync(join(projectRoot, 'functions', dir))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f.slice(0, -3)}`);
    const queue = [...consumers('queue'), ...consumers('stream'), ...consumers('scheduled')];
    const expected = [...new Set(routes.map((r) => r.handler)), 'auth/authorizer', 'http/fallback', ...queue];
    expect(bundles.map((b) => b.name).sort()).toEqual(expected.sort());
    expect(queue.length).toBeGreaterThan(0);
    for (const b of bundles) expect(b.bytes, b.name).toBeGreaterThan(1024);
  });

  it('stays within its budget', () => {
    expect(bundles.length).toBeGreaterThan(0);
    const over = bundles
      .map((b) => ({ name: b.name, bytes: b.bytes, budget: BUNDLE_BUDGETS[budgetClassOf(b)] }))
      .filter((b) => b.bytes > b.budget);
    expect(over).toEqual([]);
  });

  it('keeps every function with an AWS SDK client within 15 % of its floor, the bundle of its SDK clients alone', () => {
    expect(floors.map((f) => f.name).sort()).toEqual(['floor/dynamodb', 'floor/dynamodb-sqs', 'floor/sqs']);
    const withSdk = bundles.filter((b) => b.usesAwsSdk);
    expect(withSdk.length).toBeGreaterThan(10);
    const over = withSdk
      .map((b) => {
        const floor = floors.find((f) => f.name === `floor/${floorOf(b.packages)}`)!;
        return { name: b.name, floor: floor.name, ratio: Math.round((b.bytes / floor.bytes) * 1000) / 1000 };
      })
      .filter((b) => b.ratio > FLOOR_GOAL);
    expect(over).toEqual([]);
  });

  it('keeps the AWS SDK out of the fallback, which touches no AWS service', () => {
    expect(bundle('http/fallback').usesAwsSdk).toBe(false);
  });

  it('ships no TypeBox outside the documentation functions: validators are generated at build time', () => {
    const withTypebox = bundles
      .filter((b) => budgetClassOf(b) !== 'docs' && '@sinclair/typebox' in b.packages)
      .map((b) => b.name);
    expect(withTypebox).toEqual([]);
  });

  it("keeps the reference page's Redoc script out of the docs bundle, in a file beside it, as CDK's hook does", () => {
    const docs = bundle('http/get-docs');
    expect(Object.keys(BUNDLE_FILES)).toEqual(['http/get-docs']);
    expect(readdirSync(dirname(docs.file)).sort()).toEqual([
      'index.mjs',
      'index.mjs.map',
      'redoc.standalone.js.gz',
      'redoc.standalone.json',
    ]);
    for (const b of bundles.filter((x) => x !== docs)) {
      expect(readdirSync(dirname(b.file)).sort(), b.name).toEqual(['index.mjs', 'index.mjs.map']);
    }
  });

  it('ships no validator in the fallback, which has nothing to validate', () => {
    expect(
      Object.keys(bundle('http/fallback').packages).filter((p) => p.startsWith('lib/validation')),
    ).toEqual([]);
  });

  it('carries the metrics writer in exactly the route functions that count something', () => {
    // `CloudWatchMetrics`, a key of the EMF document, survives minification.
    const writesMetrics = (b: BuiltBundle) => readFileSync(b.file, 'utf8').includes('CloudWatchMetrics');
    for (const route of routes) {
      const source = readFileSync(join(projectRoot, 'functions', `${route.handler}.ts`), 'utf8');
      expect(writesMetrics(bundle(route.handler)), route.handler).toBe(source.includes('countEvent('));
    }
    expect(writesMetrics(bundle('http/fallback'))).toBe(false);
    expect(writesMetrics(bundle('auth/authorizer'))).toBe(false);
  });

  it('is built with the settings the CDK stack bundles with (one definition, infra/bundling.ts)', () => {
    expect(CDK_BUNDLING).toMatchObject({
      target: BUNDLING.target,
      format: BUNDLING.format,
      minify: BUNDLING.minify,
      sourceMap: BUNDLING.sourceMap,
      sourcesContent: BUNDLING.sourcesContent,
      externalModules: BUNDLING.externalModules,
      mainFields: BUNDLING.mainFields,
      banner: ESM_REQUIRE_BANNER,
    });
    expect(esbuildOptions().banner).toEqual({ js: ESM_REQUIRE_BANNER });
    for (const b of bundles) {
      expect(readFileSync(b.file, 'utf8').startsWith(ESM_REQUIRE_BANNER), b.name).toBe(true);
    }
  });
});
