/**
 * The local queue's journal: what makes the in-memory queue of `local-aws-sqs` survive a restart.
 * `queue-proxy.ts` records here every message it accepts and every receive, visibility change and
 * delete it passed on, and answers the caller only once the record is on disk; on start the
 * journal's live messages are sent again to the fresh queue.
 *
 * The file is JSON lines, appended with a synchronous write (so a `kill -9` right after the write
 * cannot lose it, and records keep the order of the calls) and flushed with one `fdatasync` for
 * every caller waiting at that moment (group commit: a burst of sends costs one flush, not one
 * each). It is rewritten with only the live messages when it is opened, and when it has grown
 * past `COMPACT_BYTES`, so it stays about the size of the backlog.
 *
 * Hand-written rather than a database: nothing embeddable is available without a native build on
 * Node 20 (`node:sqlite` needs 22.5), and a queue's journal needs only append, flush and fold.
 */
import { closeSync, existsSync, fdatasync, openSync, readFileSync, writeSync } from 'node:fs';
import { writeFileAtomic } from './files.ts';

export interface JournalMessage {
  /** The MessageId the message got when it was first sent; kept across restarts. */
  id: string;
  queue: string;
  body: string;
  /** `MessageAttributes` and `MessageSystemAttributes` as sent (JSON protocol shapes). */
  attributes?: Record<string, unknown>;
  systemAttributes?: Record<string, unknown>;
  /** A FIFO queue's group and deduplication ids, as sent. */
  groupId?: string;
  deduplicationId?: string;
  sentAt: number;
  /**
   * When the message may next be received (epoch ms): its send delay, or the visibility a consumer
   * set. 0 while a consumer holds it: a restart ends every consumer, so it is visible at once then.
   */
  visibleAt: number;
  receives: number;
  firstReceiveAt?: number;
}

type Record_ =
  | { op: 'put'; m: JournalMessage }
  | { op: 'recv'; id: string; n: number; at: number; q: string }
  | { op: 'vis'; id: string; at: number }
  | { op: 'del'; id: string }
  | { op: 'purge'; q: string };

/** Rewrite the file once it holds this much more than when it was last compacted. */
const COMPACT_BYTES = 64 * 1024 * 1024;

export class QueueJournal {
  private readonly messages = new Map<string, JournalMessage>();
  private fd: number | undefined;
  private written = 0;
  private synced = 0;
  private syncing: Promise<void> | undefined;
  private bytesSinceCompaction = 0;
  private readonly skipped: number;

  /** Read (and compact) the journal at `file`; without a file it only keeps the state in memory. */
  constructor(private readonly file?: string) {
    this.skipped = file && existsSync(file) ? this.load(readFileSync(file, 'utf8')) : 0;
    if (file) this.compact();
  }

  /** Lines that could not be read at start: at most a record cut short by a crash mid-write. */
  get unreadableLines(): number {
    return this.skipped;
  }

  get size(): number {
    return this.messages.size;
  }

  get(id: string): JournalMessage | undefined {
    return this.messages.get(id);
  }

  live(): JournalMessage[] {
    return [...this.messages.values()];
  }

  put(message: JournalMessage): void {
    this.record({ op: 'put', m: message });
  }

  received(id: string, receives: number, at: number, queue: string): void {
    if (this.messages.has(id)) this.record({ op: 'recv', id, n: receives, at, q: queue });
  }

  visible(id: string, at: number): void {
    if (this.messages.has(id)) this.record({ op: 'vis', id, at });
  }

  deleted(id: string): void {
    if (this.messages.has(id)) this.record({ op: 'del', id });
  }

  purged(queue: string): void {
    this.record({ op: 'purge', q: queue });
  }

  /** Resolves once every record made so far is on disk. */
  async durable(): Promise<void> {
    const target = this.written;
    while (this.fd !== undefined && this.synced < target) {
      if (!this.syncing) {
        const upTo = this.written;
        const fd = this.fd;
        this.syncing = new Promise<void>((resolve, reject) =>
          fdatasync(fd, (err) => (err ? reject(err) : resolve())),
        )
          .then(() => {
            this.synced = Math.max(this.synced, upTo);
            // Here no flush is in flight on the old descriptor, so it can be swapped.
            if (this.bytesSinceCompaction > COMPACT_BYTES) this.compact();
          })
          .finally(() => {
            this.syncing = undefined;
          });
      }
      await this.syncing;
    }
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd); // every record was written synchronously; closing loses none
    this.fd = undefined;
  }

  private record(entry: Record_): void {
    apply(this.messages, entry);
    if (this.fd === undefined) return;
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    for (let at = 0; at < line.length; ) at += writeSync(this.fd, line, at);
    this.bytesSinceCompaction += line.length;
    this.written++;
  }

  private load(text: string): number {
    let skipped = 0;
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      let entry: Record_;
      try {
        entry = JSON.parse(line) as Record_;
      } catch {
        skipped++;
        continue;
      }
      apply(this.messages, entry);
    }
    return skipped;
  }

  /** Replace the file by one `put` per live message, then append to that file. */
  private compact(): void {
    const file = this.file as string;
    const lines = [...this.messages.values()].map((m) => `${JSON.stringify({ op: 'put', m })}\n`);
    writeFileAtomic(file, lines.join(''));
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = openSync(file, 'a', 0o600);
    this.bytesSinceCompaction = 0;
    this.synced = this.written;
  }
}

function apply(messages: Map<string, JournalMessage>, entry: Record_): void {
  switch (entry.op) {
    case 'put':
      messages.set(entry.m.id, { ...entry.m });
      return;
    case 'recv': {
      const m = messages.get(entry.id);
      if (!m) return;
      m.receives = entry.n;
      m.firstReceiveAt ??= entry.at;
      m.visibleAt = 0;
      m.queue = entry.q; // a redrive may have moved it to its dead-letter queue
      return;
    }
    case 'vis': {
      const m = messages.get(entry.id);
      if (m) m.visibleAt = entry.at;
      return;
    }
    case 'del':
      messages.delete(entry.id);
      return;
    case 'purge':
      for (const [id, m] of messages) if (m.queue === entry.q) messages.delete(id);
      return;
  }
}
