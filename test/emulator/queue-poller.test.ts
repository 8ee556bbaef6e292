/**
 * The local stand-in for Lambda's SQS event source mapping, against a real local-aws-sqs server:
 * one message per invocation, dispatched as it comes, within the concurrency bounds.
 */
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningQueue, sqsClient, startLocalQueue } from '../../lib/local/queue.ts';
import { type QueueHandler, startQueuePoller } from '../../lib/local/queue-poller.ts';
import { eventually, holdsFor, waitUntil } from '../../tools/wait.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let queue: RunningQueue;
let sqs: ReturnType<typeof sqsClient>;

beforeAll(async () => {
  queue = await startLocalQueue();
  sqs = sqsClient(queue.endpoint);
});
afterAll(async () => {
  sqs.destroy();
  await queue.stop();
});

async function newQueue(attributes: Record<string, string> = {}) {
  const fifo = attributes.FifoQueue === 'true';
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({ QueueName: `t-${randomUUID()}${fifo ? '.fifo' : ''}`, Attributes: attributes }),
  );
  return QueueUrl!;
}

const send = (url: string, body: string, group?: string) =>
  sqs.send(
    new SendMessageCommand({
      QueueUrl: url,
      MessageBody: body,
      ...(group ? { MessageGroupId: group, MessageDeduplicationId: randomUUID() } : {}),
    }),
  );

/** A handler that records each invocation's start, end and concurrency, taking `ms(body)`. */
function recorder(ms: (body: string) => number, fail?: (body: string) => boolean) {
  const calls: Array<{ body: string; start: number; end?: number; records: number }> = [];
  let running = 0;
  let maxRunning = 0;
  const handler: QueueHandler = async (event: SQSEvent) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    const record = event.Records[0]!;
    const call: (typeof calls)[number] = {
      body: record.body,
      start: Date.now(),
      records: event.Records.length,
    };
    calls.push(call);
    await sleep(ms(record.body));
    call.end = Date.now();
    running--;
    return { batchItemFailures: fail?.(record.body) ? [{ itemIdentifier: record.messageId }] : [] };
  };
  return { handler, calls, maxRunning: () => maxRunning };
}

const until = (check: () => boolean, timeoutMs = 10_000) =>
  eventually('the handler calls expected', () => check() || undefined, timeoutMs, 10);

describe('local queue poller', () => {
  it('invokes with one message at a time and never holds the next ones for a slow one', async () => {
    const url = await newQueue();
    const r = recorder((body) => (body === 'slow' ? 3_000 : 20));
    const poller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: url,
      handler: r.handler,
      idleMs: 20,
    });
    try {
      await send(url, 'slow');
      await until(() => r.calls.length === 1);
      const sent = Date.now();
      for (let i = 0; i < 5; i++) await send(url, `fast-${i}`);
      await until(() => r.calls.filter((c) => c.body.startsWith('fast') && c.end).length === 5);
      expect(Date.now() - sent).toBeLessThan(1_000);
      expect(r.calls[0]!.end).toBeUndefined();
      expect(r.calls.every((c) => c.records === 1)).toBe(true);
    } finally {
      await poller.stop();
    }
  });

  it('runs at most `concurrency` invocations at once and deletes what succeeded only', async () => {
    const url = await newQueue({ VisibilityTimeout: '60' });
    const r = recorder(
      () => 100,
      (body) => body === 'fail',
    );
    const poller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: url,
      handler: r.handler,
      concurrency: 3,
      idleMs: 20,
    });
    try {
      await Promise.all([...Array.from({ length: 11 }, (_, i) => send(url, `m-${i}`)), send(url, 'fail')]);
      await until(() => r.calls.filter((c) => c.end).length === 12);
      expect(r.maxRunning()).toBe(3);
      const notVisible = async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: url,
            AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        return Attributes?.ApproximateNumberOfMessagesNotVisible;
      };
      // The failed one waits out its visibility timeout; the rest are gone (deleted once each
      // handler has returned), each handled once.
      await waitUntil(async () => (await notVisible()) === '1', 5_000, 20);
      expect(await notVisible()).toBe('1');
      expect(new Set(r.calls.map((c) => c.body)).size).toBe(12);
    } finally {
      await poller.stop();
    }
  });

  it('stands in for a FIFO queue with perGroup 1: a group in order, one at a time, other groups meanwhile', async () => {
    const url = await newQueue({ FifoQueue: 'true', VisibilityTimeout: '60' });
    const r = recorder((body) => (body.startsWith('a') ? 300 : 10));
    const poller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: url,
      handler: r.handler,
      concurrency: 10,
      perGroup: 1,
      idleMs: 20,
    });
    try {
      for (let i = 0; i < 4; i++) await send(url, `a-${i}`, 'A');
      await send(url, 'b-0', 'B');
      await until(() => r.calls.filter((c) => c.end).length === 5);
      const a = r.calls.filter((c) => c.body.startsWith('a'));
      expect(a.map((c) => c.body)).toEqual(['a-0', 'a-1', 'a-2', 'a-3']);
      for (let i = 1; i < a.length; i++) expect(a[i]!.start).toBeGreaterThanOrEqual(a[i - 1]!.end!);
      // B did not wait behind A's chain.
      const b = r.calls.find((c) => c.body === 'b-0')!;
      expect(b.end!).toBeLessThan(a[1]!.start + 100);
    } finally {
      await poller.stop();
    }
  });

  it('keeps a message waiting for its group invisible, so it is handled once', async () => {
    // Handlers well within the visibility timeout (AWS: a sixth of it), a chain well beyond it.
    const url = await newQueue({ FifoQueue: 'true', VisibilityTimeout: '4' });
    const r = recorder(() => 600);
    const poller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: url,
      handler: r.handler,
      perGroup: 1,
      idleMs: 20,
    });
    try {
      const bodies = Array.from({ length: 10 }, (_, i) => `a-${i}`);
      for (const body of bodies) await send(url, body, 'A');
      await until(() => r.calls.filter((c) => c.end).length === bodies.length, 20_000);
      // Nothing to wait for: a message handled twice would be one whose visibility timeout (4 s)
      // ran out while it waited for its group, so the bounded wait is that timeout and a margin
      // (over at once if one comes).
      await holdsFor(4_500, () => r.calls.length > bodies.length);
      expect(r.calls.map((c) => c.body)).toEqual(bodies);
    } finally {
      await poller.stop();
    }
  }, 30_000);
});
