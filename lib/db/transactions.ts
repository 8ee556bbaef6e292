import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { db } from './client.ts';

type Items = NonNullable<TransactWriteCommandInput['TransactItems']>;

/**
 * Run a write transaction. The client request token makes the SDK's own retries of one attempt
 * idempotent (a retried commit cannot count twice). A cancellation caused only by a conflicting
 * concurrent transaction is retried here with jittered backoff; a failed condition is returned as
 * the indexes of the items whose condition failed, for the caller to
 * map to the contract's error. Several conditions can fail at once (a duplicate referred user of a
 * deleted campaign), so callers check the one that should win, not just the first.
 */
export async function transactWrite(
  items: Items,
): Promise<{ ok: true } | { ok: false; failed: ReadonlySet<number> }> {
  for (let attempt = 0; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }));
      return { ok: true };
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons ?? [];
      const failed = new Set(reasons.flatMap((r, i) => (r.Code === 'ConditionalCheckFailed' ? [i] : [])));
      if (failed.size > 0) return { ok: false, failed };
      const retryable = reasons.some((r) => r.Code === 'TransactionConflict' || r.Code === 'ThrottlingError');
      if (!retryable || attempt >= 12) throw err;
      const base = Math.min(500, 10 * 2 ** attempt);
      await new Promise((r) => setTimeout(r, base / 2 + Math.random() * base));
    }
  }
}
