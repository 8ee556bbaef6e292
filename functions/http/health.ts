import { httpHandler } from '../../lib/http/handler.ts';
import { Health } from '../../lib/operations/compiled.ts';

/** `GET /health`, public: liveness for load balancers and uptime checks. It calls nothing. */
export const handler = httpHandler(Health, async () => ({
  status: 200,
  body: { status: 'ok' },
  headers: { 'cache-control': 'no-store' },
}));
