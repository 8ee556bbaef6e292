/**
 * Local stand-in for the table stream's event source mappings: reads DynamoDB Local's stream and
 * invokes the same stream-consumer handlers that run in AWS (e.g. `functions/stream/enqueue-webhook-
 * events.ts`) with Lambda-shaped batches, so the local stack exercises the same path from commit
 * to queue. DynamoDB Local has no event filtering; each handler skips the records its mapping's
 * filter would have dropped.
 *
 * Shards: all shards of the stream are discovered every second (DescribeStream, paginated); each
 * one is read from TRIM_HORIZON, or after its checkpoint when a checkpoint file is kept (persistent
 * data dir, so a restart does not replay the whole retained stream). Closed shards are read to
 * their end and then dropped. A batch the handler reports as failed is re-read from its first
 * failed record after a short pause, as Lambda does with `ReportBatchItemFailures`.
 *
 * One poller stands for one event source mapping: its batch size and batching window are the
 * mapping's (the local stack runs one per mapping, each with its own checkpoint file).
 */
import { existsSync, readFileSync } from 'node:fs';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  ExpiredIteratorException,
  GetRecordsCommand,
  type GetRecordsCommandOutput,
  GetShardIteratorCommand,
  type ShardIteratorType,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { dynamoClientConfig } from '../aws/clients.ts';
import { writeFileAtomic } from './files.ts';

export type StreamHandler = (event: {
  Records: _Record[];
  /** As Lambda passes it to a mapping with a tumbling window. */
  shardId: string;
}) => Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> } | undefined>;

export interface StreamPollerOptions {
  endpoint: string;
  tableName: string;
  /**
   * Stream consumers, each standing for one event source mapping in AWS (webhooks, purge, ...).
   * Every batch goes to all of them; when any reports a failure the batch is re-read from the
   * earliest failed record for all of them, so a consumer may see a record twice (they are all
   * at-least-once and idempotent or deduplicated downstream, as in AWS).
   */
  handlers: readonly StreamHandler[];
  /** Pause between polls when nothing was read. */
  intervalMs?: number;
  /** Records per batch at most, as the mapping's `BatchSize` (default 100). */
  batchSize?: number;
  /**
   * How long records are gathered before a batch of fewer than `batchSize` is handed over, as the
   * mapping's `MaximumBatchingWindowInSeconds` (default 0: each read is handed over at once).
   */
  batchingWindowMs?: number;
  /** Where to keep each shard's last processed sequence number; unset keeps nothing. */
  checkpointFile?: string;
  onError?: (err: unknown) => void;
}

export interface StreamPoller {
  stop(): Promise<void>;
}

interface ShardState {
  iterator?: string;
  lastSequence?: string;
  retryAt?: number;
  /** Records read and not yet handled (gathered for the batching window), and since when. */
  pending: _Record[];
  pendingSince?: number;
}

const DISCOVER_EVERY_MS = 1000;
const RETRY_PAUSE_MS = 500;

