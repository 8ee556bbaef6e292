import { gzipSync } from 'node:zlib';
import { httpHandler } from '../../lib/http/handler.ts';
import type { HttpResult } from '../../lib/http/responses.ts';
import { DOCS_CSP, redocScript, renderDocsPage, type StaticAsset } from '../../lib/openapi/docs-page.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { GetApiReference } from '../../lib/operations/compiled.ts';

// Rendered and compressed once per cold start.
const html = Buffer.from(renderDocsPage(openApiDocument));
const htmlGzip = gzipSync(html, { level: 9 });
const page: StaticAsset = { gzip: () => htmlGzip, plain: () => html };

/** Whether the client takes gzip: named, or covered by `*`, with a non-zero q. */
function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if ((coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0)) return true;
  }
  return false;
}

function send(
  acceptEncoding: string | undefined,
  asset: StaticAsset,
  headers: Record<string, string>,
): HttpResult {
  const gzip = acceptsGzip(acceptEncoding);
  return {
    status: 200,
    headers: {
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...headers,
    },
    bytes: gzip ? asset.gzip() : asset.plain(),
  };
}

/**
 * `GET /docs`, public: the API reference page, and with `?asset=redoc.standalone.js` the Redoc bundle
 * it loads (versioned in the URL, so it is cached for good).
 */
export const handler = httpHandler(GetApiReference, async ({ event, query }) => {
  const acceptEncoding = event.headers?.['accept-encoding'];
  if (query.asset) {
    return send(acceptEncoding, redocScript, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    });
  }
  return send(acceptEncoding, page, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'public, max-age=300',
    'content-security-policy': DOCS_CSP,
    'referrer-policy': 'no-referrer',
  });
});
