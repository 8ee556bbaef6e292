/** The bench's stack (DynamoDB Local, the counting proxy in a child process, the local stack) and client. */
import { fork, type StdioOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { type IdKind, lastIdOf, sequenceKey } from '../../lib/db/entities/sequence.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import type { Counts, ItemAccesses, RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { LOCAL_TABLE_NAME, startLocalStack } from '../../lib/local/stack.ts';
import type { Table } from '../../tools/table.ts';
import { sleep } from './stats.ts';

type Reply = { ready?: string; id: number; value?: unknown; error?: string };
/** A script beside this one in a child process: it says `{ ready }`, then answers `ask` by id. */
export async function forkChild(file: string, args: string[] = [], env?: NodeJS.ProcessEnv) {
  const stdio: StdioOptions = ['ignore', 'inherit', 'inherit', 'ipc'];
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), args, { stdio, env });
  const kill = () => child.kill('SIGKILL');
  process.on('exit', kill);
  const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 0;
  const ready = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => {
      const err = new Error(`${file} exited with ${code}`);
      for (const p of [{ reject }, ...pending.values()]) p.reject(err);
    });
    child.on('message', ({ ready, id, value, error }: Reply) => {
      if (ready !== undefined) return resolve(ready);
      if (error === undefined) pending.get(id)?.resolve(value);
      else pending.get(id)?.reject(new Error(`${file}: ${error}`));
      pending.delete(id);
    });
  });
  return {
    ready,
    ask: <T>(message: object) =>
      new Promise<T>((resolve, reject) => {
        pending.set(next, { resolve: resolve as (v: unknown) => void, reject });
        child.send({ ...message, id: next++ });
      }),
    /** Let it end on its own (it ends when its parent goes), or kill it after 15 s. */
    async stop() {
      process.off('exit', kill);
      const exited = new Promise((r) => child.once('exit', r));
      child.disconnect();
      const timer = setTimeout(kill, 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The DynamoDB call counter (`lib/local/dynamodb-counter.ts`) in front of `target`, asked over IPC. */
export async function startCountingProxy(target: string) {
  const child = await forkChild('./proxy-server.ts', [target]);
  const ask = <T>(method: string) => child.ask<T>({ method });
  /** Counts by `category:operation`, and when the last call that was not a stream poll or a floor came. */
  const snapshot = () => ask<{ counts: Counts; lastActivity: number }>('snapshot');
  /** Wait until no call but stream polls has come for `quietMs` (at most `maxMs`). */
  const quiet = async (quietMs = 250, maxMs = 5_000) => {
    for (const started = Date.now(); ; ) {
      const idle = Date.now() - (await snapshot()).lastActivity;
      if (idle >= quietMs || Date.now() - started > maxMs) return;
      await sleep(quietMs - idle + 5);
    }
  };
  return {
    url: child.ready,
    snapshot,
    quiet,
    /** The DynamoDB requests of `run`, sent once the table has been quiet for `quietMs`. */
    async recording(run: () => Promise<unknown>, quietMs?: number) {
      await quiet(quietMs);
      await ask('record');
      await run();
      return ask<RecordedCall[]>('recorded');
    },
    /** Count every item touched by key from now until `tracked()`, which returns the counts. */
    track: () => ask<void>('track'),
    tracked: () => ask<ItemAccesses[]>('tracked'),
    stop: child.stop,
  };
}

export type BenchEnvironment = Awaited<ReturnType<typeof startBenchEnvironment>>;
export async function startBenchEnvironment() {
  const tenant = 'bench';
  const apiKey = `bench_${randomBytes(24).toString('base64url')}`;
  const dynamo = await startDynamoLocal(undefined);
  const stoppers: Array<() => unknown> = [() => dynamo.stop()];
  const stop = async () => {
    for (const s of stoppers.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
    const proxy = await startCountingProxy(dynamo.endpoint);
    stoppers.push(() => proxy.stop());
    const options = { port: 0, dataDir: 'memory', devApiKeys: `${tenant}:${apiKey}` } as const;
    // While it starts, /health is asked again and again: each 503 `starting` timed (issue 31: at once).
    const startingMs: number[] = [];
    let [up, asking] = [false, Promise.resolve()];
    const ask = async (base: string) => {
      for (let t = performance.now(); !up; t = performance.now()) {
        const res = await fetch(`${base}/health`);
        await res.arrayBuffer();
        if (res.status === 503 && !up) startingMs.push(performance.now() - t);
      }
    };
    // Measured against the handlers and DynamoDB, not a stage's route limits; no timed reward release
    // (a Query every 10 s the call counts would take for a request's: the API approves the rewards).
    const stack = await startLocalStack({
      ...{ ...options, throttles: false, dynamodbEndpoint: proxy.url, rewardReleaseIntervalMs: false },
      onListening: (base) => {
        asking = ask(base);
      },
    });
    up = true;
    await asking;
    stoppers.push(() => stack.stop());
    // The table straight through DynamoDB Local, never counted: bulk writes and checks.
    const db = createDocumentClient(dynamo.endpoint, undefined, 30_000);
    const table: Table = { db, name: stack.tableName };
    const client = benchClient(stack.baseUrl, apiKey);
    // What parts make before they measure, 8 requests at a time; never timed.
    const maker = benchClient(stack.baseUrl, apiKey, 8);
    stoppers.push(client.close, maker.close, () => table.db.destroy());
    return { dynamo, proxy, stack, tenant, apiKey, table, client, maker, stop, startingMs };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reserve `n` ids of a kind, as a function reserves its block: the first of them. */
export async function reserveIds(env: { table: Table }, kind: IdKind, n: number): Promise<number> {
  const update = new UpdateCommand({
    ...{ TableName: env.table.name, Key: sequenceKey(kind), ReturnValues: 'UPDATED_NEW' },
    UpdateExpression: 'ADD last_id :n SET #type = :type',
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':n': n, ':type': 'sequence' },
  });
  return lastIdOf((await env.table.db.send(update)).Attributes) - n + 1;
}

/** Wait until the webhook pipeline and the purge are idle: no DynamoDB call but stream polls for a second. */
export const waitPipelineIdle = (env: BenchEnvironment) => env.proxy.quiet(1_000, 60_000);
export type Response = { status: number; headers: IncomingHttpHeaders; body: string };
export type RequestSpec = { method: string; path: string; headers?: Record<string, string>; body?: unknown };
export type BenchClient = ReturnType<typeof benchClient>;
/** A client of the gateway at `baseUrl`, sending `apiKey` on every path but the redirect's. */
export function benchClient(baseUrl: string, apiKey: string, sockets = 1) {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const send = (spec: RequestSpec, retried = false): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
      const headers: Record<string, string> = { ...spec.headers };
      if (!spec.path.startsWith('/r/')) headers['api-key'] = apiKey;
      if (body) headers['content-type'] = 'application/json';
      const req = request(`${baseUrl}${spec.path}`, { method: spec.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        const text = () => Buffer.concat(chunks).toString();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text() }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // A kept-alive socket the gateway closed (5 s idle) as this went out: Node's remedy, once.
        if (req.reusedSocket && err.code === 'ECONNRESET' && !retried) send(spec, true).then(resolve, reject);
        else reject(err);
      });
      req.end(body);
    });
  return {
    send,
    async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
      const res = await send({ method, path, body });
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.body.slice(0, 300)}`);
      return (res.body ? JSON.parse(res.body) : undefined) as T;
    },
    close: () => agent.destroy(),
  };
}
