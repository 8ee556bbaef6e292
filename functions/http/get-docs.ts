import { gzipSync } from 'node:zlib';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { contractErrors, type Event, type Result } from '../../lib/http/handler.ts';
import { queryOf, requestIdOf } from '../../lib/http/request.ts';
import { compileValidator } from '../../lib/http/validate.ts';
import { DOCS_CSP, redocScript, renderDocsPage, type StaticAsset } from '../../lib/openapi/docs-page.ts';
import { DocsQuery } from '../../lib/openapi/docs-query.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';

const validateQuery = compileValidator(DocsQuery);

// Rendered and compressed once per cold start.
const html = Buffer.from(renderDocsPage(openApiDocument));
const page: StaticAsset = { gzip: gzipSync(html, { level: 9 }), plain: () => html };

/** Whether the client takes gzip: named, or covered by `*`, with a non-zero q. */
function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [coding = '', ...params] = part.split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    if ((coding === 'gzip' || coding === '*') && (q === undefined || Number(q.slice(2)) > 0)) return true;
  }
  return false;
}

function send(event: Event, asset: StaticAsset, headers: Record<string, string>): Result {
  const gzip = acceptsGzip(event.headers?.['accept-encoding']);
  return {
    statusCode: 200,
    headers: {
      'x-request-id': requestIdOf(event),
      vary: 'accept-encoding',
      'x-content-type-options': 'nosniff',
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      ...headers,
    },
    body: (gzip ? asset.gzip : asset.plain()).toString('base64'),
    isBase64Encoded: true,
  };
}

/**
 * `GET /docs`, public: the API reference page, and with `?asset=redoc.standalone.js` the Redoc bundle
 * it loads (versioned in the URL, so it is cached for good).
 */
export const handler = middy<Event, Result, Error, Context>(async (event: Event) => {
  const query = validateQuery(queryOf(event));
  if (query.asset) {
    return send(event, redocScript, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': 'public, max-age=31536000, immutable',
    });
  }
  return send(event, page, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'public, max-age=300',
    'content-security-policy': DOCS_CSP,
    'referrer-policy': 'no-referrer',
  });
}).use(contractErrors());
