/**
 * How every function is bundled, in one CDK-free module with three readers: the CDK stack
 * (`infra/functions.ts` hands `cdkBundling` to NodejsFunction), and `tools/bundles.ts`,
 * which builds the same bundles for `npm run bench` and `test/unit/bundle-size.test.ts` by calling
 * esbuild with `esbuildOptions`, the flags NodejsFunction derives from those settings. No aws-cdk-lib
 * here, so the bench and the unit test load none of it. The files a function needs beside its
 * bundle are declared here too (`BUNDLE_FILES`), and the three readers write them the same way.
 */
import type { BuildOptions } from 'esbuild';
import { writeRedocFiles } from '../lib/openapi/redoc-asset.ts';

/**
 * ESM bundles have no `require`; a few CommonJS dependencies bundled into them still call it for
 * Node built-ins. The alias keeps `createRequire` from clashing with a bundled top-level name.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __bannerCreateRequire } from 'module'; const require = __bannerCreateRequire(import.meta.url);";

/** The esbuild settings of every function of the stack (webhooks and purge included). */
export const BUNDLING = {
  format: 'esm',
  target: 'node22',
  minify: true,
  sourceMap: true,
  // The maps only need line mappings for stack traces; embedding sources would double the zip.
  sourcesContent: false,
  // Bundle the AWS SDK v3 rather than use the runtime's copy: a pinned, tested version, and
  // tree-shaking makes the cold start faster than loading the runtime's full clients.
  externalModules: [] as string[],
  // Prefer ESM entry points so esbuild can tree-shake dependencies that ship both.
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
} as const;

/**
 * The esbuild options NodejsFunction passes for `BUNDLING` (it always bundles, for platform node):
 * `--minify`, `--sourcemap`, `--sources-content=false`, `--main-fields`, `--banner:js` and no
 * `--external` beyond these.
 */
export function esbuildOptions(): BuildOptions {
  return {
    bundle: true,
    platform: 'node',
    target: BUNDLING.target,
    format: BUNDLING.format,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    external: [...BUNDLING.externalModules],
    mainFields: [...BUNDLING.mainFields],
    banner: { js: BUNDLING.banner },
  };
}

/**
 * Files a function reads beside its `index.mjs`, written after esbuild into the bundle's directory
 * (the Lambda asset, which `sam local invoke` runs too), keyed by handler module under
 * `functions/`. The reference page's Redoc script (1.1 MB, 0.3 MB gzipped) is one: as a file
 * beside the bundle it comes from the installed package at every build, and the function's bundle
 * stays small; it is read only when the script is requested. The local stack, which runs the
 * handlers through tsx, reads the package instead (`lib/openapi/redoc-asset.ts`).
 */
export const BUNDLE_FILES: Readonly<Record<string, (outputDir: string) => void>> = {
  'http/get-docs': writeRedocFiles,
};

/** Write the files `handler`'s function needs beside its bundle in `outputDir` (none for most). */
export function writeBundleFiles(handler: string, outputDir: string): void {
  BUNDLE_FILES[handler]?.(outputDir);
}

/**
 * The command NodejsFunction's `afterBundling` hook runs for `handler` (none when it needs no file):
 * `infra/write-bundle-files.ts` through tsx, from `inputDir` (the project root when esbuild runs
 * locally, its mount point in Docker), so it runs the same `writeBundleFiles` as the bench.
 */
export function afterBundlingCommands(handler: string, inputDir: string, outputDir: string): string[] {
  if (!BUNDLE_FILES[handler]) return [];
  const quote = (arg: string) => `"${arg}"`;
  return [
    [
      'node',
      quote(`${inputDir}/node_modules/tsx/dist/cli.mjs`),
      quote(`${inputDir}/infra/write-bundle-files.ts`),
      quote(handler),
      quote(outputDir),
    ].join(' '),
  ];
}
