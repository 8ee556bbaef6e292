/**
 * The rules one shard of the local stream poller keeps (`lib/local/stream-shard.ts`), on records
 * made here with chosen creation times: which invocation is due, when a tumbling window is over,
 * what a failure keeps, where the checkpoint stands. The poller over DynamoDB Local is tested in
 * test/integration/stream-poller*.test.ts and test/emulator/stream-poller-outage.test.ts.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { readCheckpoint, writeCheckpoint } from '../../lib/local/stream-checkpoint.ts';
import { MAX_STATE_BYTES, Shard, type ShardSettings } from '../../lib/local/stream-shard.ts';

const T0 = Date.parse('2026-11-27T13:15:00.000Z');
const all = () => true;

/** Record `n`, created at `atMs` (DynamoDB Local gives the minute; the read time refines it). */
const record = (n: number, atMs = T0): DynamoDBRecord => ({
  eventName: 'INSERT',
  dynamodb: {
    ApproximateCreationDateTime: Math.floor(atMs / 60_000) * 60,
    SequenceNumber: String(n).padStart(21, '0'),
    Keys: { PK: { S: `item-${n}` } },
  },
});
const keys = (records: readonly DynamoDBRecord[]) => records.map((r) => Number(r.dynamodb!.SequenceNumber));
const iso = (ms: number) => new Date(ms).toISOString();

const SETTINGS: ShardSettings = { batchSize: 10, batchingWindowMs: 0, windowMs: 10_000, retryPauseMs: 500 };
const windowed = (extra: Partial<ShardSettings> = {}) => new Shard('shard-1', { ...SETTINGS, ...extra });

describe('a shard without a tumbling window', () => {
  const plain = (extra: Partial<ShardSettings> = {}) =>
    new Shard('shard-1', { batchSize: 3, batchingWindowMs: 1_000, retryPauseMs: 500, ...extra });

  it('gathers for the batching window, or until the batch is full', () => {
    const shard = plain();
    shard.take([record(1)], all, T0);
    expect(shard.next(T0 + 999)).toBeUndefined();
    expect(keys(shard.next(T0 + 1_000)!.records)).toEqual([1]);
    shard.take([record(2), record(3)], all, T0 + 100);
    expect(keys(shard.next(T0 + 100)!.records)).toEqual([1, 2, 3]);
    expect(shard.room).toBe(0);
  });

  it('keeps the failed records in hand and hands them again from the first failed one after a pause', () => {
    const shard = plain();
    shard.take([record(1), record(2), record(3)], all, T0);
    const first = shard.next(T0)!;
    shard.settle(first, { ok: false, failedAt: 1 }, T0);
    // Record 1 is done; 2 and 3 stay in hand: no read of the stream is needed to retry them.
    expect(shard.toCheckpoint()).toEqual({ sequence: record(1).dynamodb!.SequenceNumber });
    expect(shard.next(T0 + 499)).toBeUndefined();
    shard.take([record(4)], all, T0 + 200);
    const retry = shard.next(T0 + 500)!;
    expect(keys(retry.records)).toEqual([2, 3, 4]);
    shard.settle(retry, { ok: false, failedAt: 0 }, T0 + 500);
    expect(shard.toCheckpoint().sequence).toBe(record(1).dynamodb!.SequenceNumber);
    shard.settle(shard.next(T0 + 1_000)!, { ok: true }, T0 + 1_000);
    expect(shard.toCheckpoint().sequence).toBe(record(4).dynamodb!.SequenceNumber);
    expect(shard.next(T0 + 5_000)).toBeUndefined();
  });

  it('moves the checkpoint past filtered-out records only once nothing before them is in hand', () => {
    const shard = plain();
    const odd = (r: DynamoDBRecord) => Number(r.dynamodb!.SequenceNumber) % 2 === 1;
    expect(shard.take([record(1), record(2)], odd, T0)).toBe(false);
    expect(shard.toCheckpoint().sequence).toBeUndefined();
    const batch = shard.next(T0 + 1_000)!;
    expect(keys(batch.records)).toEqual([1]);
    shard.settle(batch, { ok: true }, T0 + 1_000);
    expect(shard.toCheckpoint().sequence).toBe(record(2).dynamodb!.SequenceNumber);
    expect(shard.take([record(4)], odd, T0 + 1_100)).toBe(true);
    expect(shard.toCheckpoint().sequence).toBe(record(4).dynamodb!.SequenceNumber);
  });
});

