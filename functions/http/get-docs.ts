import { gzipSync } from 'node:zlib';
import { httpHandler } from '../../lib/http/handler.ts';
import { type StaticAsset, sendAsset as send } from '../../lib/http/static-asset.ts';
import { DOCS_CSP, redocScript, renderDocsPage } from '../../lib/openapi/docs-page.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { GetApiReference } from '../../lib/operations/compiled.ts';

// Rendered and compressed once per cold start.
const html = Buffer.from(renderDocsPage(openApiDocument));
const htmlGzip = gzipSync(html, { level: 9 });
const page: StaticAsset = { gzip: () => htmlGzip, plain: () => html };

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
