/**
 * The local stream poller while its handler fails a batch and DynamoDB Local is killed (SIGKILL
 * of its JVM), restarted on the same data directory, and the poller itself killed and started
 * again on its checkpoint file: the failed batch is handed over again from its first failed
 * record the whole time, DynamoDB Local answering or not, and once the handler succeeds every
 * record has succeeded exactly once, none skipped (issue 27: 41 visits and 37 actions were lost
 * this way when the poller re-read a failed batch from the stream).
 *
 * A real DynamoDB Local on disk, reached through a TCP relay of this file's own: a restarted
 * DynamoDB Local listens on another port, and a poller keeps the endpoint it was started with.
 */

import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { type RunningDynamo, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { type StreamHandler, type StreamPoller, startStreamPoller } from '../../lib/local/stream-poller.ts';
import { eventually, holdsFor } from '../../tools/wait.ts';
import { alive, cleanUpStacks, javaToolOptions, tempDataDir } from '../support/stack-process.ts';
import { itemKey, keyOf } from '../support/stream-table.ts';

const TABLE = 'outage-stream';

/** A TCP relay on a port of its own that forwards to whichever endpoint it is pointed at. */
async function startRelay() {
  let target: URL | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    if (!target) return void client.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) socket.on('error', end).on('close', end);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Forward to `endpoint` from now on (none: refuse), cutting every connection open. */
    pointAt(endpoint: string | undefined) {
      target = endpoint ? new URL(endpoint) : undefined;
      for (const socket of sockets) socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface Call {
  poller: string;
  at: number;
  keys: string[];
  sequences: string[];
  outcome: 'ok' | 'partial' | 'thrown';
  failedAt?: number;
}

const acknowledged = (calls: readonly Call[]) =>
  calls.flatMap((c) =>
    c.outcome === 'ok' ? c.keys : c.outcome === 'partial' ? c.keys.slice(0, c.failedAt) : [],
  );

const javaOptions = process.env.JAVA_TOOL_OPTIONS;
const dynamos: RunningDynamo[] = [];
const pollers: StreamPoller[] = [];
let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
afterAll(async () => {
  for (const poller of pollers) poller.kill();
  for (const dynamo of dynamos) await dynamo.stop();
  await relay?.close();
  if (javaOptions === undefined) delete process.env.JAVA_TOOL_OPTIONS;
  else process.env.JAVA_TOOL_OPTIONS = javaOptions;
  cleanUpStacks();
});

describe('the local stream poller while DynamoDB Local is killed under a failing batch', () => {
  it('hands the failed batch over again until it succeeds, and every record succeeds exactly once', async () => {
    // The JVM killed with SIGKILL leaves its unpacked SQLite library in a directory of these tests.
    process.env.JAVA_TOOL_OPTIONS = javaToolOptions();
    const dir = tempDataDir();
    const dataDir = join(dir, 'dynamodb');
    const checkpointFile = join(dir, 'stream-checkpoint.json');
    relay = await startRelay();
    let dynamo = await startDynamoLocal(dataDir);
    dynamos.push(dynamo);
    relay.pointAt(dynamo.endpoint);
    const client = new DynamoDBClient(dynamoClientConfig(relay.endpoint, undefined, 30_000));
    await client.send(
      new CreateTableCommand({
        TableName: TABLE,
        KeySchema: [{ AttributeName: 'PK', KeyType: 'HASH' }],
        AttributeDefinitions: [{ AttributeName: 'PK', AttributeType: 'S' }],
        BillingMode: 'PAY_PER_REQUEST',
        StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
      }),
    );
    const put = (n: number) =>
      client.send(new PutItemCommand({ TableName: TABLE, Item: { PK: { S: itemKey(n) } } }));

    // While `failing`, the handler fails every batch at item-0020 (or later), by turns reporting it
    // and throwing (the whole batch).
    let failing = true;
    const calls: Call[] = [];
    const errors: unknown[] = [];
    const handler =
      (poller: string): StreamHandler =>
      async ({ Records }) => {
        const call: Call = {
          poller,
          at: Date.now(),
          keys: Records.map(keyOf),
          sequences: Records.map((r) => r.dynamodb!.SequenceNumber!),
          outcome: 'ok',
        };
        calls.push(call);
        const failedAt = failing ? call.keys.findIndex((k) => k >= itemKey(20)) : -1;
        if (failedAt === -1) return { batchItemFailures: [] };
        if (calls.filter((c) => c.outcome !== 'ok').length % 2 === 1) {
          call.outcome = 'thrown';
          throw new Error('handler failed');
        }
        Object.assign(call, { outcome: 'partial', failedAt });
        return { batchItemFailures: [{ itemIdentifier: call.sequences[failedAt]! }] };
      };
    const start = (name: string) => {
      const poller = startStreamPoller({
        endpoint: relay!.endpoint,
        tableName: TABLE,
        handler: handler(name),
        batchSize: 10,
        intervalMs: 50,
        checkpointFile,
        onError: (err) => errors.push(err),
      });
      pollers.push(poller);
      return poller;
    };
    const failedCalls = (since: number) =>
      calls.filter((c) => c.at >= since && c.keys[0] === itemKey(20) && c.outcome !== 'ok').length;

    const first = start('first');
    for (let n = 0; n < 60; n++) await put(n);
    await eventually('the batch from item-0020 failing', () => (failedCalls(0) >= 2 ? true : undefined));

    // DynamoDB Local killed: no read, no iterator, no discovery; the batch in hand is handed again.
    process.kill(dynamo.pid!, 'SIGKILL');
    await eventually('the JVM gone', () => (alive(dynamo.pid!) ? undefined : true), 10_000, 20);
    await dynamo.stop();
    relay.pointAt(undefined);
    const killedAt = Date.now();
    const errorsBefore = errors.length;
    await eventually('handed again three times with DynamoDB Local down', () =>
      failedCalls(killedAt) >= 3 ? true : undefined,
    );
    expect(errors.length, 'the poller could not read meanwhile').toBeGreaterThan(errorsBefore);

    // The poller killed too, and started again while DynamoDB Local is still down.
    first.kill();
    const second = start('second');
    dynamo = await startDynamoLocal(dataDir);
    dynamos.push(dynamo);
    relay.pointAt(dynamo.endpoint);
    const restartedAt = Date.now();
    await eventually('the restarted poller failing from item-0020', () =>
      calls.filter((c) => c.poller === 'second' && c.at >= restartedAt && c.outcome !== 'ok').length >= 2
        ? true
        : undefined,
    );
    expect(calls.filter((c) => c.poller === 'second')[0]!.keys[0], 'resumed after the checkpoint').toBe(
      itemKey(20),
    );

    failing = false;
    for (let n = 60; n < 80; n++) await put(n);
    const all = Array.from({ length: 80 }, (_, n) => itemKey(n));
    await eventually('every record acknowledged', () =>
      acknowledged(calls).length >= 80 ? true : undefined,
    );
    expect(acknowledged(calls), 'each record succeeded once, in order, none skipped').toEqual(all);

    // Stopped and started once more: nothing is handed over again.
    await second.stop();
    const saved = JSON.parse(readFileSync(checkpointFile, 'utf8')) as {
      shards: Record<string, { sequence: string }>;
    };
    const last = calls.filter((c) => c.outcome === 'ok').at(-1)!;
    expect(Object.values(saved.shards).map((s) => s.sequence)).toEqual([last.sequences.at(-1)]);
    const handedBefore = calls.length;
    start('third');
    await holdsFor(2_000, () => calls.length > handedBefore);
    expect(calls.length).toBe(handedBefore);
    client.destroy();
    // Two JVM starts, a kill and waits of seconds each: the 3 minutes it had in `faults`, above
    // the emulator project's minute for files of one poller on a running DynamoDB Local.
  }, 180_000);
});
