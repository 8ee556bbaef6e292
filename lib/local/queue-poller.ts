/**
 * Local stand-in for Lambda's SQS event source mapping: receives from a local queue and invokes
 * the handler with an SQS-shaped event of one message, as the deployed mappings do (batch size 1),
 * each as soon as it is received and a slot is free: a slow invocation never holds up the next
 * message. It deletes what the handler did not report in `batchItemFailures`. Failed messages are
 * left alone: the handler has already set their visibility timeout to the next retry delay, as it
 * does in AWS.
 *
 * Dispatch: at most `concurrency` invocations at once (the mapping's maximum concurrency), and at
 * most `perGroup` of one message group (`MessageGroupId`). With 1 it stands in for a FIFO queue,
 * whose next message of a group SQS hands out only once the previous one is finished (local-aws-sqs
 * returns it anyway); with more, for a fair queue's preference for quiet groups. A message whose
 * group is busy waits here, in flight, in arrival order; its visibility timeout is extended while
 * it waits, so it is not received twice.
 *
 * The event carries the queue's ApproximateReceiveCount, as Lambda passes SQS's: the local queue's
 * proxy (`queue-proxy.ts`) counts receives only, across restarts, where local-aws-sqs alone would
 * also count visibility changes (a waiting message's extensions included).
 *
 * local-aws-sqs 2.0.2 differs from SQS in two more ways this poller works around:
 * - it returns message system attributes only for the older `AttributeNames` parameter, so both
 *   that and `MessageSystemAttributeNames` are sent;
 * - a long poll waits for the full `WaitTimeSeconds` unless `MaxNumberOfMessages` arrive. The
 *   local queue's proxy (`queue-proxy.ts`) answers long polls as SQS does instead (as soon as a
 *   message is there), so an idle poller waits in one long poll of `LONG_POLL_SECONDS`, as
 *   Lambda's pollers do, rather than asking many times a second; while messages come, it asks
 *   without waiting, several receives at once.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type ReceiveMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { sqsClient } from './queue.ts';

export type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface QueuePollerOptions {
  endpoint: string;
  queueUrl: string;
  handler: QueueHandler;
  /** Invocations in flight at once, like the mapping's maximum concurrency. */
  concurrency?: number;
  /** Invocations of one message group in flight at once; unset, groups are not limited. */
  perGroup?: number;
  /** The pause before looking again when no slot is free (default 100 ms). */
  idleMs?: number;
  onError?: (err: unknown) => void;
}

export interface QueuePoller {
  stop(): Promise<void>;
}

/** Received messages waiting for their group, at most: beyond it the poller stops receiving. */
const MAX_WAITING = 10_000;
/** Receives in flight at once, of up to 10 messages each. */
const RECEIVES_AT_ONCE = 4;
/**
 * An idle poller's long poll. Short beside SQS's 20 s: the loop also extends the visibility of
 * messages waiting behind a busy group (at least every 5 s), and a long poll holds it meanwhile.
 */
const LONG_POLL_SECONDS = 2;
/** A long poll answered empty sooner than this did not wait (a queue without long polls): pause. */
const LONG_POLL_FLOOR_MS = 50;

interface Waiting {
  message: Message;
  group: string;
  /** When its visibility timeout was last set, `Date.now()`. */
  since: number;
}

