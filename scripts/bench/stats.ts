/** Statistics and number formats of the bench: nearest-rank percentiles over sorted copies. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted.length ? sorted[rank]! : NaN;
}
export const median = (values: readonly number[]) => percentile(values, 50);
export function spread(values: readonly number[]) {
  const [p50, p95, p99, max] = [50, 95, 99, 100].map((p) => percentile(values, p));
  return { p50: p50!, p95: p95!, p99: p99!, max: max! };
}

/** Milliseconds with a precision that suits the magnitude. */
export const ms = (v: number) =>
  !Number.isFinite(v) ? 'n/a' : v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2);
export const sec = (milliseconds: number) => (milliseconds / 1000).toFixed(1);
export const kib = (bytes: number) => (bytes / 1024).toFixed(1);
export const pct = (value: number, floor: number) =>
  `${value >= floor ? '+' : ''}${(((value - floor) / floor) * 100).toFixed(0)} %`;
export const signed = (v: number) => `${v >= 0 ? '+' : ''}${ms(v)}`;
export const usd = (v: number) =>
  v >= 0.1 ? `$${v.toFixed(2)}` : v >= 0.001 ? `$${v.toFixed(3)}` : v > 0 ? `$${v.toFixed(4)}` : '$0';
export const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
/** A line of progress on the console, under its part's heading. */
export const log = (line: string) => console.log(`   ${line}`);
export const sleep = (milliseconds: number) => new Promise<void>((r) => setTimeout(r, milliseconds));
/** A deep page against the first (within 1.25×: the same), and whether the floor differs too. */
export function pageVerdict(ratio: number, floorRatio: number): string {
  const near = (x: number) => x <= 1.25 && x >= 1 / 1.25;
  if (near(ratio)) return 'same within noise';
  return near(floorRatio) ? 'DIFFERENT' : 'different, and so is the floor';
}

/** A seeded generator (mulberry32): the same traffic every run. */
export function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What `run` gave, and the milliseconds it took. */
export async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  return [await run(), performance.now() - started];
}

/** Each of `runs` timed `samples` times, a round over all of them at a time, so all share the same load. */
export async function interleaved(runs: Record<string, () => Promise<unknown>>, samples: number) {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let s = 0; s < samples; s++)
    for (const [key, run] of Object.entries(runs)) times[key]!.push((await timed(run))[1]);
  return times;
}
