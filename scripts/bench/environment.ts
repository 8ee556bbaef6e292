/**
 * The bench's own stack: DynamoDB Local in memory, the counting proxy in front of it (in a child
 * process, `proxy-server.ts`, so its work never shares the stack's event loop), and the local stack
 * pointed at the proxy on a free port.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { type IdKind, lastIdOf, sequenceKey } from '../../lib/db/entities/sequence.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import type { Counts, ItemAccesses, RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { LOCAL_TABLE_NAME, startLocalStack } from '../../lib/local/stack.ts';
import type { Table } from '../../tools/table.ts';
import { benchClient } from './http-client.ts';
import { sleep } from './stats.ts';

/** The DynamoDB call counter (`lib/local/dynamodb-counter.ts`) in front of `target`, asked over IPC. */
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
      for (const started = Date.now(); ; ) {
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
    // Measured against the handlers and DynamoDB, not the per-route limits of a deployed stage.
    const options = {
      port: 0,
      dataDir: 'memory',
      devApiKeys: `${tenant}:${apiKey}`,
      throttles: false,
    } as const;
    const stack = await startLocalStack({ ...options, dynamodbEndpoint: proxy.url });
    stoppers.push(() => stack.stop());
    // The table straight through DynamoDB Local, never counted: bulk writes and checks.
    const table: Table = {
      db: createDocumentClient(dynamo.endpoint, undefined, 30_000),
      name: stack.tableName,
    };
    const client = benchClient(stack.baseUrl, apiKey);
    stoppers.push(client.close, () => table.db.destroy());
    return { dynamo, proxy, stack, tenant, apiKey, table, client, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reserve `n` ids of a kind, as a function reserves its block: the first of them. */
export async function reserveIds(env: { table: Table }, kind: IdKind, n: number): Promise<number> {
  const { Attributes } = await env.table.db.send(
    new UpdateCommand({
      ...{ TableName: env.table.name, Key: sequenceKey(kind), ReturnValues: 'UPDATED_NEW' },
      UpdateExpression: 'ADD last_id :n SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':n': n, ':type': 'sequence' },
    }),
  );
  return lastIdOf(Attributes) - n + 1;
}

/**
 * Wait until the webhook pipeline and the purge are idle: no DynamoDB call but stream polls for a
 * second (every delivery reads its campaign, every purge step queries the table).
 */
export const waitPipelineIdle = (env: BenchEnvironment) => env.proxy.quiet(1_000, 60_000);
