/**
 * One shard as an event source mapping keeps it, without the I/O: the records in hand, the
 * checkpoint, and with a tumbling window the window in progress and its state. The poller
 * (`stream-poller.ts`) feeds it what it reads, asks it for the next invocation, and tells it how
 * that went; the rules of `lib/queues/stream-batch.ts` are kept here.
 *
 * Records stay in hand (`pending`) from the moment they are read until an invocation acknowledges
 * them, so a failed batch is handed over again from its first failed record without reading the
 * stream again, whatever the stream does meanwhile, and the checkpoint never passes a record
 * before it is acknowledged.
 */
import type { DynamoDBRecord } from 'aws-lambda';
import type { WindowState } from '../queues/stream-batch.ts';
import type { ShardCheckpoint } from './stream-checkpoint.ts';
import { creationTimeMs } from './stream-records.ts';

/** Lambda's limit on a window's state; past it the window ends early. */
export const MAX_STATE_BYTES = 1024 * 1024;

export interface ShardSettings {
  batchSize: number;
  batchingWindowMs: number;
  /** The tumbling window's length; none when undefined. */
  windowMs?: number;
  /** The pause before a failed batch is handed over again. */
  retryPauseMs: number;
}

interface Bounds {
  start: number;
  end: number;
}

interface OpenWindow extends Bounds {
  state: WindowState;
  /** The state outgrew `MAX_STATE_BYTES`: the next invocation is the early final one. */
  endsEarly?: true;
  /**
   * Its final invocation was handed over, through this record ('' for one without records): the
   * window is closing, and every retry is that final invocation again, with no record after it.
   */
  closing?: string;
}

interface InHand {
  record: DynamoDBRecord;
  readAt: number;
  window?: Bounds;
}

export interface Invocation {
  records: DynamoDBRecord[];
  window?: Bounds;
  state?: WindowState;
  final: boolean;
  endsEarly: boolean;
}

/** Success (with the state returned, for a mapping with a window), or failure from a record on. */
export type Outcome = { ok: true; state?: WindowState } | { ok: false; failedAt: number };

const sequenceOf = (record: DynamoDBRecord) => record.dynamodb?.SequenceNumber ?? '';
/** Whether sequence number `a` comes after `b` (decimal strings of any width). */
const isAfter = (a: string, b: string) => BigInt(a) > BigInt(b);

export class Shard {
  /** Where to read from next; undefined: get a new iterator after `readUpTo`. */
  iterator?: string;
  /** The last record read: handed over, in hand or filtered out. */
  readUpTo?: string;
  /** The checkpoint: every record up to it is done. */
  acknowledged?: string;
  /** Read to its end: a closed shard, dropped once nothing of it is left to hand over. */
  ended = false;
  /** The last read returned nothing: what was written before it is in hand. */
  caughtUp = false;
  /** After a failed read: no read of this shard before then. */
  nextReadAt = 0;
  private pending: InHand[] = [];
  private retryAt?: number;
  private window?: OpenWindow;
  /** The end of the last window closed: a record read later goes into no window before it. */
  private closedUntil?: number;
  /** The window of the last record read: the next one goes into no earlier window. */
  private lastWindow?: Bounds;

  constructor(
    readonly id: string,
    private readonly settings: ShardSettings,
    saved: ShardCheckpoint = {},
  ) {
    this.acknowledged = saved.sequence;
    if (saved.closedUntil) this.closedUntil = Date.parse(saved.closedUntil);
    if (settings.windowMs && saved.window) {
      const { start, end, state, endsEarly, closing } = saved.window;
      this.window = {
        start: Date.parse(start),
        end: Date.parse(end),
        state,
        ...(endsEarly ? { endsEarly } : {}),
      };
      this.lastWindow = { start: this.window.start, end: this.window.end };
      if (closing !== undefined) this.close(closing);
    }
  }

  /** Room for this many more records in hand. */
  get room(): number {
    return this.settings.batchSize - this.pending.length;
  }

  /** Nothing in hand and no window open: a shard read to its end can be dropped. */
  get drained(): boolean {
    return this.pending.length === 0 && !this.window;
  }

  /**
   * Takes what a read returned, in stream order; those `matches` refuses count as done. Returns
   * whether the checkpoint moved (only filtered-out records were read, nothing being in hand).
   */
  take(
    records: readonly DynamoDBRecord[],
    matches: (record: DynamoDBRecord) => boolean,
    now: number,
  ): boolean {
    this.caughtUp = records.length === 0;
    for (const record of records) {
      this.readUpTo = sequenceOf(record);
      if (!matches(record)) continue;
      const window = this.settings.windowMs ? this.windowFor(record, now) : undefined;
      this.pending.push({ record, readAt: now, ...(window ? { window } : {}) });
    }
    if (records.length === 0 || this.pending.length > 0) return false;
    this.acknowledged = this.readUpTo;
    return true;
  }

