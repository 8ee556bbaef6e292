import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { remainingMs } from '../../aws/deadline.ts';
import { IdempotencyKeyUsed } from '../../domain/idempotency.ts';
import { db } from './client.ts';

type Items = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * Run a write transaction. The client request token makes the SDK's own retries of one attempt
 * idempotent (a retried commit cannot count twice). A cancellation caused only by a conflicting
 * concurrent transaction is retried here with jittered backoff, within the request's deadline; a
 * failed condition is returned as the indexes of the items whose condition failed, for the caller
 * to map to the contract's error. Several conditions can fail at once (a duplicate referred user
 * of a deleted campaign), so callers check the one that should win, not just the first. An item
 * written with `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` whose condition failed comes back
 * in `old` (by index) as it was, when it existed.
 *
 * `remember` is the request's stored answer (`rememberAnswer`, for an `Idempotency-Key`), written
 * with the rest: when its condition fails, the key was used, nothing was written, and that wins
 * over every other failure (`IdempotencyKeyUsed`).
 */
export async function transactWrite(
  items: Items,
  remember?: Items[number],
): Promise<
  { ok: true } | { ok: false; failed: ReadonlySet<number>; old: ReadonlyMap<number, Record<string, unknown>> }
> {
  const all = remember ? [...items, remember] : items;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: all, ClientRequestToken: randomUUID() }));
      return { ok: true };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons ?? [];
      const failed = new Set(reasons.flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : [])));
      if (remember && failed.has(items.length)) throw new IdempotencyKeyUsed();
      if (failed.size > 0) {
        const old = new Map(
          reasons.flatMap((r, i) => (failed.has(i) && r.Item ? [[i, unmarshall(r.Item)] as const] : [])),
        );
        return { ok: false, failed, old };
      }
      const retryable = reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError');
      const base = Math.min(500, 10 * 2 ** attempt);
      const pause = base / 2 + Math.random() * base;
      if (!retryable || attempt >= 12 || (remainingMs() ?? Number.POSITIVE_INFINITY) < pause + 100) throw err;
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
