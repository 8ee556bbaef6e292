/**
 * Child process that runs autocannon (so the load generator does not share the event loop with
 * the gateway it measures). Receives one job over IPC, answers with exact per-status counts.
 *
 * Runs in amount mode: every request sent gets its response (or an error) before the run ends,
 * so "accepted" is exact. Duration-bounded runs would abandon the requests in flight at the end,
 * which the server may still have committed.
 */
import autocannon from 'autocannon';

export interface LoadJob {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  amount: number;
  /** When given, requests take these paths and bodies in turn (one shared round-robin). */
  variants?: Array<{ path: string; body?: string }>;
}

export interface LoadResult {
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
  durationMs: number;
  requestsPerSecond: number;
  latency: { p50: number; p99: number; max: number };
}

process.once('message', (job: LoadJob) => {
  const statuses: Record<string, number> = {};
  const variants = job.variants;
  let turn = 0;
  const started = performance.now();
  const instance = autocannon(
    {
      url: job.url,
      method: job.method,
      headers: job.headers,
      body: job.body,
      connections: job.connections,
      amount: job.amount,
      timeout: 30,
      ...(variants
        ? {
            requests: [
              {
                setupRequest: (req: autocannon.Request) => {
                  const v = variants[turn++ % variants.length]!;
                  return { ...req, path: v.path, ...(v.body !== undefined ? { body: v.body } : {}) };
                },
              },
            ],
          }
        : {}),
    },
    (err, result) => {
      if (err) {
        process.send?.({ error: String(err) });
        process.disconnect?.();
        return;
      }
      const durationMs = performance.now() - started;
      const accepted = Object.values(statuses).reduce((a, b) => a + b, 0);
      const out: LoadResult = {
        statuses,
        errors: result.errors,
        timeouts: result.timeouts,
        durationMs,
        requestsPerSecond: accepted / (durationMs / 1000),
        latency: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max },
      };
      process.send?.(out);
      process.disconnect?.();
    },
  );
  instance.on('response', (_client, statusCode) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
});