  /** The invocation due now, if any. */
  next(now: number): Invocation | undefined {
    if (this.retryAt !== undefined && now < this.retryAt) return undefined;
    const { batchSize, batchingWindowMs } = this.settings;
    const window = this.window ?? this.pending[0]?.window;
    let count = 0;
    while (count < Math.min(batchSize, this.pending.length)) {
      if (window && this.pending[count]!.window!.start !== window.start) break;
      count++;
    }
    const records = this.pending.slice(0, count).map((p) => p.record);
    const invocation = (final: boolean, endsEarly = false): Invocation => ({
      records,
      ...(window
        ? { window: { start: window.start, end: window.end }, state: this.window?.state ?? {} }
        : {}),
      final,
      endsEarly,
    });
    if (window) {
      if (this.window?.endsEarly) return { ...invocation(true, true), records: [] };
      // Handed over as final once: final again, whatever was read since (see `closing`).
      if (this.window?.closing !== undefined) return invocation(true);
      const allOfIt = count === this.pending.length;
      const over =
        (count < this.pending.length && this.pending[count]!.window!.start !== window.start) ||
        (allOfIt && (this.ended || (now >= window.end && this.caughtUp)));
      if (over) return invocation(true);
    }
    if (count === 0) return undefined;
    const due =
      this.retryAt !== undefined ||
      count >= batchSize ||
      this.ended ||
      now - this.pending[0]!.readAt >= batchingWindowMs;
    return due ? invocation(false) : undefined;
  }

  /**
   * Called as `invocation` is handed over; whether the checkpoint changed (the poller saves it
   * before the handler runs). A final one closes its window from then on: a retry, after a failure
   * or after a restart, is the same final invocation, and a record of the window read later goes
   * into the next one. Were a retry an ordinary invocation instead (the poller no longer caught up
   * once its own writes are read, or a record read late joining it after a restart), a consumer
   * that wrote the final invocation's records one by one would sum some of them again, into a run
   * that its high-water marks already cut (`lib/db/counted-update.ts`: "a mark inside a run"),
   * and park those counts.
   */
  handing(invocation: Invocation): boolean {
    if (!invocation.final || invocation.endsEarly || !invocation.window) return false;
    this.window ??= { ...invocation.window, state: invocation.state ?? {} };
    if (this.window.closing !== undefined) return false;
    this.close(sequenceOf(invocation.records.at(-1) ?? {}));
    return true;
  }

  /** Records how `invocation` went. */
  settle(invocation: Invocation, outcome: Outcome, now: number): void {
    const done = outcome.ok ? invocation.records.length : outcome.failedAt;
    this.pending.splice(0, done);
    if (outcome.ok && this.pending.length === 0 && this.readUpTo) this.acknowledged = this.readUpTo;
    else if (done > 0) this.acknowledged = sequenceOf(invocation.records[done - 1]!);
    this.retryAt = outcome.ok ? undefined : now + this.settings.retryPauseMs;
    const window = invocation.window;
    if (!window) return;
    if (!outcome.ok) {
      // Records before the failure are done in this window, whose state stays as it was.
      if (done > 0 && !this.window) this.window = { ...window, state: {} };
      return;
    }
    if (invocation.endsEarly) {
      this.window = { ...window, state: {} };
    } else if (invocation.final) {
      this.window = undefined;
      this.closeBehind(window);
    } else {
      const state = outcome.state ?? {};
      const tooBig = Buffer.byteLength(JSON.stringify(state)) > MAX_STATE_BYTES;
      this.window = { ...window, state, ...(tooBig ? { endsEarly: true as const } : {}) };
    }
  }

  toCheckpoint(): ShardCheckpoint {
    const iso = (ms: number) => new Date(ms).toISOString();
    const w = this.window;
    return {
      ...(this.acknowledged ? { sequence: this.acknowledged } : {}),
      ...(w
        ? {
            window: {
              start: iso(w.start),
              end: iso(w.end),
              state: w.state,
              ...(w.endsEarly ? { endsEarly: true } : {}),
              ...(w.closing !== undefined ? { closing: w.closing } : {}),
            },
          }
        : {}),
      ...(this.closedUntil !== undefined ? { closedUntil: iso(this.closedUntil) } : {}),
    };
  }

  /** The open window closes through `last`: no record read from now on but those up to it goes into it. */
  private close(last: string): void {
    const w = this.window!;
    w.closing = last;
    this.closeBehind(w);
  }

  /** No record read from now on goes into `window` by its time, nor into any window before it. */
  private closeBehind(window: Bounds): void {
    this.closedUntil = Math.max(this.closedUntil ?? window.end, window.end);
    if (this.lastWindow?.start === window.start) this.lastWindow = undefined;
  }

  /** A record's window: the closing one's up to its last record (read again after a restart), or by its time. */
  private windowFor(record: DynamoDBRecord, now: number): Bounds {
    const w = this.window;
    const seq = sequenceOf(record);
    if (w?.closing !== undefined && w.closing !== '' && !isAfter(seq, w.closing))
      return { start: w.start, end: w.end };
    return this.windowOf(creationTimeMs(record, now));
  }

  /**
   * The window of a record created at `at`: aligned to multiples of its length since the epoch,
   * and never before the window of the record read before it nor a window already closed, so a
   * window that is over is not opened again by a record read late.
   */
  private windowOf(at: number): Bounds {
    const last = this.lastWindow;
    if (last && at < last.end) return last;
    const length = this.settings.windowMs!;
    const start = Math.floor(Math.max(at, this.closedUntil ?? at) / length) * length;
    this.lastWindow = { start, end: start + length };
    return this.lastWindow;
  }
}
