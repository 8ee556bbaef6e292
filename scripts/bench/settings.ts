/** The scales: the default run's (10 min on 2 cores: tune on a quiet machine), `--full`'s, a variable's. */
export const full = process.argv.includes('--full');
/** name: environment variable, default run, `--full`, what it sets (the part's number). */
const SCALES = {
  coldStartPairs: ['BENCH_COLD_PAIRS', 3, 20, 'imports of each function, each paired with its floor (4)'],
  callSamples: ['BENCH_CALL_SAMPLES', 3, 5, 'requests per endpoint recorded one at a time (1)'],
  latencyRequests: ['BENCH_LATENCY_N', 60, 1000, 'sequential requests per endpoint (2)'],
  loadSeconds: ['BENCH_LOAD_SECONDS', 3, 20, 'length of each throughput run (3)'],
  hotlinkSeconds: ['BENCH_HOTLINK_SECONDS', 3, 10, 'length of each of the four hot-link runs (3b)'],
  hotlinkLinks: ['BENCH_HOTLINK_LINKS', 50, 100, 'links the hot-link runs spread visits over (3b)'],
  burstVisits: ['BENCH_BURST_VISITS', 3_000, 10_000, 'visits of the burst written into the table (3b)'],
  freshnessRate: ['BENCH_FRESHNESS_RATE', 50, 50, 'visits/s of the freshness and cost runs (3c, 7)'],
  freshnessSeconds: ['BENCH_FRESHNESS_SECONDS', 20, 90, 'length of the spread and hot freshness runs (3c)'],
  freshnessLinks: ['BENCH_FRESHNESS_LINKS', 500, 500, 'links of the spread freshness run (3c)'],
  trickleVisits: ['BENCH_TRICKLE_VISITS', 10, 100, 'visits one a second on one link, each alone (3c)'],
  webhookEvents: ['BENCH_WEBHOOK_EVENTS', 40, 200, 'actions timed to their delivery (5)'],
  webhookBacklog: ['BENCH_WEBHOOK_BACKLOG', 200, 2_000, 'actions of the backlog (5)'],
  isolationSeconds: ['BENCH_ISOLATION_SECONDS', 6, 25, 'length of each isolation run (5b)'],
  isolationBacklog: ['BENCH_ISOLATION_BACKLOG', 50, 100, 'events pending per bad receiver (5b)'],
  outageSeconds: ['BENCH_OUTAGE_SECONDS', 5, 10, 'how long DynamoDB Local is paused (5c)'],
  scaleLinks: ['BENCH_SCALE_LINKS', 5_000, 100_000, 'links of the scale and analytics campaigns (6, 6b)'],
  purgeTimeoutSeconds: ['BENCH_PURGE_SECONDS', 60, 180, 'longest wait for the purge (6)'],
  events: ['BENCH_EVENTS', 10_000, 1_000_000, 'visits of the analytics campaign (6b)'],
  pageSamples: ['BENCH_PAGE_SAMPLES', 10, 30, 'samples of each page and analytics request (6, 6b)'],
  costSeconds: ['BENCH_COST_SECONDS', 15, 60, 'length of each of the six cost runs (7)'],
  zipfLinks: ['BENCH_ZIPF_LINKS', 10_000, 10_000, "links of the cost model's Zipf shape (7)"],
  dashboardSamples: ['BENCH_DASHBOARD_SAMPLES', 3, 15, 'browser samples (8)'],
} as const satisfies Record<string, readonly [string, number, number, string]>;

export const settings = Object.fromEntries(
  Object.entries(SCALES).map(([key, [name, quick, reference]]) => {
    const value = Number(process.env[name] || (full ? reference : quick));
    if (!(value > 0)) throw new Error(`${name} must be a positive number, got "${process.env[name]}"`);
    return [key, value];
  }),
) as { [K in keyof typeof SCALES]: number };

const helpLine = ([name, quick, reference, what]: (typeof SCALES)[keyof typeof SCALES]) =>
  `  ${name.padEnd(24)} ${`${quick} / ${reference}`.padEnd(16)} ${what}`;
export const help = Object.values(SCALES).map(helpLine).join('\n');