describe('a shard with a tumbling window', () => {
  it('carries the state across invocations and closes the window when a later record comes', () => {
    const shard = windowed({ batchSize: 2 });
    shard.take([record(1), record(2), record(3)], all, T0 + 1_000);
    const first = shard.next(T0 + 1_000)!;
    expect(first).toMatchObject({ window: { start: T0, end: T0 + 10_000 }, state: {}, final: false });
    expect(keys(first.records)).toEqual([1, 2]);
    shard.settle(first, { ok: true, state: { n: 2 } }, T0 + 1_000);
    shard.take([record(4)], all, T0 + 5_000);
    // Record 5 is read after the window's end: a later window, which ends this one.
    shard.take([record(5)], all, T0 + 12_000);
    const final = shard.next(T0 + 12_000)!;
    expect(final).toMatchObject({ window: { start: T0 }, state: { n: 2 }, final: true });
    expect(keys(final.records)).toEqual([3, 4]);
    shard.settle(final, { ok: true, state: { ignored: true } }, T0 + 12_000);
    const next = shard.next(T0 + 12_000)!;
    expect(next).toMatchObject({ window: { start: T0 + 10_000, end: T0 + 20_000 }, state: {}, final: false });
    expect(keys(next.records)).toEqual([5]);
    expect(shard.toCheckpoint()).toEqual({
      sequence: record(4).dynamodb!.SequenceNumber,
      closedUntil: iso(T0 + 10_000),
    });
  });

  it('ends a window by the clock only once everything written before is read, with what is in hand', () => {
    const shard = windowed({ batchingWindowMs: 5_000 });
    shard.take([record(1)], all, T0 + 8_000);
    expect(shard.next(T0 + 10_500)).toBeUndefined();
    shard.take([], all, T0 + 10_600);
    const final = shard.next(T0 + 10_600)!;
    expect(final).toMatchObject({ final: true, window: { start: T0 } });
    expect(keys(final.records)).toEqual([1]);
  });

  it('puts a record read after its window was closed into the next window, never reopening it', () => {
    const shard = windowed();
    shard.take([record(1)], all, T0 + 1_000);
    shard.settle(shard.next(T0 + 1_000)!, { ok: true, state: { n: 1 } }, T0 + 1_000);
    shard.take([], all, T0 + 10_000);
    const final = shard.next(T0 + 10_000)!;
    expect(final).toMatchObject({ final: true, records: [], state: { n: 1 } });
    shard.settle(final, { ok: true, state: {} }, T0 + 10_000);
    // Created at 13:15:09.9 (its minute says 13:15), but read once that window is over.
    shard.take([record(2, T0 + 9_900)], all, T0 + 9_950);
    const late = shard.next(T0 + 10_100)!;
    expect(late.window).toEqual({ start: T0 + 10_000, end: T0 + 20_000 });
    expect(late.state).toEqual({});
  });

  it('keeps the previous state after a failure and hands the records again from the failed one', () => {
    const shard = windowed({ batchSize: 3 });
    shard.take([record(1)], all, T0);
    shard.settle(shard.next(T0)!, { ok: true, state: { n: 1 } }, T0);
    shard.take([record(2), record(3), record(4)], all, T0 + 100);
    const failing = shard.next(T0 + 100)!;
    shard.settle(failing, { ok: false, failedAt: 1 }, T0 + 100);
    const retry = shard.next(T0 + 600)!;
    expect(retry).toMatchObject({ window: failing.window, state: { n: 1 }, final: false });
    expect(keys(retry.records)).toEqual([3, 4]);
    expect(shard.toCheckpoint()).toMatchObject({
      sequence: record(2).dynamodb!.SequenceNumber,
      window: { start: iso(T0), state: { n: 1 } },
    });
  });

  it('hands a failed final invocation over again as it was, after a pause and after a restart', () => {
    // The counting consumer writes a final invocation's records one by one; a retry that summed
    // them again instead (an ordinary invocation, or one with a record read later) would count
    // some of them twice or park them ("a mark inside a run").
    const shard = windowed();
    shard.take([record(1), record(2)], all, T0 + 9_000);
    shard.take([], all, T0 + 10_000);
    const final = shard.next(T0 + 10_000)!;
    expect(final).toMatchObject({ final: true, window: { start: T0 } });
    expect(shard.handing(final)).toBe(true);
    shard.settle(final, { ok: false, failedAt: 0 }, T0 + 10_000);
    // Read since: no longer caught up (its own writes), and a record created in the window.
    shard.take([record(3, T0 + 9_990)], all, T0 + 10_200);
    const again = shard.next(T0 + 10_500)!;
    expect(again).toMatchObject({ final: true, window: { start: T0 } });
    expect(keys(again.records)).toEqual([1, 2]);
    expect(shard.handing(again)).toBe(false);
    const saved = shard.toCheckpoint();
    expect(saved.window?.closing).toBe(record(2).dynamodb!.SequenceNumber);

    // A new process reads records 1 to 3 again: 1 and 2 are the final invocation, 3 the next window's.
    const restarted = new Shard('shard-1', SETTINGS, saved);
    restarted.take([record(1), record(2), record(3, T0 + 9_990)], all, T0 + 12_000);
    const retried = restarted.next(T0 + 12_000)!;
    expect(retried).toMatchObject({ final: true, window: { start: T0 } });
    expect(keys(retried.records)).toEqual([1, 2]);
    restarted.settle(retried, { ok: true, state: {} }, T0 + 12_000);
    const next = restarted.next(T0 + 12_000)!;
    expect(next).toMatchObject({ final: false, window: { start: T0 + 10_000 }, state: {} });
    expect(keys(next.records)).toEqual([3]);
  });

  it('keeps a final invocation without records final, and a restart starts the next window after it', () => {
    const shard = windowed();
    shard.take([record(1)], all, T0 + 1_000);
    shard.settle(shard.next(T0 + 1_000)!, { ok: true, state: { n: 1 } }, T0 + 1_000);
    shard.take([], all, T0 + 10_000);
    const final = shard.next(T0 + 10_000)!;
    expect(final).toMatchObject({ final: true, records: [], state: { n: 1 } });
    shard.handing(final);
    const restarted = new Shard('shard-1', SETTINGS, shard.toCheckpoint());
    restarted.take([record(2, T0 + 9_990)], all, T0 + 10_300);
    const retried = restarted.next(T0 + 10_300)!;
    expect(retried).toMatchObject({ final: true, records: [], state: { n: 1 }, window: { start: T0 } });
  });

  it('ends a window early when its state passes 1 MB, then goes on in the same window with {}', () => {
    const shard = windowed();
    shard.take([record(1)], all, T0);
    const big = { blob: 'x'.repeat(MAX_STATE_BYTES) };
    shard.settle(shard.next(T0)!, { ok: true, state: big }, T0);
    shard.take([record(2)], all, T0 + 100);
    const early = shard.next(T0 + 100)!;
    expect(early).toMatchObject({ final: true, endsEarly: true, records: [], state: big });
    expect(shard.toCheckpoint().window?.endsEarly).toBe(true);
    shard.settle(early, { ok: true, state: {} }, T0 + 100);
    const after = shard.next(T0 + 100)!;
    expect(after).toMatchObject({ window: early.window, state: {}, final: false, endsEarly: false });
    expect(keys(after.records)).toEqual([2]);
  });

  it('resumes from its checkpoint with the window and the state saved with it', () => {
    const shard = windowed();
    shard.take([record(1), record(2)], all, T0);
    shard.settle(shard.next(T0)!, { ok: true, state: { n: 2 } }, T0);
    shard.take([record(3)], all, T0 + 100);
    const saved = shard.toCheckpoint();
    expect(saved).toEqual({
      sequence: record(2).dynamodb!.SequenceNumber,
      window: { start: iso(T0), end: iso(T0 + 10_000), state: { n: 2 } },
    });
    // A new process knows the checkpoint only, and reads record 3 again.
    const soon = new Shard('shard-1', SETTINGS, saved);
    soon.take([record(3)], all, T0 + 3_000);
    const next = soon.next(T0 + 3_000)!;
    expect(next).toMatchObject({ window: { start: T0 }, state: { n: 2 }, final: false });
    expect(keys(next.records)).toEqual([3]);
    // Restarted after the window's end: the window ends with its state, then the next begins.
    const late = new Shard('shard-1', SETTINGS, saved);
    late.take([record(3)], all, T0 + 30_000);
    const final = late.next(T0 + 30_000)!;
    expect(final).toMatchObject({ window: { start: T0 }, state: { n: 2 }, final: true, records: [] });
    late.settle(final, { ok: true, state: {} }, T0 + 30_000);
    expect(late.next(T0 + 30_000)).toMatchObject({ window: { start: T0 + 30_000 }, state: {} });
  });
});

describe('the checkpoint file', () => {
  it('reads the format before tumbling windows (a sequence number per shard) and writes format 2', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stream-checkpoint-'));
    try {
      const file = join(dir, 'stream-checkpoint.json');
      writeFileSync(
        file,
        JSON.stringify({ streamArn: 'arn:s', shards: { 'shard-1': '000000000000000000007' } }),
      );
      const old = readCheckpoint(file);
      expect(old).toEqual({
        streamArn: 'arn:s',
        shards: { 'shard-1': { sequence: '000000000000000000007' } },
      });
      writeCheckpoint(file, old);
      expect(readCheckpoint(file)).toEqual(old);
      writeFileSync(file, '{"streamArn": "arn:s", "shards": {'); // torn: start again from the stream's start
      expect(readCheckpoint(file)).toEqual({ streamArn: '', shards: {} });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
