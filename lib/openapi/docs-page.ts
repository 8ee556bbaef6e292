/**
 * The API reference page: Redoc renders the OpenAPI document in the browser. The page embeds the
 * document and loads Redoc's standalone bundle from the same route (`/docs?asset=…`), so it needs
 * nothing from any other host: it works offline, on the local stack and behind API Gateway alike.
 *
 * The Redoc file is not in the function's bundle: the bundling step writes it beside `index.mjs`,
 * and the local stack reads it from node_modules (`redoc-asset.ts`).
 */
import { createHash } from 'node:crypto';
import { REDOC_ASSET } from '../domain/page-schemas.ts';
import { LOCAL_BASE_URL } from '../operations/examples.ts';
import type { OpenApiDocument } from './document.ts';
import { codeDir, loadRedoc } from './redoc-asset.ts';

export type { StaticAsset } from '../http/static-asset.ts';

/** Loaded once per cold start: its manifest now, the file itself on its first request. */
export const redocScript = loadRedoc(codeDir());

/** JSON inside a `<script>` element: `<` escaped so no `</script>` or `<!--` can end or bend it. */
const jsonForScript = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const REDOC_OPTIONS = {
  expandResponses: '200,201,204,302',
  jsonSampleExpandLevel: 3,
  requiredPropsFirst: true,
  pathInMiddlePanel: true,
  downloadDefinitionUrl: 'api/v1/openapi.json',
  theme: { colors: { primary: { main: '#2f5d8a' } } },
};

/**
 * The page's own script. The document's examples and `curl` samples name the local stack's
 * default address (`LOCAL_BASE_URL`); the page puts the address it was served from in its place
 * (the API's base is the page's directory: `/docs` is at its root), so a sample copied from any
 * stage, or from a local stack on another port, calls that very server. Done in the browser, so
 * the page stays one cached, pre-compressed file whatever the host.
 */
export const DOCS_BOOTSTRAP = `(function () {
  var base = new URL('.', location.href).href.replace(/\\/$/, '');
  var text = document.getElementById('openapi-document').textContent;
  var spec = JSON.parse(text.split(${JSON.stringify(LOCAL_BASE_URL)}).join(base));
  Redoc.init(spec, ${JSON.stringify(REDOC_OPTIONS)}, document.getElementById('redoc'));
})();`;

const sha256Source = (source: string) => `'sha256-${createHash('sha256').update(source).digest('base64')}'`;

/**
 * Only this page's own bootstrap and the bundle from this origin may run, and nothing is fetched from
 * elsewhere: no source names a host. Redoc injects its styles at run time (`'unsafe-inline'` styles),
 * starts its search index in a blob: worker the page makes itself, and draws its icons as data: URLs.
 * The one request to another origin the package's Redoc made, its sidebar logo, is taken out of
 * the script served (`servedRedocSource`), so the page makes none and breaks no rule of this policy:
 * test/integration/docs.test.ts fails on either.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  `script-src 'self' ${sha256Source(DOCS_BOOTSTRAP)}`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  'worker-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export function renderDocsPage(document: OpenApiDocument): string {
  const title = escapeHtml(`${String((document.info as { title?: unknown }).title ?? 'API')} reference`);
  // Relative to /docs, so the page also works under a path prefix (a custom domain's base path).
  const scriptUrl = `docs?asset=${REDOC_ASSET}&amp;v=${encodeURIComponent(redocScript.urlVersion)}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<div id="redoc"></div>
<script type="application/json" id="openapi-document">${jsonForScript(document)}</script>
<script src="${scriptUrl}"></script>
<script>${DOCS_BOOTSTRAP}</script>
</body>
</html>
`;
}
