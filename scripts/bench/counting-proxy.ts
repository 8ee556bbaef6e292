/** Parent side of the counting proxy: start it as a child process and read its counters. */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Counts, RecordedCall } from '../../lib/local/dynamodb-counter.ts';

export { type Counts, diffCounts, type RecordedCall } from '../../lib/local/dynamodb-counter.ts';

export interface Snapshot {
  counts: Counts;
  /** Epoch ms of the last request that was not a stream poll. */
  lastActivity: number;
}

export interface CountingProxy {
  url: string;
  snapshot(): Promise<Snapshot>;
  /** Keep every request from now until `recorded()`, which returns them. */
  record(): void;
  recorded(): Promise<RecordedCall[]>;
  stop(): Promise<void>;
}

export async function startCountingProxy(targetEndpoint: string): Promise<CountingProxy> {
  const child: ChildProcess = fork(
    fileURLToPath(new URL('./proxy-server.ts', import.meta.url)),
    [targetEndpoint],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const url = await new Promise<string>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`counting proxy exited with ${code}`)));
    child.on('message', (m: { type: string; endpoint?: string }) => {
      if (m.type === 'ready' && m.endpoint) resolve(m.endpoint);
    });
  });
  let nextId = 0;
  const waiting = new Map<number, (m: never) => void>();
  child.on('message', (m: { type: string; id?: number } & Snapshot & { calls: RecordedCall[] }) => {
    if (m.id === undefined) return;
    if (m.type === 'snapshot')
      waiting.get(m.id)?.({ counts: m.counts, lastActivity: m.lastActivity } as never);
    else if (m.type === 'recorded') waiting.get(m.id)?.(m.calls as never);
    waiting.delete(m.id);
  });
  const ask = <T>(type: string) => {
    const id = nextId++;
    return new Promise<T>((resolve) => {
      waiting.set(id, resolve as (m: never) => void);
      child.send({ type, id });
    });
  };
  return {
    url,
    snapshot: () => ask<Snapshot>('snapshot'),
    record: () => child.send({ type: 'record', id: -1 }),
    recorded: () => ask<RecordedCall[]>('recorded'),
    async stop() {
      process.off('exit', killOnExit);
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.send({ type: 'stop', id: -1 });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
