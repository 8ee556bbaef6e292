/**
 * The local stack's SQS endpoint: a proxy in front of `local-aws-sqs` that keeps the queues'
 * contents in a journal (`queue-journal.ts`), so a restart on the same DATA_DIR loses no message.
 * `local-aws-sqs` keeps doing what SQS does (visibility, delays, batches, validation, errors); it
 * holds its queues in memory only and exposes no state, hence this layer. No SQS emulator that
 * persists its queues is installable here (ElasticMQ's npm package predates the JSON protocol).
 *
 * It speaks SQS's JSON protocol (`x-amz-target: AmazonSQS.<Operation>`), the one AWS SDK v3 and
 * AWS CLI v2 use; the older Query protocol is refused, as its writes would bypass the journal.
 * Every operation is passed on unchanged; these are also recorded, and their caller is answered
 * only once the record is on disk:
 * - SendMessage(Batch): the message, under the MessageId the queue gave it, which it keeps for
 *   life (a message sent again after a restart gets a new id inside the queue; the proxy answers
 *   with the first one);
 * - ReceiveMessage: one more receive, and the message is held by a consumer (visible at once
 *   after a restart, since a restart ends every consumer). `ApproximateReceiveCount` is the
 *   journal's count: receives since the message was first sent, across restarts, and never the
 *   visibility changes `local-aws-sqs` also counts. The delivery handler uses it as the attempt
 *   number, so a restart neither repeats nor restarts an event's retry schedule;
 * - ChangeMessageVisibility(Batch): when the message may next be received (a webhook's retry);
 * - DeleteMessage(Batch), PurgeQueue, DeleteQueue: the message is gone.
 *
 * On start (`restore`) every live message is sent again, with the rest of its delay. SQS caps a
 * send's delay at 15 minutes: a message due later (a retry hours away) is hidden again with
 * ChangeMessageVisibility when the queue hands it out early, and the receive does not count.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { QueueJournal } from './queue-journal.ts';

const JSON_PROTOCOL = 'application/x-amz-json-1.0';
const MAX_DELAY_SECONDS = 900;
const MAX_VISIBILITY_SECONDS = 12 * 3600;
/** A message handed out less than this before its journal time is taken as due (clock jitter). */
const EARLY_TOLERANCE_MS = 1000;
const DEFAULT_RETENTION_SECONDS = 4 * 24 * 3600;
const RESTORE_PARALLEL = 16;
/** SQS's longest long poll. */
const MAX_WAIT_SECONDS = 20;
/**
 * How often a waiting long poll looks again without being woken: a message whose visibility
 * timeout runs out (a receiver that never deleted it) becomes visible with no call that says so.
 */
const RECHECK_MS = 1000;

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

type Input = Record<string, unknown>;
/** An operation's handling: `forward` passes the request on, with another input when given one. */
type Operation = (
  input: Input,
  forward: (replaced?: Input) => Promise<Answer>,
  /** Aborted when the caller hangs up (a poller stopping during a long poll). */
  signal: AbortSignal,
) => Promise<Answer>;

interface SqsMessage {
  MessageId: string;
  ReceiptHandle: string;
  Attributes?: Record<string, string>;
}

interface QueueInfo {
  url: string;
  delaySeconds: number;
  retentionSeconds: number;
}

export interface InnerQueue {
  endpoint: string;
  close(): Promise<void>;
}

export interface QueueProxy {
  endpoint: string;
  /** Send the journal's live messages to the fresh queue; the queues must exist already. */
  restore(): Promise<{ restored: number; expired: number; withoutQueue: number }>;
  /** Long polls waiting on the queue named `queue` right now (for tests to wait on, not the clock). */
  longPollsWaiting(queue: string): number;
  stop(): Promise<void>;
}

/** The queue's name: the last segment of its URL. */
export const queueNameOf = (url: unknown): string =>
  typeof url === 'string' ? url.slice(url.lastIndexOf('/') + 1) : '';

/**
 * Listen on `host` (a free port), then start the queue behind the proxy with `startInner`, which
 * is given the proxy's port so the queue URLs it hands out lead callers back to the proxy.
 */
