/**
 * Runs autocannon in a process of its own, so the load generator does not share the gateway's
 * event loop: the job in argv, the exact counts per status on stdout. Amount mode: every request
 * sent gets its response (or an error) before the run ends, so "accepted" is exact; a run bounded
 * by time would abandon the requests in flight, which the server may still have committed.
 */
import autocannon from 'autocannon';

/**
 * `idReplacement` is autocannon's own: every `[<id>]` in a request, headers included, becomes an
 * id unique to that request (e.g. a user agent per visitor). `targets` spreads the requests over
 * several paths: each request takes the next one, whatever its connection, so every target gets
 * its share from the start (autocannon's own `requests` list restarts at its first entry on every
 * connection, so a short run would reach only the first few).
 */
export type LoadJob = Pick<
  autocannon.Options,
  'url' | 'method' | 'headers' | 'body' | 'connections' | 'amount' | 'idReplacement'
> & { targets?: string[] };
export type LoadResult = typeof result;

const { targets, ...job } = JSON.parse(process.argv[2]!) as LoadJob;
let next = 0;
const requests = targets && [
  {
    method: job.method ?? 'GET',
    setupRequest: (request: autocannon.Request) => ({ ...request, path: targets[next++ % targets.length]! }),
  },
];

const statuses: Record<string, number> = {};
const started = performance.now();
const { errors, timeouts, latency } = await new Promise<autocannon.Result>((resolve, reject) =>
  autocannon({ ...job, ...(requests && { requests }), timeout: 30 }, (err, r) =>
    err ? reject(err) : resolve(r),
  ).on('response', (_client, status) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  }),
);
const result = { statuses, errors: errors + timeouts, durationMs: performance.now() - started, latency };
process.stdout.write(JSON.stringify(result));
