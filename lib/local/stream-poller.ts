/**
 * Local stand-in for one of the table stream's event source mappings: reads DynamoDB Local's
 * stream and invokes the same handler that runs in AWS (e.g. `functions/stream/enqueue-webhook-
 * events.ts`) with Lambda-shaped batches (`lib/queues/stream-batch.ts`), so the local stack
 * exercises the same path from commit to queue. As the mapping does, it applies its filters
 * (`stream-filters.ts`), its batch size and batching window, `ReportBatchItemFailures` and, when
 * it has one, its tumbling window with state (`stream-shard.ts`).
 *
 * Polling: every 150 ms while the stream is active; once nothing has been read, held or written
 * for 2 s, the pause doubles up to 1 s and shards are looked for every 5 s, and a write this
 * process sends to the table's DynamoDB ends the pause at once (`table-writes.ts`). An idle stack
 * polled 6 times a second per reader cost about 0.1 core of the two it runs on.
 *
 * Shards: all shards of the stream are discovered every second (DescribeStream, paginated); each
 * one is read from TRIM_HORIZON, or after its checkpoint when a checkpoint file is kept (persistent
 * data dir, so a restart does not replay the whole retained stream). Closed shards are read to
 * their end and then dropped.
 *
 * Nothing is skipped: records read stay in hand until the handler acknowledges them. A failed
 * batch is handed over again from its first failed record after a pause, until it succeeds,
 * whatever else fails meanwhile (reads, discovery, DynamoDB Local itself); the checkpoint, in
 * memory and on disk, never passes a record before its batch succeeded. A restart resumes after
 * the checkpoint, with the window and state saved with it.
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { dynamoClientConfig } from '../aws/clients.ts';
import type { StreamBatchEvent, StreamBatchResponse, WindowState } from '../queues/stream-batch.ts';
import { readCheckpoint, type StreamCheckpoint, writeCheckpoint } from './stream-checkpoint.ts';
import { compileFilters } from './stream-filters.ts';
import { lambdaRecord } from './stream-records.ts';
import { type Invocation, type Outcome, Shard } from './stream-shard.ts';
import { onTableWrite } from './table-writes.ts';

export type { StreamBatchEvent, StreamBatchResponse, StreamWindowEvent } from '../queues/stream-batch.ts';
export { repairEmptyMaps } from './stream-records.ts';

// biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to report may return nothing.
export type StreamHandler = (event: StreamBatchEvent) => Promise<StreamBatchResponse | undefined | void>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  /** The mapping's function. */
  handler: StreamHandler;
  /**
   * The mapping's filter patterns (`FilterCriteria`, as plain data): a record is handed over only
   * when it matches one of them; the others count as done. Unset: every record. A pattern using a
   * matcher the local poller does not implement throws here, at the start.
   */
  filters?: readonly unknown[];
  /** Pause between polls when nothing was read, while the stream is active (default 150 ms). */
  intervalMs?: number;
  /**
   * The longest pause between polls of an idle stream (default 1 s): nothing read, nothing in
   * hand and no write seen for `IDLE_AFTER_MS`. A write this process makes to the table's
   * DynamoDB ends the pause at once (`table-writes.ts`); this bounds how late another process's
   * write is read.
   */
  idleIntervalMs?: number;
  /** Records per batch at most, as the mapping's `BatchSize` (default 100). */
  batchSize?: number;
  /**
   * How long records are gathered before a batch of fewer than `batchSize` is handed over, as the
   * mapping's `MaximumBatchingWindowInSeconds` (default 0: each read is handed over at once).
   */
  batchingWindowMs?: number;
  /**
   * The mapping's `TumblingWindowInSeconds` (fractions allowed locally): every invocation then
   * carries its window and state (`StreamWindowEvent`) and must answer with a `state`.
   */
  tumblingWindowSeconds?: number;
  /**
   * Where to keep each shard's checkpoint (and window and state); unset keeps nothing. Format:
   * `stream-checkpoint.ts`.
   */
  checkpointFile?: string;
  onError?: (err: unknown) => void;
}

export interface StreamPoller {
  /** Lets the invocation in flight finish and records its outcome, then stops. */
  stop(): Promise<void>;
  /**
   * Stops at once, as `kill -9` would: an invocation in flight runs on, but its outcome is never
   * recorded, and nothing more is written to the checkpoint file.
   */
  kill(): void;
}

const DISCOVER_EVERY_MS = 1000;
/** Idle: shards looked for less often (a write seen looks again at once, see `wake`). */
const IDLE_DISCOVER_EVERY_MS = 5000;
/**
 * How long after the last record read or write seen the poller keeps its short interval: a
 * write's record may reach the stream a little after the write is answered (DynamoDB Local
 * commits in the background, `dynamodb-proxy.ts`), and a test or a client often writes again soon.
 */
