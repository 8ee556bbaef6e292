/**
 * The token bucket API Gateway throttles with, for the local gateway. Written here rather than
 * taken from a package: it is a dozen lines, and the rate-limiting libraries (limiter,
 * rate-limiter-flexible, bottleneck) bring queues, timers or stores the gateway does not want; it
 * only needs "take a token now, or say when one will be there".
 */
import type { RouteThrottle } from '../throttling.ts';

export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  /** `now` in milliseconds, monotonic by default so that a clock change neither fills nor drains it. */
  constructor(
    private readonly limit: RouteThrottle,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limit.burstLimit;
    this.refilledAt = now();
  }

  take(): TakeResult {
    const at = this.now();
    const elapsedSeconds = Math.max(0, at - this.refilledAt) / 1000;
    this.tokens = Math.min(this.limit.burstLimit, this.tokens + elapsedSeconds * this.limit.rateLimit);
    this.refilledAt = at;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    // Whole seconds (what Retry-After carries), at least 1: the time until one token is back.
    const wait = (1 - this.tokens) / this.limit.rateLimit;
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) };
  }
}
