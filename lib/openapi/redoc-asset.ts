/**
 * Redoc's standalone bundle, the one script the reference page loads (`/docs?asset=…`). It comes
 * from the installed `redoc` package, never from a committed copy, with one change
 * (`servedRedocSource`: no request to Redocly's CDN):
 *
 * - at build time the docs function's bundling step (`infra/bundling.ts`, NodejsFunction's
 *   `afterBundling` hook) writes it gzipped beside the function's `index.mjs`, with a small
 *   manifest (package version and hash), so the Lambda asset (and `sam local invoke`, which runs
 *   that same directory) holds it and the function's own bundle does not;
 * - at run time the function reads those two files beside its bundle; where they are absent (the
 *   local stack, which runs `functions/*.ts` through tsx), it reads the package from node_modules
 *   and gzips it once.
 *
 * Node built-ins only: the CDK-free bundling module and the function bundle both import this.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

/** The file served, as the package ships it. */
export const REDOC_PACKAGE_FILE = 'redoc/bundles/redoc.standalone.js';
/** Written beside the docs function's bundle: the file gzipped, served as it is. */
export const REDOC_GZIP_FILE = 'redoc.standalone.js.gz';
/** Written beside it too: what `RedocManifest` says. */
export const REDOC_MANIFEST_FILE = 'redoc.standalone.json';

export interface RedocManifest {
  package: 'redoc';
  version: string;
  /** SHA-256 (hex) of the file as served (`servedRedocSource`), uncompressed. */
  sha256: string;
}

/**
 * The one thing in the package's file that makes the page ask another origin for something: the
 * sidebar footer's logo, `<img src="https://cdn.redoc.ly/redoc/logo-mini.svg">`, which no Redoc
 * option turns off and the page's CSP refused (a request attempted, a violation reported). It
 * becomes `data:,`, an empty image that fails to decode, on which Redoc drops the `<img>`: the page
 * looks as it did when the CSP refused the CDN, without the request or the violation.
 * test/integration/docs.test.ts fails on any request to another origin and any CSP violation, so a
 * Redoc version that fetches something else shows there; test/unit/docs-asset.test.ts fails when
 * the package no longer holds this URL (the change no longer applies).
 */
export const REDOC_CDN_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
const EMPTY_IMAGE = 'data:,';

/** The package's file as the page gets it: with `REDOC_CDN_LOGO` replaced, nothing else. */
export function servedRedocSource(packageSource: Buffer): Buffer {
  return Buffer.from(packageSource.toString('utf8').replaceAll(REDOC_CDN_LOGO, EMPTY_IMAGE), 'utf8');
}

export interface RedocAsset extends RedocManifest {
  /** The `v` of the asset URL: package version and content hash, so a new file gets a new URL. */
  urlVersion: string;
  gzip: () => Buffer;
  /** The uncompressed file, for the rare client that does not accept gzip. */
  plain: () => Buffer;
}

const sha256Hex = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function asset(manifest: RedocManifest, gzip: () => Buffer): RedocAsset {
  let plain: Buffer | undefined;
  return {
    ...manifest,
    urlVersion: `${manifest.version}-${manifest.sha256.slice(0, 12)}`,
    gzip,
    plain: () => {
      plain ??= gunzipSync(gzip());
      return plain;
    },
  };
}

/** The file served, from the installed package (build time, and the local stack). */
export function redocFromPackage(): { manifest: RedocManifest; source: Buffer } {
  const require = createRequire(import.meta.url);
  const source = servedRedocSource(readFileSync(require.resolve(REDOC_PACKAGE_FILE)));
  const { version } = JSON.parse(readFileSync(require.resolve('redoc/package.json'), 'utf8')) as {
    version: string;
  };
  return { manifest: { package: 'redoc', version, sha256: sha256Hex(source) }, source };
}

/** The bundling step of the docs function: the gzipped file and its manifest into `dir`. */
export function writeRedocFiles(dir: string): void {
  const { manifest, source } = redocFromPackage();
  // zlib writes no time stamp or name in the header: the same package gives the same bytes, so the
  // asset hash (and the deployed code) only changes with the package.
  writeFileSync(join(dir, REDOC_GZIP_FILE), gzipSync(source, { level: 9 }));
  writeFileSync(join(dir, REDOC_MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The asset served from `dir`, where the bundling step wrote it, or else from the installed
 * package. Only the manifest is read here; the file itself on its first request.
 */
export function loadRedoc(dir: string): RedocAsset {
  const manifestFile = join(dir, REDOC_MANIFEST_FILE);
  if (existsSync(manifestFile)) {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as RedocManifest;
    let gzip: Buffer | undefined;
    return asset(manifest, () => {
      gzip ??= readFileSync(join(dir, REDOC_GZIP_FILE));
      return gzip;
    });
  }
  let fromPackage: ReturnType<typeof redocFromPackage>;
  try {
    fromPackage = redocFromPackage();
  } catch (error) {
    // In a function bundle: its bundling step did not run (see infra/bundling.ts).
    throw new Error(`no ${REDOC_MANIFEST_FILE} in ${dir} and no redoc package to read instead`, {
      cause: error,
    });
  }
  const gzip = gzipSync(fromPackage.source, { level: 9 });
  return asset(fromPackage.manifest, () => gzip);
}

/**
 * The directory of the running code: in a function bundle every module shares `index.mjs`'s
 * `import.meta.url`, so this is the function's asset directory (`/var/task` in Lambda); under tsx
 * it is `lib/openapi/`, which holds no asset, so the package is read instead.
 */
export const codeDir = (): string => dirname(fileURLToPath(import.meta.url));
