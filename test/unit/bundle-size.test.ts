import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_BUDGETS,
  type BuiltBundle,
  budgetClassOf,
  buildBundles,
  bundleDir,
  ESM_REQUIRE_BANNER,
  functionEntries,
  projectRoot,
  removeBundleDir,
} from '../../scripts/bench/bundles.ts';

/**
 * Every function bundle, built as CDK builds it, stays within the budget `npm run bench` reports
 * (bench/results.md). A bundle that grows past it fails here, before it slows every cold start.
 */
describe('function bundle sizes', () => {
  let dir = '';
  let bundles: BuiltBundle[] = [];

  beforeAll(async () => {
    dir = bundleDir();
    bundles = await buildBundles(functionEntries(), dir, 'shared');
  }, 60_000);

  afterAll(() => {
    if (dir) removeBundleDir(dir);
  });

  it('builds every function of the route table, the authorizer, the fallback, the queue and the stream consumers', () => {
    const names = bundles.map((b) => b.name);
    expect(names).toContain('auth/authorizer');
    expect(names).toContain('http/fallback');
    expect(names).toContain('http/visit');
    expect(names).toEqual(
      expect.arrayContaining([
        'queue/deliver-webhook',
        'queue/retry-webhook',
        'queue/purge-campaign',
        'stream/enqueue-webhook-events',
        'stream/enqueue-purge',
      ]),
    );
  });

  it('stays within its budget', () => {
    const over = bundles
      .map((b) => ({ name: b.name, bytes: b.bytes, budget: BUNDLE_BUDGETS[budgetClassOf(b)] }))
      .filter((b) => b.bytes > b.budget);
    expect(over).toEqual([]);
  });

  it('keeps the AWS SDK out of the fallback, which touches no AWS service', () => {
    expect(bundles.find((b) => b.name === 'http/fallback')?.usesAwsSdk).toBe(false);
  });

  it('uses the same esbuild banner as the CDK stack', () => {
    const infra = join(projectRoot, 'infra', 'functions.ts');
    if (!existsSync(infra)) return;
    expect(readFileSync(infra, 'utf8')).toContain(ESM_REQUIRE_BANNER);
  });
});