export async function startQueueProxy(options: {
  journal: QueueJournal;
  host: string;
  startInner: (proxyPort: number) => Promise<InnerQueue>;
  /** SQS's ceiling for a send's delay; lowered by tests to see a long delay restored. */
  maxDelaySeconds?: number;
  /**
   * Tests only: a pause after a long poll's ask of the queue, the window in which a message sent
   * meanwhile must still wake the poll at once.
   */
  askPauseMs?: number;
}): Promise<QueueProxy> {
  const { journal } = options;
  const maxDelaySeconds = options.maxDelaySeconds ?? MAX_DELAY_SECONDS;
  /** The queue's current MessageId of each journal id, and back; receipt handles to journal ids. */
  const byLocalId = new Map<string, string>();
  const localIdOf = new Map<string, string>();
  const handlesOf = new Map<string, Set<string>>();
  const byHandle = new Map<string, string>();
  /** Sends passed on whose answer is not recorded yet: a receive may return their message first. */
  const pendingSends = new Set<Promise<unknown>>();
  const queues = new Map<string, QueueInfo>();
  let inner: InnerQueue | undefined;

  const call = async (operation: string, input: Input): Promise<Record<string, unknown>> => {
    const res = await fetch(`${inner!.endpoint}/`, {
      method: 'POST',
      headers: { 'content-type': JSON_PROTOCOL, 'x-amz-target': `AmazonSQS.${operation}` },
      body: JSON.stringify(input),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${operation}: HTTP ${res.status} ${text.slice(0, 200)}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };

  const queueInfo = async (name: string): Promise<QueueInfo | undefined> => {
    const known = queues.get(name);
    if (known) return known;
    try {
      const { QueueUrl } = (await call('GetQueueUrl', { QueueName: name })) as { QueueUrl: string };
      const { Attributes = {} } = (await call('GetQueueAttributes', {
        QueueUrl,
        AttributeNames: ['DelaySeconds', 'MessageRetentionPeriod'],
      })) as { Attributes?: Record<string, string> };
      const info = {
        url: QueueUrl,
        delaySeconds: Number(Attributes.DelaySeconds ?? 0) || 0,
        retentionSeconds: Number(Attributes.MessageRetentionPeriod) || DEFAULT_RETENTION_SECONDS,
      };
      queues.set(name, info);
      return info;
    } catch {
      return undefined;
    }
  };

  const link = (id: string, localId: string) => {
    byLocalId.set(localId, id);
    localIdOf.set(id, localId);
  };

  const drop = (id: string) => {
    const localId = localIdOf.get(id);
    if (localId !== undefined) byLocalId.delete(localId);
    localIdOf.delete(id);
    for (const handle of handlesOf.get(id) ?? []) byHandle.delete(handle);
    handlesOf.delete(id);
  };
  const forget = (id: string) => {
    journal.deleted(id);
    drop(id);
  };

  /** Record a message the queue accepted under `messageId`. */
  const accepted = (queue: string, info: QueueInfo | undefined, entry: Input, messageId: string) => {
    const sentAt = Date.now();
    const delay = typeof entry.DelaySeconds === 'number' ? entry.DelaySeconds : (info?.delaySeconds ?? 0);
    journal.put({
      id: messageId,
      queue,
      body: String(entry.MessageBody ?? ''),
      ...(entry.MessageAttributes ? { attributes: entry.MessageAttributes as Record<string, unknown> } : {}),
      ...(entry.MessageSystemAttributes
        ? { systemAttributes: entry.MessageSystemAttributes as Record<string, unknown> }
        : {}),
      ...(typeof entry.MessageGroupId === 'string' ? { groupId: entry.MessageGroupId } : {}),
      ...(typeof entry.MessageDeduplicationId === 'string'
        ? { deduplicationId: entry.MessageDeduplicationId }
        : {}),
      sentAt,
      visibleAt: sentAt + delay * 1000,
      receives: 0,
    });
    link(messageId, messageId);
    ring(queue);
  };

  /**
   * Long polls waiting on each queue (by name). `local-aws-sqs` 2.0.2 answers a long poll only
   * once `MaxNumberOfMessages` arrive or its whole `WaitTimeSeconds` has passed, so a receiver that
   * wants its messages at once had to poll many times a second (an idle local stack spent a fifth
   * of a core on it). This layer gives SQS's behaviour instead: it asks the queue with
   * `WaitTimeSeconds: 0`, and when that is empty it waits until a message is sent to the queue or
   * made visible through it, the next delay it knows of runs out, or `RECHECK_MS` passes, and asks again.
   */
  const bells = new Map<string, Set<() => void>>();
  /**
   * Rings per queue so far: a long poll reads it before asking the queue and waits only if no
   * ring came meanwhile. Without it, a message sent while the ask was on its way (found empty)
   * rang before the poll waited, and the poll slept on until its next look (a first attempt
   * started 1.1 s late in the webhook isolation test).
   */
  const rings = new Map<string, number>();
  const ring = (queue: string) => {
    rings.set(queue, (rings.get(queue) ?? 0) + 1);
    const waiting = bells.get(queue);
    if (!waiting) return;
    bells.delete(queue);
    for (const wake of waiting) wake();
  };
  /** Wait for `queue`'s bell, at most until `until`, or until `signal` aborts. */
  const bell = (queue: string, until: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const waiting = bells.get(queue) ?? new Set<() => void>();
      bells.set(queue, waiting);
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, until - Date.now()));
      signal.addEventListener('abort', done);
      waiting.add(done);
    });
  /** When a message of `queue` the journal holds back (a delay, a retry's visibility) is next due. */
  const nextDue = (queue: string, now: number): number => {
    let next = Number.POSITIVE_INFINITY;
    for (const m of journal.live())
      if (m.queue === queue && m.visibleAt > now) next = Math.min(next, m.visibleAt);
    return next;
  };

  const tracked = <T>(promise: Promise<T>): Promise<T> => {
    pendingSends.add(promise);
    void promise.finally(() => pendingSends.delete(promise)).catch(() => undefined);
    return promise;
  };

  const ok = (answer: Answer) => answer.status >= 200 && answer.status < 300;
  const parsed = <T>(answer: Answer) => JSON.parse(answer.text || '{}') as T;
  const entriesById = (input: Input) =>
    new Map(((input.Entries as Input[] | undefined) ?? []).map((e) => [String(e.Id), e]));

  const changedVisibility = (handle: unknown, seconds: unknown) => {
    const id = byHandle.get(String(handle));
    if (id === undefined) return;
    journal.visible(id, Date.now() + Number(seconds) * 1000);
    // A message made visible again (or sooner) may be what a long poll waits for.
    const queue = journal.get(id)?.queue;
    if (queue !== undefined) ring(queue);
  };

  /**
   * A receive's answer as the caller gets it (ids, counts and times from the journal, early
   * messages hidden again), and how many messages it hands out.
   */
  const handOut = async (input: Input, answer: Answer): Promise<{ answer: Answer; handed: number }> => {
    if (!ok(answer)) return { answer, handed: 0 };
    const out = parsed<{ Messages?: SqsMessage[] }>(answer);
    const messages = out.Messages ?? [];
    if (messages.length === 0) return { answer, handed: 0 };
    if (messages.some((m) => !byLocalId.has(m.MessageId))) await Promise.allSettled([...pendingSends]);
    const queue = queueNameOf(input.QueueUrl);
    const now = Date.now();
    const handedOut: SqsMessage[] = [];
    for (const m of messages) {
      const id = byLocalId.get(m.MessageId);
      const stored = id === undefined ? undefined : journal.get(id);
      if (id === undefined || !stored) {
        handedOut.push(m); // not sent through this proxy: nothing to keep
        continue;
      }
      if (stored.visibleAt - now > EARLY_TOLERANCE_MS) {
        const seconds = Math.min(MAX_VISIBILITY_SECONDS, Math.ceil((stored.visibleAt - now) / 1000));
        await call('ChangeMessageVisibility', {
          QueueUrl: input.QueueUrl,
          ReceiptHandle: m.ReceiptHandle,
          VisibilityTimeout: seconds,
        }).catch(() => undefined); // else it comes back after the receive's timeout, and again here
        continue;
      }
      journal.received(id, stored.receives + 1, now, queue);
      byHandle.set(m.ReceiptHandle, id);
      handlesOf.set(id, (handlesOf.get(id) ?? new Set()).add(m.ReceiptHandle));
      m.MessageId = id;
      const attributes = m.Attributes;
      if (attributes) {
        if ('ApproximateReceiveCount' in attributes)
          attributes.ApproximateReceiveCount = String(stored.receives);
        if ('SentTimestamp' in attributes) attributes.SentTimestamp = String(stored.sentAt);
        if ('ApproximateFirstReceiveTimestamp' in attributes)
          attributes.ApproximateFirstReceiveTimestamp = String(stored.firstReceiveAt ?? now);
      }
      handedOut.push(m);
    }
    out.Messages = handedOut;
    return { answer: { ...answer, text: JSON.stringify(out) }, handed: handedOut.length };
  };

  const operations: Record<string, Operation> = {
    SendMessage: async (input, forward) => {
      const queue = queueNameOf(input.QueueUrl);
      const info = await queueInfo(queue);
      return tracked(
        forward().then((answer) => {
          if (ok(answer)) accepted(queue, info, input, parsed<{ MessageId: string }>(answer).MessageId);
          return answer;
        }),
      );
    },
    SendMessageBatch: async (input, forward) => {
      const queue = queueNameOf(input.QueueUrl);
      const info = await queueInfo(queue);
      const entries = entriesById(input);
      return tracked(
        forward().then((answer) => {
          if (!ok(answer)) return answer;
          const { Successful = [] } = parsed<{ Successful?: Array<{ Id: string; MessageId: string }> }>(
            answer,
          );
          for (const s of Successful) accepted(queue, info, entries.get(s.Id) ?? {}, s.MessageId);
          return answer;
        }),
      );
    },
    ReceiveMessage: async (input, forward, signal) => {
      const wait = Math.min(MAX_WAIT_SECONDS, Math.max(0, Number(input.WaitTimeSeconds) || 0));
      if (wait === 0) return (await handOut(input, await forward())).answer;
      const queue = queueNameOf(input.QueueUrl);
      const deadline = Date.now() + wait * 1000;
      const once = { ...input, WaitTimeSeconds: 0 };
      for (;;) {
        const rung = rings.get(queue) ?? 0;
        const { answer, handed } = await handOut(input, await forward(once));
        if (options.askPauseMs) await new Promise((r) => setTimeout(r, options.askPauseMs));
        const now = Date.now();
        if (!ok(answer) || handed > 0 || signal.aborted || now >= deadline) return answer;
        // A ring while the queue was being asked: ask again at once.
        if ((rings.get(queue) ?? 0) === rung)
          await bell(queue, Math.min(deadline, now + RECHECK_MS, nextDue(queue, now)), signal);
        if (signal.aborted) return answer;
      }
    },
    ChangeMessageVisibility: async (input, forward) => {
      const answer = await forward();
      if (ok(answer)) changedVisibility(input.ReceiptHandle, input.VisibilityTimeout);
      return answer;
    },
    ChangeMessageVisibilityBatch: async (input, forward) => {
      const answer = await forward();
      if (!ok(answer)) return answer;
      const entries = entriesById(input);
      for (const s of parsed<{ Successful?: Array<{ Id: string }> }>(answer).Successful ?? []) {
        const entry = entries.get(s.Id);
        if (entry) changedVisibility(entry.ReceiptHandle, entry.VisibilityTimeout);
      }
      return answer;
    },
    // `local-aws-sqs` deletes the message for any of its receipt handles, the latest or not.
    DeleteMessage: async (input, forward) => {
      const answer = await forward();
      const id = byHandle.get(String(input.ReceiptHandle));
      if (ok(answer) && id !== undefined) forget(id);
      return answer;
    },
    DeleteMessageBatch: async (input, forward) => {
      const answer = await forward();
      if (!ok(answer)) return answer;
      const entries = entriesById(input);
      for (const s of parsed<{ Successful?: Array<{ Id: string }> }>(answer).Successful ?? []) {
        const id = byHandle.get(String(entries.get(s.Id)?.ReceiptHandle));
        if (id !== undefined) forget(id);
      }
      return answer;
    },
    PurgeQueue: async (input, forward) => {
      const answer = await forward();
      if (ok(answer)) emptied(queueNameOf(input.QueueUrl));
      return answer;
    },
    DeleteQueue: async (input, forward) => {
      const answer = await forward();
      if (ok(answer)) emptied(queueNameOf(input.QueueUrl));
      return answer;
    },
    SetQueueAttributes: async (input, forward) => {
      queues.delete(queueNameOf(input.QueueUrl));
      return forward();
    },
  };

  const emptied = (queue: string) => {
    for (const m of journal.live()) if (m.queue === queue) drop(m.id);
    journal.purged(queue);
    queues.delete(queue);
  };

  const forward = async (req: IncomingMessage, body: Buffer): Promise<Answer> => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || HOP_BY_HOP.has(name)) continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const res = await fetch(`${inner!.endpoint}${req.url ?? '/'}`, {
      method: req.method,
      headers,
      body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body,
    });
    const answerHeaders: Record<string, string> = {};
    for (const name of ['content-type', 'x-amzn-requestid', 'x-amzn-query-error']) {
      const value = res.headers.get(name);
      if (value !== null) answerHeaders[name] = value;
    }
    return { status: res.status, headers: answerHeaders, text: await res.text() };
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const reply = (answer: Answer) => {
        res.writeHead(answer.status, {
          ...answer.headers,
          'content-length': Buffer.byteLength(answer.text),
        });
        res.end(answer.text);
      };
      const refuse = (status: number, type: string, message: string) =>
        reply({
          status,
          headers: { 'content-type': JSON_PROTOCOL, 'x-amzn-query-error': `${type};Sender` },
          text: JSON.stringify({ __type: `com.amazonaws.sqs#${type}`, message }),
        });
      if (req.headers['content-type'] !== JSON_PROTOCOL) {
        return refuse(
          400,
          'InvalidAction',
          "The local queue speaks SQS's JSON protocol only (AWS SDK v3, AWS CLI v2).",
        );
      }
      const target = String(req.headers['x-amz-target'] ?? '');
      const operation = operations[target.replace(/^AmazonSQS\./, '')];
      let input: Input = {};
      try {
        input = JSON.parse(body.toString('utf8') || '{}') as Input;
      } catch {
        // The queue answers malformed JSON itself.
      }
      const pass = (replaced?: Input) =>
        forward(req, replaced ? Buffer.from(JSON.stringify(replaced)) : body);
      const hungUp = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) hungUp.abort();
      });
      (operation ? operation(input, pass, hungUp.signal) : pass())
        .then(async (answer) => {
          await journal.durable();
          reply(answer);
        })
        .catch((err: unknown) =>
          refuse(500, 'InternalError', `local queue: ${err instanceof Error ? err.message : String(err)}`),
        );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  try {
    inner = await options.startInner(port);
  } catch (err) {
    server.close();
    throw err;
  }

  return {
    endpoint: `http://${options.host}:${port}`,
    longPollsWaiting: (queue) => bells.get(queue)?.size ?? 0,

    async restore() {
      const now = Date.now();
      const counts = { restored: 0, expired: 0, withoutQueue: 0 };
      const pending = journal.live();
      const worker = async () => {
        for (let m = pending.shift(); m; m = pending.shift()) {
          const info = await queueInfo(m.queue);
          if (!info) {
            counts.withoutQueue++; // kept in the journal for a start that creates its queue
            continue;
          }
          if (m.sentAt + info.retentionSeconds * 1000 <= now) {
            journal.deleted(m.id);
            counts.expired++;
            continue;
          }
          const delay = Math.min(maxDelaySeconds, Math.max(0, Math.ceil((m.visibleAt - Date.now()) / 1000)));
          // A FIFO queue takes no per-message delay (its messages are first attempts, never held).
          const fifo = m.queue.endsWith('.fifo');
          const { MessageId } = (await call('SendMessage', {
            QueueUrl: info.url,
            MessageBody: m.body,
            ...(fifo ? {} : { DelaySeconds: delay }),
            ...(m.attributes ? { MessageAttributes: m.attributes } : {}),
            ...(m.systemAttributes ? { MessageSystemAttributes: m.systemAttributes } : {}),
            ...(m.groupId ? { MessageGroupId: m.groupId } : {}),
            ...(m.deduplicationId ? { MessageDeduplicationId: m.deduplicationId } : {}),
          })) as { MessageId: string };
          link(m.id, MessageId);
          counts.restored++;
        }
      };
      await Promise.all(Array.from({ length: RESTORE_PARALLEL }, worker));
      await journal.durable();
      return counts;
    },

    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await inner?.close();
      await journal.durable().catch(() => undefined);
      journal.close();
    },
  };
}

const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'keep-alive',
  'transfer-encoding',
  'expect',
]);
