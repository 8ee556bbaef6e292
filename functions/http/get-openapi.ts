import { httpHandler } from '../../lib/http/handler.ts';
import { openApiDocument } from '../../lib/openapi/document.ts';

/**
 * `GET /api/v1/openapi.json`, public: the document built at cold start from the route table and the
 * schemas. It imports no database code, so the function stays small.
 */
export const handler = httpHandler({ auth: false }, async () => ({
  status: 200,
  body: openApiDocument,
  headers: { 'cache-control': 'public, max-age=300' },
}));
