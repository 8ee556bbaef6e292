/** Small statistics helpers for the bench: nearest-rank percentiles over sorted copies. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export const median = (values: readonly number[]) => percentile(values, 50);

export function mean(values: readonly number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;
}

/** Milliseconds with a precision that suits the magnitude. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

export function kib(bytes: number): string {
  return (bytes / 1024).toFixed(1);
}

export function ratio(value: number, floor: number): string {
  return Number.isFinite(value) && Number.isFinite(floor) && floor > 0 ? (value / floor).toFixed(2) : 'n/a';
}

export const sleep = (milliseconds: number) => new Promise<void>((r) => setTimeout(r, milliseconds));