const IDLE_AFTER_MS = 2000;
const RETRY_PAUSE_MS = 500;
/** After a read failed (DynamoDB Local down, say): the next read of that shard. */
const READ_RETRY_MS = 1000;

export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const matches = compileFilters(options.filters);
  const interval = options.intervalMs ?? 150;
  const idleInterval = Math.max(interval, options.idleIntervalMs ?? 1000);
  const windowSeconds = options.tumblingWindowSeconds;
  if (windowSeconds !== undefined && !(windowSeconds > 0)) {
    throw new Error(`tumblingWindowSeconds must be positive, got ${windowSeconds}`);
  }
  const settings = {
    batchSize: options.batchSize ?? 100,
    batchingWindowMs: options.batchingWindowMs ?? 0,
    ...(windowSeconds ? { windowMs: windowSeconds * 1000 } : {}),
    retryPauseMs: RETRY_PAUSE_MS,
  };
  const config = dynamoClientConfig(options.endpoint);
  const streams = new DynamoDBStreamsClient(config);
  const dynamo = new DynamoDBClient(config);
  const report = (err: unknown) => {
    if (!stopped) options.onError?.(err);
  };
  const shards = new Map<string, Shard>();
  const finished = new Set<string>();
  const saved: StreamCheckpoint = options.checkpointFile
    ? readCheckpoint(options.checkpointFile)
    : { streamArn: '', shards: {} };
  let streamArn: string | undefined;
  let lastDiscover = 0;
  let lastWritten: string | undefined;
  let stopped = false;
  let killed = false;
  let wake: (() => void) | undefined;
  /** The last record read, write seen, or the start: the stream is idle `IDLE_AFTER_MS` after it. */
  let lastActivity = Date.now();
  let pause = interval;
  const stopWatching = onTableWrite(options.endpoint, () => {
    const wasIdle = Date.now() - lastActivity >= IDLE_AFTER_MS;
    lastActivity = Date.now();
    // The write may have gone to a shard that appeared while discovery was slowed down.
    if (wasIdle && Date.now() - lastDiscover >= DISCOVER_EVERY_MS) lastDiscover = 0;
    wake?.();
  });

  const discover = async () => {
    lastDiscover = Date.now();
    if (!streamArn) {
      const table = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
      const arn = table.Table?.LatestStreamArn;
      if (!arn) throw new Error(`table ${options.tableName} has no stream`);
      // Another stream (the table made again): the checkpoints are of no use.
      if (saved.streamArn !== arn) Object.assign(saved, { streamArn: arn, shards: {} });
      streamArn = arn;
    }
    let start: string | undefined;
    do {
      const out = await streams.send(
        new DescribeStreamCommand({
          StreamArn: streamArn,
          ...(start ? { ExclusiveStartShardId: start } : {}),
        }),
      );
      for (const { ShardId: id } of out.StreamDescription?.Shards ?? []) {
        if (!id || shards.has(id) || finished.has(id)) continue;
        shards.set(id, new Shard(id, settings, saved.shards[id]));
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  const iteratorFor = async (shard: Shard, trimmed = false) => {
    const after = trimmed ? undefined : (shard.readUpTo ?? shard.acknowledged);
    try {
      const out = await streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: shard.id,
          ...(after
            ? { ShardIteratorType: 'AFTER_SEQUENCE_NUMBER', SequenceNumber: after }
            : { ShardIteratorType: 'TRIM_HORIZON' }),
        }),
      );
      return out.ShardIterator;
    } catch (err) {
      // Past the stream's retention: what is left starts at the trim horizon.
      if (err instanceof TrimmedDataAccessException && after) return iteratorFor(shard, true);
      throw err;
    }
  };

  /** Reads what fits in hand; the number of records read. */
  const read = async (shard: Shard): Promise<number> => {
    const room = shard.room;
    if (shard.ended || room <= 0 || Date.now() < shard.nextReadAt) return 0;
    try {
      shard.iterator ??= await iteratorFor(shard);
      const out = await streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: room }));
      if (killed) return 0;
      const records = (out.Records ?? []).map((r) => lambdaRecord(r, streamArn!));
      if (shard.take(records, matches, Date.now())) save();
      shard.iterator = out.NextShardIterator;
      // No next iterator: a closed shard, read to its end.
      if (!out.NextShardIterator) shard.ended = true;
      return records.length;
    } catch (err) {
      shard.caughtUp = false;
      if (err instanceof TrimmedDataAccessException) {
        shard.iterator = await iteratorFor(shard, true).catch(() => undefined);
        return 0;
      }
      // Expired, or from a DynamoDB Local that has restarted since: a new one after the last read.
      shard.iterator = undefined;
      if (err instanceof ExpiredIteratorException) return 0;
      shard.nextReadAt = Date.now() + READ_RETRY_MS;
      report(err);
      return 0;
    }
  };

  /** Hands over the batch due, if any; whether one succeeded. */
  const handOver = async (shard: Shard): Promise<boolean> => {
    const invocation = shard.next(Date.now());
    if (!invocation || !streamArn) return false;
    if (shard.handing(invocation)) save();
    const outcome = await invoke(shard.id, streamArn, invocation);
    if (killed) return false;
    shard.settle(invocation, outcome, Date.now());
    save();
    return outcome.ok;
  };

  const invoke = async (shardId: string, arn: string, invocation: Invocation): Promise<Outcome> => {
    const { records, window } = invocation;
    const iso = (ms: number) => new Date(ms).toISOString();
    const event: StreamBatchEvent = {
      // Copies, as Lambda sends JSON: a handler that changes what it got cannot change a retry.
      Records: structuredClone(records),
      shardId,
      eventSourceARN: arn,
      ...(window
        ? {
            window: { start: iso(window.start), end: iso(window.end) },
            state: structuredClone(invocation.state ?? {}),
            isFinalInvokeForWindow: invocation.final,
            isWindowTerminatedEarly: invocation.endsEarly,
          }
        : {}),
    };
    let response: StreamBatchResponse | undefined;
    try {
      response = (await options.handler(event)) ?? undefined;
    } catch (err) {
      // As in Lambda: a thrown handler fails the whole batch.
      report(err);
      return { ok: false, failedAt: 0 };
    }
    const failures = response?.batchItemFailures ?? [];
    if (failures.length > 0) {
      const failed = new Set(failures.map((f) => f.itemIdentifier));
      const first = records.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
      // An identifier that names no record of the batch fails all of it, as in Lambda.
      return { ok: false, failedAt: Math.max(first, 0) };
    }
    if (!window) return { ok: true };
    const state = windowState(response?.state);
    if (!state) {
      report(new Error(`stream handler (shard ${shardId}): a response without a state object fails`));
      return { ok: false, failedAt: 0 };
    }
    return { ok: true, state };
  };

  // Called once an invocation's outcome is known, and when records read were all filtered out:
  // the handlers acknowledge a batch only once its work is durable (the local queue answers a
  // send once its journal is on disk), so a checkpoint never passes a record whose work could
  // still be lost. A shard read to its end keeps its last position, so a restart does not read it
  // again.
  const save = () => {
    if (!options.checkpointFile || !streamArn || killed) return;
    for (const [id, shard] of shards) saved.shards[id] = shard.toCheckpoint();
    const text = JSON.stringify(saved);
    if (text === lastWritten) return;
    // Whole or not at all: a torn file would send the restart back to the start of the stream,
    // and a state beside the wrong checkpoint would count records twice or not at all.
    writeCheckpoint(options.checkpointFile, saved);
    lastWritten = text;
  };

  const loop = (async () => {
    while (!stopped) {
      let busy = false;
      let inHand = false;
      const idle = Date.now() - lastActivity >= IDLE_AFTER_MS;
      if (Date.now() - lastDiscover >= (idle ? IDLE_DISCOVER_EVERY_MS : DISCOVER_EVERY_MS)) {
        // Failing discovery stops neither reads nor hand-overs of the shards already known.
        await discover().catch(report);
      }
      for (const shard of [...shards.values()]) {
        if (stopped) break;
        const room = shard.room;
        const count = await read(shard);
        if (stopped) break;
        const succeeded = await handOver(shard);
        // A full read may have left more to read; a success may have left another batch due.
        busy ||= (count > 0 && count === room) || succeeded;
        if (count > 0) lastActivity = Date.now();
        // Records waiting for their batch, a retry or a window's end: polled at the short interval.
        inHand ||= !shard.drained;
        if (shard.ended && shard.drained) {
          shards.delete(shard.id);
          finished.add(shard.id);
        }
      }
      if (busy || inHand || Date.now() - lastActivity < IDLE_AFTER_MS) pause = interval;
      // Idle: the pause doubles up to the idle interval, and a write seen ends it at once.
      else pause = Math.min(idleInterval, pause * 2);
      if (!busy && !stopped) {
        await sleep(pause, (w) => {
          wake = w;
        });
        wake = undefined;
      }
    }
  })();

  const close = () => {
    stopWatching();
    streams.destroy();
    dynamo.destroy();
  };
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      close();
    },
    kill() {
      stopped = true;
      killed = true;
      wake?.();
      close();
    },
  };
}

/** The state a response carries, as JSON (what Lambda would keep), or undefined if it has none. */
function windowState(state: unknown): WindowState | undefined {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return undefined;
  try {
    return JSON.parse(JSON.stringify(state)) as WindowState;
  } catch {
    return undefined;
  }
}

function sleep(ms: number, register: (wake: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    register(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