export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const client = sqsClient(options.endpoint);
  const concurrency = options.concurrency ?? 4;
  const perGroup = options.perGroup ?? Number.POSITIVE_INFINITY;
  const runningByGroup = new Map<string, number>();
  const waitingByGroup = new Map<string, Waiting[]>();
  const invocations = new Set<Promise<void>>();
  let running = 0;
  let waiting = 0;
  let stopped = false;
  let queueArn: string | undefined;
  let visibilitySeconds = 30;
  let wake: (() => void) | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      };
    });

  const recordOf = (m: Message): SQSRecord => {
    const messageAttributes: SQSMessageAttributes = {};
    for (const [name, value] of Object.entries(m.MessageAttributes ?? {})) {
      messageAttributes[name] = {
        stringValue: value.StringValue,
        dataType: value.DataType ?? 'String',
        stringListValues: [],
        binaryListValues: [],
      };
    }
    return {
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body ?? '',
      attributes: {
        ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
        SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
        SenderId: m.Attributes?.SenderId ?? 'local',
        ApproximateFirstReceiveTimestamp:
          m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
        ...(m.Attributes?.MessageGroupId ? { MessageGroupId: m.Attributes.MessageGroupId } : {}),
        ...(m.Attributes?.MessageDeduplicationId
          ? { MessageDeduplicationId: m.Attributes.MessageDeduplicationId }
          : {}),
      },
      messageAttributes,
      md5OfBody: m.MD5OfBody ?? '',
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn ?? '',
      awsRegion: 'us-east-1',
    };
  };

  const invoke = async (m: Message, visibleSince: number) => {
    // A message that waited for its group gets a full visibility timeout for its invocation, as
    // SQS gives a FIFO group's next message when it hands it out (unless plenty is left).
    if (Date.now() - visibleSince > (visibilitySeconds * 1000) / 2) {
      await client
        .send(
          new ChangeMessageVisibilityCommand({
            QueueUrl: options.queueUrl,
            ReceiptHandle: m.ReceiptHandle,
            VisibilityTimeout: visibilitySeconds,
          }),
        )
        .catch((err: unknown) => options.onError?.(err));
    }
    const record = recordOf(m);
    let failed: boolean;
    try {
      const result = await options.handler({ Records: [record] });
      failed = (result?.batchItemFailures ?? []).some((f) => f.itemIdentifier === record.messageId);
    } catch (err) {
      // As in Lambda: a thrown handler fails the whole batch.
      options.onError?.(err);
      failed = true;
    }
    if (failed) return;
    try {
      await remove(m.ReceiptHandle!);
    } catch (err) {
      options.onError?.(err);
    }
  };

  // Deletes of invocations that end in the same turn of the event loop go in one batch call.
  let deletes: Array<{ handle: string; done: (err?: unknown) => void }> = [];
  const remove = (handle: string) =>
    new Promise<void>((resolve, reject) => {
      if (deletes.length === 0) setImmediate(flushDeletes);
      deletes.push({ handle, done: (err) => (err ? reject(err) : resolve()) });
    });
  const flushDeletes = () => {
    const all = deletes;
    deletes = [];
    for (let i = 0; i < all.length; i += 10) {
      const batch = all.slice(i, i + 10);
      client
        .send(
          new DeleteMessageBatchCommand({
            QueueUrl: options.queueUrl,
            Entries: batch.map((d, j) => ({ Id: String(j), ReceiptHandle: d.handle })),
          }),
        )
        .then(
          (out) => {
            const failed = new Map((out.Failed ?? []).map((f) => [f.Id, f]));
            batch.forEach((d, j) => {
              const f = failed.get(String(j));
              d.done(f ? new Error(`delete failed: ${f.Code} ${f.Message ?? ''}`) : undefined);
            });
          },
          (err: unknown) => {
            for (const d of batch) d.done(err);
          },
        );
    }
  };

  const dispatch = ({ message, group, since }: Waiting) => {
    running++;
    runningByGroup.set(group, (runningByGroup.get(group) ?? 0) + 1);
    const invocation: Promise<void> = invoke(message, since).finally(() => {
      invocations.delete(invocation);
      running--;
      const left = (runningByGroup.get(group) ?? 1) - 1;
      if (left === 0) runningByGroup.delete(group);
      else runningByGroup.set(group, left);
      pump();
      wake?.();
    });
    invocations.add(invocation);
  };

  /** Start waiting messages, oldest group first, while slots and their groups allow. */
  const pump = () => {
    if (stopped) return;
    for (const [group, list] of waitingByGroup) {
      if (running >= concurrency) return;
      while (list.length > 0 && running < concurrency && (runningByGroup.get(group) ?? 0) < perGroup) {
        waiting--;
        dispatch(list.shift()!);
      }
      if (list.length === 0) waitingByGroup.delete(group);
    }
  };

  const accept = (m: Message) => {
    // Without a group (a standard queue), every message is its own.
    const group = m.Attributes?.MessageGroupId ?? m.MessageId!;
    const list = waitingByGroup.get(group) ?? [];
    list.push({ message: m, group, since: Date.now() });
    waitingByGroup.set(group, list);
    waiting++;
  };

  /** A waiting message's visibility timeout must not run out: SQS would hand it out again. */
  const extendWaiting = async () => {
    const due = Date.now() - (visibilitySeconds * 1000) / 2;
    const stale = [...waitingByGroup.values()].flat().filter((w) => w.since <= due);
    await Promise.all(
      stale.map(async (w) => {
        w.since = Date.now();
        await client
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: options.queueUrl,
              ReceiptHandle: w.message.ReceiptHandle,
              VisibilityTimeout: visibilitySeconds,
            }),
          )
          .catch((err: unknown) => options.onError?.(err));
      }),
    );
  };

  /** Ends a long poll in progress when the poller stops. */
  const stopping = new AbortController();
  const receive = (max: number, waitSeconds: number): Promise<ReceiveMessageCommandOutput> =>
    client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: max,
        WaitTimeSeconds: waitSeconds,
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: stopping.signal },
    );

  const receiveLoop = async () => {
    let lastExtension = Date.now();
    // The last receive found nothing: the next one waits for a message rather than asking again.
    let idle = false;
    while (!stopped) {
      try {
        if (queueArn === undefined) {
          const { Attributes } = await client.send(
            new GetQueueAttributesCommand({
              QueueUrl: options.queueUrl,
              AttributeNames: ['QueueArn', 'VisibilityTimeout'],
            }),
          );
          queueArn = Attributes?.QueueArn ?? '';
          visibilitySeconds = Number(Attributes?.VisibilityTimeout) || visibilitySeconds;
        }
        if (Date.now() - lastExtension > Math.min(5_000, visibilitySeconds * 250)) {
          lastExtension = Date.now();
          await extendWaiting();
        }
        // A slot for what is received: a free invocation, or room to wait behind a busy group.
        const free = concurrency - running;
        if (free <= 0 || waiting >= MAX_WAITING) {
          await pause(options.idleMs ?? 100);
          continue;
        }
        const asked = Date.now();
        // Idle: one long poll. Otherwise several receives at once when many slots are free, as
        // the mapping's pollers do: a backlog behind busy groups is read past quickly, to the
        // messages that can start.
        const receives: Promise<ReceiveMessageCommandOutput>[] = idle
          ? [receive(Math.min(10, free), LONG_POLL_SECONDS)]
          : Array.from({ length: Math.min(RECEIVES_AT_ONCE, Math.ceil(free / 10)) }, (_, i) =>
              receive(Math.min(10, free - 10 * i), 0),
            );
        const messages: Message[] = (await Promise.all(receives)).flatMap((r) => r.Messages ?? []);
        const waited = idle;
        idle = messages.length === 0;
        if (messages.length === 0) {
          if (waited && Date.now() - asked < LONG_POLL_FLOOR_MS) await pause(options.idleMs ?? 100);
          continue;
        }
        for (const m of messages) accept(m);
        pump();
      } catch (err) {
        if (stopped) break;
        options.onError?.(err);
        await pause(1000);
      }
    }
  };

  const loop = receiveLoop();

  return {
    async stop() {
      stopped = true;
      wake?.();
      stopping.abort();
      await loop;
      await Promise.all([...invocations]);
      client.destroy();
    },
  };
}
