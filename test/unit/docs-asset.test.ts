/**
 * The Redoc script of the reference page comes from the installed `redoc` package, never from a
 * committed copy: the docs function serves that file byte for byte but for its CDN logo's URL
 * (`servedRedocSource`), the bundling step writes it
 * (gzipped, with its manifest) beside the function's bundle, and the function reads it from there.
 * test/infra/functions.test.ts checks the same files in the CDK asset and runs the bundle on them.
 */
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/http/get-docs.ts';
import { afterBundlingCommands, BUNDLE_FILES, writeBundleFiles } from '../../infra/bundling.ts';
import { redocScript } from '../../lib/openapi/docs-page.ts';
import {
  loadRedoc,
  REDOC_CDN_LOGO,
  REDOC_GZIP_FILE,
  REDOC_MANIFEST_FILE,
  REDOC_PACKAGE_FILE,
  servedRedocSource,
} from '../../lib/openapi/redoc-asset.ts';
import { routes } from '../../lib/routes.ts';
import { projectRoot } from '../../tools/bundles.ts';

const require = createRequire(import.meta.url);
const packageFile = readFileSync(require.resolve(REDOC_PACKAGE_FILE));
/** What the page gets: the package file with its CDN logo's URL replaced. */
const servedFile = servedRedocSource(packageFile);
const packageVersion = (require('redoc/package.json') as { version: string }).version;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function docsEvent(query: Record<string, string>, acceptEncoding?: string): APIGatewayProxyEventV2 {
  const rawQueryString = new URLSearchParams(query).toString();
  return {
    version: '2.0',
    routeKey: 'GET /docs',
    rawPath: '/docs',
    rawQueryString,
    headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
    queryStringParameters: Object.keys(query).length ? query : undefined,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-1',
      http: { method: 'GET', path: '/docs', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    },
  } as unknown as APIGatewayProxyEventV2;
}

async function get(query: Record<string, string>, acceptEncoding?: string) {
  const result = (await handler(
    docsEvent(query, acceptEncoding),
    {} as never,
  )) as APIGatewayProxyStructuredResultV2;
  expect(result.isBase64Encoded).toBe(true);
  return { result, bytes: Buffer.from(result.body ?? '', 'base64') };
}

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'redoc-asset-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the Redoc script of /docs', () => {
  it("is the installed package file but for the CDN logo's URL, an empty data: image instead", () => {
    // When this fails, the Redoc version at hand no longer has that logo: see REDOC_CDN_LOGO.
    const parts = packageFile.toString('utf8').split(REDOC_CDN_LOGO);
    expect(parts.length).toBeGreaterThan(1);
    expect(servedFile.toString('utf8')).toBe(parts.join('data:,'));
    expect(servedFile.includes('cdn.redoc.ly')).toBe(false);
  });

  it('is that file, byte for byte, gzipped or not', async () => {
    const gzipped = await get({ asset: 'redoc.standalone.js', v: redocScript.urlVersion }, 'gzip, br');
    expect(gzipped.result.statusCode).toBe(200);
    expect(gzipped.result.headers?.['content-encoding']).toBe('gzip');
    expect(gzipped.result.headers?.['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(sha256(gunzipSync(gzipped.bytes))).toBe(sha256(servedFile));

    const plain = await get({ asset: 'redoc.standalone.js' }, 'identity');
    expect(plain.result.headers?.['content-encoding']).toBeUndefined();
    expect(plain.bytes.equals(servedFile)).toBe(true);
  });

  it('is loaded by a URL versioned by the package version and the file hash', async () => {
    expect(redocScript.urlVersion).toBe(`${packageVersion}-${sha256(servedFile).slice(0, 12)}`);
    const page = await get({}, 'identity');
    expect(page.bytes.toString('utf8')).toContain(
      `<script src="docs?asset=redoc.standalone.js&amp;v=${redocScript.urlVersion}"></script>`,
    );
  });
});

describe('the files written beside the docs function bundle', () => {
  it('are declared for route handlers only, the docs page among them', () => {
    const handlers = new Set(routes.map((r) => r.handler));
    expect(Object.keys(BUNDLE_FILES).filter((h) => !handlers.has(h))).toEqual([]);
    expect(Object.keys(BUNDLE_FILES)).toContain('http/get-docs');
    expect(afterBundlingCommands('http/get-campaign', '/in', '/out')).toEqual([]);
  });

  it('are the gzipped served file and its manifest, the same bytes at every build, and what the function reads', () => {
    const [a, b] = [tempDir(), tempDir()];
    writeBundleFiles('http/get-docs', a);
    writeBundleFiles('http/get-docs', b);
    expect(readdirSync(a).sort()).toEqual([REDOC_GZIP_FILE, REDOC_MANIFEST_FILE].sort());
    // No time stamp in the gzip header: an unchanged package leaves the asset hash unchanged.
    expect(readFileSync(join(a, REDOC_GZIP_FILE)).equals(readFileSync(join(b, REDOC_GZIP_FILE)))).toBe(true);

    const fromFiles = loadRedoc(a);
    expect(fromFiles.version).toBe(packageVersion);
    expect(fromFiles.urlVersion).toBe(redocScript.urlVersion);
    expect(fromFiles.gzip().equals(readFileSync(join(a, REDOC_GZIP_FILE)))).toBe(true);
    expect(fromFiles.plain().equals(servedFile)).toBe(true);
    expect(fromFiles.gzip().length).toBeLessThan(servedFile.length / 3);
  });

  it('writes nothing for a function that needs no file', () => {
    const dir = tempDir();
    writeBundleFiles('http/get-campaign', dir);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("are written by the command CDK's afterBundling hook runs", () => {
    const dir = tempDir();
    const [command, ...rest] = afterBundlingCommands('http/get-docs', projectRoot, dir);
    expect(rest).toEqual([]);
    execSync(command!, { cwd: tmpdir(), stdio: 'pipe' });
    expect(sha256(loadRedoc(dir).plain())).toBe(sha256(servedFile));
  }, 30_000);
});
