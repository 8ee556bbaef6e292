/**
 * Work DynamoDB refuses for good (an item past a limit, an attribute of the wrong type written by
 * hand), told apart from what is only passing (throttling, timeouts, an outage): the stream's
 * consumers park the first (`lib/stream/parked.ts`) and fail the batch on the second, so Lambda
 * hands it over again.
 */

/** Work that cannot succeed as it is: park it, do not retry it. */
export class PoisonError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PoisonError';
  }
}

/**
 * Whether `err` says the request itself is wrong (DynamoDB's client faults other than throttling
 * and conditions, or `PoisonError`), so trying it again cannot help. Anything else (throttling,
 * server faults, timeouts, a refused connection) is passing, or unknown: the batch is failed and
 * handed over again rather than anything being dropped.
 */
export function isPoison(err: unknown): boolean {
  if (err instanceof PoisonError) return true;
  const e = err as { name?: string; $fault?: string; $retryable?: unknown; $metadata?: unknown };
  if (!e || typeof e !== 'object' || e.$metadata === undefined) return false;
  if (e.$fault !== 'client' || e.$retryable) return false;
  return !/Throttl|LimitExceeded|ProvisionedThroughput|RequestLimit|TransactionConflict|TransactionInProgress|ConditionalCheckFailed|TransactionCanceled|ResourceNotFound|UnrecognizedClient|ExpiredToken|AccessDenied/.test(
    e.name ?? '',
  );
}
