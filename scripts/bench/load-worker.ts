/**
 * Runs autocannon in a process of its own, so the load generator does not share the gateway's
 * event loop: the job in argv, the exact counts per status on stdout. Amount mode: every request
 * sent gets its response (or an error) before the run ends, so "accepted" is exact; a run bounded
 * by time would abandon the requests in flight, which the server may still have committed.
 */
import autocannon from 'autocannon';

export type LoadJob = Pick<
  autocannon.Options,
  'url' | 'method' | 'headers' | 'body' | 'connections' | 'amount'
>;
export type LoadResult = typeof result;

const statuses: Record<string, number> = {};
const started = performance.now();
const { errors, timeouts, latency } = await new Promise<autocannon.Result>((resolve, reject) =>
  autocannon({ ...(JSON.parse(process.argv[2]!) as LoadJob), timeout: 30 }, (err, r) =>
    err ? reject(err) : resolve(r),
  ).on('response', (_client, status) => {
    statuses[status] = (statuses[status] ?? 0) + 1;
  }),
);
const result = { statuses, errors: errors + timeouts, durationMs: performance.now() - started, latency };
process.stdout.write(JSON.stringify(result));
