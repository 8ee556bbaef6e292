/**
 * The retry schedule of the contract and the per-message backoff arithmetic.
 *
 * Attempt n (1-based, from SQS's ApproximateReceiveCount) that fails is retried after
 * `delays[n-1]` seconds, ±20 % jitter, by setting the message's visibility timeout; after attempt
 * `delays.length + 1` the event is dead-lettered.
 */

/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, then 12 h five times: 11 retries, 12 attempts, ~3.2 days. */
export const DEFAULT_RETRY_DELAYS: readonly number[] = [
  5,
  5 * 60,
  30 * 60,
  2 * 3600,
  5 * 3600,
  10 * 3600,
  12 * 3600,
  12 * 3600,
  12 * 3600,
  12 * 3600,
  12 * 3600,
];

/** SQS's ceiling for a message's visibility timeout. */
export const MAX_VISIBILITY_SECONDS = 12 * 3600;

const JITTER = 0.2;

/**
 * `WEBHOOK_RETRY_DELAYS` (comma-separated seconds) replaces the schedule; its length is the
 * number of retries. Unset or empty: the contract's schedule. Anything malformed is a
 * configuration error, thrown at cold start rather than at the first failed delivery.
 */
export function retryDelaysFrom(value: string | undefined): readonly number[] {
  if (value === undefined || value.trim() === '') return DEFAULT_RETRY_DELAYS;
  const delays = value.split(',').map((part) => Number(part.trim()));
  if (delays.some((d) => !Number.isFinite(d) || d < 0 || d > MAX_VISIBILITY_SECONDS)) {
    throw new Error(
      `WEBHOOK_RETRY_DELAYS must be comma-separated seconds between 0 and ${MAX_VISIBILITY_SECONDS}, got "${value}"`,
    );
  }
  return delays;
}

/** Attempts in all: the first one plus one per retry delay. */
export const maxAttempts = (delays: readonly number[]) => delays.length + 1;

/**
 * `Retry-After` as seconds from `now`: delta-seconds or an HTTP date. Undefined when absent or
 * unparseable; never negative.
 */
export function parseRetryAfter(value: string | undefined | null, now = Date.now()): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  // An HTTP date names its weekday and month; anything else (`-5`, `1.5`) is not one.
  if (!/^[A-Za-z]{3},? /.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Seconds until the next attempt after failed attempt `attempt` (1-based), or `undefined` when
 * that was the last one. The jittered delay is uniform in [0.8, 1.2] x the scheduled delay; a
 * `Retry-After` (only passed for 429 and 503) is honoured within [0.8 x scheduled, 12 h], so a
 * receiver can slow us down but not hurry us up or park the event beyond SQS's ceiling.
 */
export function nextDelaySeconds(
  attempt: number,
  delays: readonly number[],
  options: { retryAfterSeconds?: number; random?: () => number } = {},
): number | undefined {
  const scheduled = delays[attempt - 1];
  if (scheduled === undefined) return undefined;
  const random = options.random ?? Math.random;
  const floor = scheduled * (1 - JITTER);
  let delay = scheduled * (1 - JITTER + 2 * JITTER * random());
  if (options.retryAfterSeconds !== undefined) {
    delay = Math.max(floor, options.retryAfterSeconds);
  }
  return Math.min(MAX_VISIBILITY_SECONDS, Math.max(0, Math.round(delay)));
}
