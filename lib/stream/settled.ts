/**
 * Concurrency helpers that never leave work running behind a failure: a Lambda handler that
 * answers while some of its writes are still in flight has them frozen and resumed in its next
 * invocation, racing the retry of the same batch.
 */

/** Waits for every promise, then throws the first rejection, if any. */
export async function allSettledOrThrow<T extends readonly unknown[]>(
  promises: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/**
 * Runs `run` on every item, at most `concurrency` at once; once one fails no new item starts,
 * and the first failure is thrown after the running ones have ended.
 */
export async function inTurns<T>(
  items: readonly T[],
  concurrency: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (!failure && next < items.length) {
        const item = items[next++]!;
        try {
          await run(item);
        } catch (error) {
          failure ??= { error };
        }
      }
    }),
  );
  if (failure) throw failure.error;
}
