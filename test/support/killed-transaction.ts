/**
 * A consumer killed between two of its writes, in process: the `n`th call of one kind of command
 * on the functions' own client fails with `killed` (no process kill lands reliably between two
 * calls 5 ms apart); every other call goes through. The replay tests' one stub. The caller
 * restores it with `vi.restoreAllMocks()`.
 */
import { vi } from 'vitest';

/** Fail the `n`th `command` (e.g. 'UpdateCommand') from now on; returns how many were sent so far. */
export async function killAtCall(n: number, command = 'TransactWriteCommand'): Promise<() => number> {
  const { db } = await import('../../lib/db/table/client.ts');
  const send = db.send.bind(db);
  let calls = 0;
  vi.spyOn(db, 'send').mockImplementation(((sent: { constructor: { name: string } }, ...rest: unknown[]) => {
    if (sent.constructor.name === command && ++calls === n) return Promise.reject(new Error('killed'));
    return (send as (...a: unknown[]) => Promise<unknown>)(sent, ...rest);
  }) as typeof db.send);
  return () => calls;
}