export function startStreamPoller(options: StreamPollerOptions): StreamPoller {
  const interval = options.intervalMs ?? 150;
  const batchSize = options.batchSize ?? 100;
  const batchingWindowMs = options.batchingWindowMs ?? 0;
  const config = dynamoClientConfig(options.endpoint);
  const streams = new DynamoDBStreamsClient(config);
  const dynamo = new DynamoDBClient(config);
  const shards = new Map<string, ShardState>();
  const finished = new Set<string>();
  let streamArn: string | undefined;
  let lastDiscover = 0;
  let stopped = false;
  let wake: (() => void) | undefined;

  const saved = readCheckpoint(options.checkpointFile);

  const iteratorFor = async (shardId: string, type: ShardIteratorType, sequence?: string) => {
    const out = await streams.send(
      new GetShardIteratorCommand({
        StreamArn: streamArn,
        ShardId: shardId,
        ShardIteratorType: type,
        ...(sequence ? { SequenceNumber: sequence } : {}),
      }),
    );
    return out.ShardIterator;
  };

  const resume = async (shardId: string, state: ShardState) => {
    state.iterator = state.lastSequence
      ? await iteratorFor(shardId, 'AFTER_SEQUENCE_NUMBER', state.lastSequence)
      : await iteratorFor(shardId, 'TRIM_HORIZON');
  };

  const discover = async () => {
    lastDiscover = Date.now();
    if (!streamArn) {
      const table = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName }));
      streamArn = table.Table?.LatestStreamArn;
      if (!streamArn) throw new Error(`table ${options.tableName} has no stream`);
      if (saved && saved.streamArn !== streamArn) saved.shards = {};
    }
    let start: string | undefined;
    do {
      const out = await streams.send(
        new DescribeStreamCommand({
          StreamArn: streamArn,
          ...(start ? { ExclusiveStartShardId: start } : {}),
        }),
      );
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId!;
        if (shards.has(id) || finished.has(id)) continue;
        const state: ShardState = { lastSequence: saved?.shards[id], pending: [] };
        await resume(id, state);
        shards.set(id, state);
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  };

  const pollShard = async (shardId: string, state: ShardState): Promise<number> => {
    if (state.retryAt && Date.now() < state.retryAt) return 0;
    if (!state.iterator) await resume(shardId, state);
    // Gather up to `batchSize` records, across reads for up to `batchingWindowMs` (as Lambda's
    // MaximumBatchingWindowInSeconds): the iterator moves on as records are read, the checkpoint
    // only once they are handled, so a restart re-reads whatever was gathered and not handled.
    let read = 0;
    let closed = false;
    const room = batchSize - state.pending.length;
    if (room > 0) {
      let out: GetRecordsCommandOutput;
      try {
        out = await streams.send(new GetRecordsCommand({ ShardIterator: state.iterator, Limit: room }));
      } catch (err) {
        if (err instanceof ExpiredIteratorException) {
          state.iterator = undefined;
          state.pending = [];
          return 0;
        }
        if (err instanceof TrimmedDataAccessException) {
          state.lastSequence = undefined;
          state.iterator = undefined;
          state.pending = [];
          return 0;
        }
        throw err;
      }
      const records = (out.Records ?? []).map(repairEmptyMaps);
      if (records.length > 0 && state.pending.length === 0) state.pendingSince = Date.now();
      state.pending.push(...records);
      read = records.length;
      if (out.NextShardIterator) state.iterator = out.NextShardIterator;
      else closed = true; // a closed shard, read to its end
    }
    const due =
      state.pending.length >= batchSize ||
      closed ||
      (state.pending.length > 0 && Date.now() - (state.pendingSince ?? 0) >= batchingWindowMs);
    if (state.pending.length > 0 && due) {
      const records = state.pending;
      state.pending = [];
      const results = await Promise.all(
        options.handlers.map(async (handler) => {
          try {
            return (await handler({ Records: records, shardId }))?.batchItemFailures ?? [];
          } catch (err) {
            // As in Lambda: a thrown handler fails the whole batch.
            options.onError?.(err);
            return [{ itemIdentifier: records[0]!.dynamodb?.SequenceNumber ?? '' }];
          }
        }),
      );
      const failures = results.flat();
      if (failures.length > 0) {
        const failed = new Set(failures.map((f) => f.itemIdentifier));
        const first = records.findIndex((r) => failed.has(r.dynamodb?.SequenceNumber ?? ''));
        const at = first === -1 ? 0 : first;
        if (at > 0) state.lastSequence = records[at - 1]!.dynamodb?.SequenceNumber;
        state.iterator = await iteratorFor(
          shardId,
          'AT_SEQUENCE_NUMBER',
          records[at]!.dynamodb?.SequenceNumber,
        );
        state.retryAt = Date.now() + RETRY_PAUSE_MS;
        saveCheckpoint();
        return 0;
      }
      state.lastSequence = records[records.length - 1]!.dynamodb?.SequenceNumber;
      state.retryAt = undefined;
      saveCheckpoint();
    }
    if (closed && state.pending.length === 0) {
      shards.delete(shardId);
      finished.add(shardId);
    }
    // While records are gathered, the loop pauses between reads as when idle.
    return state.pending.length > 0 ? 0 : read;
  };

  // Called only once the handlers have acknowledged a batch, and the queue acknowledges a send
  // once its journal is on disk: a checkpoint never passes a record whose work could still be lost.
  // A shard read to its end keeps its last position, so a restart does not read it again.
  const saveCheckpoint = () => {
    if (!options.checkpointFile || !streamArn || !saved) return;
    for (const [id, state] of shards) if (state.lastSequence) saved.shards[id] = state.lastSequence;
    // Whole or not at all: a torn file would send the restart back to the start of the stream.
    writeFileAtomic(options.checkpointFile, JSON.stringify({ streamArn, shards: saved.shards }));
  };

  const loop = (async () => {
    while (!stopped) {
      let read = 0;
      try {
        if (Date.now() - lastDiscover >= DISCOVER_EVERY_MS) await discover();
        for (const [id, state] of [...shards]) {
          if (stopped) break;
          read += await pollShard(id, state);
        }
      } catch (err) {
        if (!stopped) options.onError?.(err);
        await sleep(1000, (w) => {
          wake = w;
        });
        continue;
      }
      if (read === 0 && !stopped) {
        await sleep(interval, (w) => {
          wake = w;
        });
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      streams.destroy();
      dynamo.destroy();
    },
  };
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

function readCheckpoint(
  file: string | undefined,
): { streamArn: string; shards: Record<string, string> } | undefined {
  if (!file || !existsSync(file)) return file ? { streamArn: '', shards: {} } : undefined;
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as {
      streamArn?: string;
      shards?: Record<string, string>;
    };
    return { streamArn: data.streamArn ?? '', shards: data.shards ?? {} };
  } catch {
    return { streamArn: '', shards: {} };
  }
}

const ATTRIBUTE_TYPES = ['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL'];

/**
 * DynamoDB Local's stream writes an empty map attribute as `{}` instead of `{"M":{}}` (an action
 * without metadata has `metadata: {}`), which no unmarshaller accepts. AWS writes `{"M":{}}`, so
 * the local poller repairs the record to what AWS would have delivered.
 */
export function repairEmptyMaps(record: _Record): _Record {
  const fix = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object') return value;
    const av = value as Record<string, unknown>;
    const kinds = Object.keys(av).filter((k) => ATTRIBUTE_TYPES.includes(k));
    if (kinds.length === 0) return { M: {} };
    if (av.M && typeof av.M === 'object') return { M: fixImage(av.M as Record<string, unknown>) };
    if (Array.isArray(av.L)) return { L: av.L.map(fix) };
    return value;
  };
  const fixImage = (image: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(image).map(([k, v]) => [k, fix(v)]));
  const d = record.dynamodb;
  if (!d) return record;
  return {
    ...record,
    dynamodb: {
      ...d,
      ...(d.NewImage ? { NewImage: fixImage(d.NewImage) as typeof d.NewImage } : {}),
      ...(d.OldImage ? { OldImage: fixImage(d.OldImage) as typeof d.OldImage } : {}),
    },
  };
}
