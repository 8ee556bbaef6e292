/** autocannon off the gateway's event loop; amount mode: a timed run abandons requests still committing. */
import autocannon from 'autocannon';

/**
 * `idReplacement`: each `[<id>]` in a request becomes an id of its own. `targets`: each request
 * takes the next path, whatever its connection (autocannon's `requests` restart per connection).
 */
export type LoadJob = Pick<
  autocannon.Options,
  'url' | 'method' | 'headers' | 'body' | 'connections' | 'amount' | 'idReplacement'
> & { targets?: string[] };
export type LoadResult = typeof result;
const { targets, ...job } = JSON.parse(process.argv[2]!) as LoadJob;
let next = 0;
const setupRequest = (request: autocannon.Request) => ({
  ...request,
  path: targets![next++ % targets!.length]!,
});
const requests = targets && [{ method: job.method ?? 'GET', setupRequest }];
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
