import { probeTable } from '../../lib/db/table/health.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { Readiness } from '../../lib/operations/compiled.ts';

/** `GET /api/v1/health/ready`, with a key: the table answers a read (else 503, as every route). */
export const handler = httpHandler(Readiness, async () => ({
  status: 200,
  body: { status: 'ready', checks: { dynamodb: { status: 'ok', latency_ms: await probeTable() } } },
  headers: { 'cache-control': 'no-store' },
}));
