/**
 * A consumer killed between two of its transactions, in process: the `n`th TransactWriteItems
 * call on the functions' own client fails with `killed` (no process kill lands reliably between
 * two calls 5 ms apart); every other call goes through. The replay tests' one stub. The caller
 * restores it with `vi.restoreAllMocks()`.
 */
import { vi } from 'vitest';

/** Fail the `n`th transaction from now on; returns how many transactions were sent so far. */
export async function killAtTransaction(n: number): Promise<() => number> {
  const { db } = await import('../../lib/db/client.ts');
  const send = db.send.bind(db);
  let transactions = 0;
  vi.spyOn(db, 'send').mockImplementation(((
    command: { constructor: { name: string } },
    ...rest: unknown[]
  ) => {
    if (command.constructor.name === 'TransactWriteCommand' && ++transactions === n) {
      return Promise.reject(new Error('killed'));
    }
    return (send as (...a: unknown[]) => Promise<unknown>)(command, ...rest);
  }) as typeof db.send);
  return () => transactions;
}
