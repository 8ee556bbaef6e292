import { httpHandler } from '../../lib/http/handler.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { GetOpenApiDocument } from '../../lib/operations/compiled.ts';

/**
 * `GET /api/v1/openapi.json`, public: the document built at cold start from the route table and the
 * operations. It imports no database code, so the function stays small.
 */
export const handler = httpHandler(GetOpenApiDocument, async () => ({
  status: 200,
  body: openApiDocument,
  headers: { 'cache-control': 'public, max-age=300' },
}));
