/**
 * Deadlines and failures of the service's dependencies (DynamoDB, SQS), without the SDK: what the
 * HTTP layer needs to bound a request and to tell a dependency failure (503) from a defect (500).
 * The SDK side, a timeout on every attempt cut at the current deadline, is `lib/aws/clients.ts`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const deadlines = new AsyncLocalStorage<number>();

/** Run `fn` with every dependency call inside it bounded by `deadline` (epoch ms). */
export function withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  return deadlines.run(deadline, fn);
}

/** Milliseconds left before the current deadline; undefined outside one. */
export function remainingMs(): number | undefined {
  const deadline = deadlines.getStore();
  return deadline === undefined ? undefined : deadline - Date.now();
}

/** A call that could not start, or go on, because its request's deadline had passed. */
export class DeadlineExceededError extends Error {
  constructor() {
    super('The request ran out of time waiting for a dependency.');
    this.name = 'DeadlineExceededError';
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOTFOUND',
  'ECONNABORTED',
]);

const UNAVAILABLE_NAMES = new Set([
  'DeadlineExceededError',
  'TimeoutError',
  'AbortError',
  'RequestTimeout',
  'RequestTimeoutException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'Throttling',
  'RequestLimitExceeded',
  'LimitExceededException',
  'TransactionConflictException',
  'TransactionInProgressException',
  'InternalServerError',
  'InternalFailure',
  'ServiceUnavailable',
]);

/**
 * A dependency throttled, failed on its side, or did not answer in time: the request may be
 * retried (the write may or may not have happened, hence idempotency keys). Anything else that
 * is thrown is a defect.
 */
export function isDependencyFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const e = err as Error & {
    code?: string;
    $fault?: string;
    $retryable?: unknown;
    $metadata?: { httpStatusCode?: number };
    CancellationReasons?: Array<{ Code?: string }>;
  };
  if (UNAVAILABLE_NAMES.has(e.name)) return true;
  if (e.code !== undefined && NETWORK_CODES.has(e.code)) return true;
  if (e.$fault === 'server' || (e.$metadata?.httpStatusCode ?? 0) >= 500 || e.$retryable) return true;
  // A transaction cancelled only by conflicts or throttling, after its retries ran out.
  const reasons = e.CancellationReasons?.map((r) => r.Code).filter((c) => c && c !== 'None') ?? [];
  return (
    e.name === 'TransactionCanceledException' &&
    reasons.length > 0 &&
    reasons.every((c) => c === 'TransactionConflict' || c === 'ThrottlingError')
  );
}
