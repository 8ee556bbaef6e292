/**
 * The local stream poller's checkpoint file: per shard, the last record done and, with a tumbling
 * window, the open window and its state, all in one JSON file replaced whole on every change
 * (`writeFileAtomic`), so a `kill -9` at any moment leaves a state that matches its checkpoint.
 *
 * Format 2: `{ "version": 2, "streamArn": "…", "shards": { "<shard id>": ShardCheckpoint } }`.
 * Format 1 (before tumbling windows) kept `"shards": { "<shard id>": "<sequence number>" }`; it is
 * read as format 2 with no window, and written as format 2 from then on.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { WindowState } from '../queues/stream-batch.ts';
import { writeFileAtomic } from './files.ts';

export interface ShardCheckpoint {
  /** Every record up to this one is done (handed over and acknowledged, or filtered out). */
  sequence?: string;
  /** The window in progress and the state its last successful invocation returned. */
  window?: SavedWindow;
  /** The end of the last window closed (ISO): no later record goes into a window before it. */
  closedUntil?: string;
}

export interface SavedWindow {
  start: string;
  end: string;
  state: WindowState;
  /** Its state outgrew 1 MB: the next invocation is the early final one, with this state. */
  endsEarly?: true;
  /** Its final invocation was handed over, through this record ('' for none): retried as it was. */
  closing?: string;
}

export interface StreamCheckpoint {
  streamArn: string;
  shards: Record<string, ShardCheckpoint>;
}

/** The file's content; an empty checkpoint when there is none or it cannot be read. */
export function readCheckpoint(file: string): StreamCheckpoint {
  if (!existsSync(file)) return { streamArn: '', shards: {} };
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as {
      streamArn?: string;
      shards?: Record<string, string | ShardCheckpoint>;
    };
    const shards = Object.fromEntries(
      Object.entries(data.shards ?? {}).map(([id, saved]) => [
        id,
        typeof saved === 'string' ? { sequence: saved } : saved,
      ]),
    );
    return { streamArn: data.streamArn ?? '', shards };
  } catch {
    return { streamArn: '', shards: {} };
  }
}

export function writeCheckpoint(file: string, checkpoint: StreamCheckpoint): void {
  writeFileAtomic(file, JSON.stringify({ version: 2, ...checkpoint }));
}
