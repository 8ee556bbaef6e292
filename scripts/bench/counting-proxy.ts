/** Parent side of the counting proxy (`proxy-server.ts`): start it as a child process, ask it over IPC. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Counts, ItemAccesses, RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { sleep } from './stats.ts';

export async function startCountingProxy(target: string) {
  const child = fork(fileURLToPath(new URL('./proxy-server.ts', import.meta.url)), [target], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const pending = new Map<number, (value: never) => void>();
  let next = 0;
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`counting proxy exited with ${code}`)));
    child.on('message', (m: { ready?: string; id: number; value: never }) => {
      if (m.ready) resolve(m.ready);
      else pending.get(m.id)?.(m.value);
      pending.delete(m.id);
    });
  });
  const ask = <T>(method: string) =>
    new Promise<T>((resolve) => {
      pending.set(next, resolve as (value: never) => void);
      child.send({ id: next++, method });
    });
  /** Counts by `category:operation`, and when the last call that was not a stream poll or a floor came. */
  const snapshot = () => ask<{ counts: Counts; lastActivity: number }>('snapshot');
  return {
    url,
    snapshot,
    /** Keep every request from now until `recorded()`, which returns them. */
    record: () => ask<void>('record'),
    recorded: () => ask<RecordedCall[]>('recorded'),
    /** Count every item touched by key from now until `tracked()`, which returns the counts. */
    track: () => ask<void>('track'),
    tracked: () => ask<ItemAccesses[]>('tracked'),
    /** Wait until no call but stream polls has come for `quietMs` (at most `maxMs`). */
    async quiet(quietMs = 250, maxMs = 5_000) {
      const started = Date.now();
      for (;;) {
        const idle = Date.now() - (await snapshot()).lastActivity;
        if (idle >= quietMs || Date.now() - started > maxMs) return;
        await sleep(quietMs - idle + 5);
      }
    },
    stop() {
      process.off('exit', kill);
      kill();
    },
  };
}
export type CountingProxy = Awaited<ReturnType<typeof startCountingProxy>>;
