/**
 * Waiting on state instead of for a fixed time: poll the receiver, the table or the queue until
 * what the test expects has happened, and fail with what was seen when it does not in time.
 */

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` every `intervalMs` until it answers something truthy or `timeoutMs` passes;
 * returns that answer, or the last (falsy) one once the time is up.
 */
export async function waitUntil<T>(
  check: () => Promise<T> | T,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const answer = await check();
    if (answer) return answer;
    await pause(intervalMs);
  }
  return check();
}

/** `waitUntil`, throwing `not within <timeout> ms: <what>` when the state never comes. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  const answer = await waitUntil(async () => (await check()) ?? false, timeoutMs, intervalMs);
  if (answer === false) throw new Error(`not within ${timeoutMs} ms: ${what}`);
  return answer as T;
}

/**
 * For a test that must show something does NOT happen (a delivery that must not come): there is
 * no state to wait for, only a bounded time in which it would have happened. Waits `ms`, or less
 * if `happened` turns true first (then the caller's assertion fails at once, with what it saw).
 */
export async function holdsFor(ms: number, happened: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !happened()) await pause(Math.min(50, end - Date.now()));
}

/** Run `fn` over `items` with at most `concurrency` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}
