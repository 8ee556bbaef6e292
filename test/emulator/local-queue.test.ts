/**
 * The local stack's durable queue: the journal's fold and compaction, and the queue proxy in
 * front of local-aws-sqs restarted on a copy of its journal, which is exactly what a `kill -9`
 * leaves on disk (every record is written before the call is answered).
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type RunningQueue,
  sqsClient,
  startLocalQueue,
  WEBHOOK_RETRY_QUEUE_NAME,
} from '../../lib/local/queue.ts';
import { type JournalMessage, QueueJournal } from '../../lib/local/queue-journal.ts';
import { eventually } from '../../tools/wait.ts';

const dirs: string[] = [];
const stops: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempFile(name = 'queue-journal.jsonl'): string {
  const dir = mkdtempSync(join(tmpdir(), 'referrals-queue-'));
  dirs.push(dir);
  return join(dir, name);
}

async function queueOn(
  file: string | undefined,
  options?: { maxDelaySeconds?: number; askPauseMs?: number },
) {
  const queue = await startLocalQueue(file, options);
  const sqs = sqsClient(queue.endpoint);
  const stop = async () => {
    sqs.destroy();
    await queue.stop();
  };
  stops.push(stop);
  return { queue, sqs, stop };
}

const message = (id: string, fields: Partial<JournalMessage> = {}): JournalMessage => ({
  id,
  queue: WEBHOOK_RETRY_QUEUE_NAME,
  body: `body of ${id}`,
  sentAt: Date.now(),
  visibleAt: Date.now(),
  receives: 0,
  ...fields,
});

async function receive(sqs: SQSClient, queue: RunningQueue, url = queue.webhookRetryQueueUrl) {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 0,
      MessageSystemAttributeNames: ['All'],
      AttributeNames: ['All'],
    }),
  );
  return Messages;
}

/** Receive until a message with `body` arrives; when it did and what came with it. */
async function receiveBody(sqs: SQSClient, queue: RunningQueue, body: string, timeoutMs = 10_000) {
  const message = await eventually(
    `the message "${body}"`,
    async () => (await receive(sqs, queue)).find((m) => m.Body === body),
    timeoutMs,
    50,
  );
  return { message, at: Date.now() };
}

/** Until a long poll of `url` waits in the queue's proxy (it has asked the queue, found nothing). */
const waitingPoll = (queue: RunningQueue, url: string) =>
  eventually('a long poll waiting', () => (queue.longPollsWaiting(url) > 0 ? true : undefined), 5_000, 10);

const countOf = (m: Message) => Number(m.Attributes?.ApproximateReceiveCount);

describe('queue journal', () => {
  it('folds puts, receives, visibility changes and deletes, and compacts to the live messages', async () => {
    const file = tempFile();
    const journal = new QueueJournal(file);
    journal.put(message('a'));
    journal.put(message('b'));
    journal.put(message('c', { queue: 'other' }));
    journal.received('a', 1, 1000, WEBHOOK_RETRY_QUEUE_NAME);
    journal.visible('a', 5000);
    journal.received('b', 1, 2000, WEBHOOK_RETRY_QUEUE_NAME);
    journal.deleted('c');
    await journal.durable();
    journal.close();
    expect(readFileSync(file, 'utf8').trim().split('\n')).toHaveLength(7);

    const again = new QueueJournal(file);
    expect(again.get('a')).toMatchObject({ receives: 1, firstReceiveAt: 1000, visibleAt: 5000 });
    // Held by a consumer when the journal ended: visible at once after the restart.
    expect(again.get('b')).toMatchObject({ receives: 1, visibleAt: 0 });
    expect(again.get('c')).toBeUndefined();
    expect(again.size).toBe(2);
    again.close();
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { op: string; m: { id: string } }).m.id).sort()).toEqual([
      'a',
      'b',
    ]);
  });

  it('reads past a record cut short by a crash mid-write', () => {
    const file = tempFile();
    const journal = new QueueJournal(file);
    journal.put(message('kept'));
    journal.put(message('gone'));
    journal.deleted('gone');
    journal.close();
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"op":"put","m":{"id":"torn","que`);
    const again = new QueueJournal(file);
    expect(again.unreadableLines).toBe(1);
    expect(again.live().map((m) => m.id)).toEqual(['kept']);
    again.close();
  });

  it('PurgeQueue empties one queue only', () => {
    const journal = new QueueJournal(undefined);
    journal.put(message('a'));
    journal.put(message('b', { queue: 'other' }));
    journal.purged(WEBHOOK_RETRY_QUEUE_NAME);
    expect(journal.live().map((m) => m.id)).toEqual(['b']);
  });
});

describe('local queue (local-aws-sqs behind the journaling proxy)', () => {
  it('a restart on the journal keeps every unfinished message, its id, receive count and due time', async () => {
    const file = tempFile();
    const { queue, sqs, stop } = await queueOn(file);
    const url = queue.webhookRetryQueueUrl;

    // retried: received once, then its retry set 2 s ahead (a failed webhook attempt).
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'retried' }));
    const retried = (await receiveBody(sqs, queue, 'retried')).message;
    expect(countOf(retried)).toBe(1);
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: retried.ReceiptHandle,
        VisibilityTimeout: 2,
      }),
    );
    const retryDue = Date.now() + 2000;
    // held: being delivered when the process died. done: delivered and deleted.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'held' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'done' }));
    const received = await receive(sqs, queue);
    const held = received.find((m) => m.Body === 'held') as Message;
    const done = received.find((m) => m.Body === 'done') as Message;
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: done.ReceiptHandle }));
    // delayed: sent with a delay, never received.
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'delayed', DelaySeconds: 3 }));
    const delayedDue = Date.now() + 3000;
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.purgeQueueUrl, MessageBody: '{"pk":"x"}' }));

    const killed = tempFile();
    copyFileSync(file, killed);
    await stop();

    const restarted = await queueOn(killed);
    expect(restarted.queue.restored).toBe(4);
    const heldAgain = await receiveBody(restarted.sqs, restarted.queue, 'held', 1000);
    expect(heldAgain.message.MessageId).toBe(held.MessageId);
    expect(countOf(heldAgain.message)).toBe(2);
    const retriedAgain = await receiveBody(restarted.sqs, restarted.queue, 'retried');
    expect(retriedAgain.at).toBeGreaterThanOrEqual(retryDue - 1000);
    expect(retriedAgain.message.MessageId).toBe(retried.MessageId);
    expect(countOf(retriedAgain.message)).toBe(2);
    expect(retriedAgain.message.Attributes?.SentTimestamp).toBe(retried.Attributes?.SentTimestamp);
    const delayedAgain = await receiveBody(restarted.sqs, restarted.queue, 'delayed');
    expect(delayedAgain.at).toBeGreaterThanOrEqual(delayedDue - 1000);
    expect(countOf(delayedAgain.message)).toBe(1);
    const purge = await receive(restarted.sqs, restarted.queue, restarted.queue.purgeQueueUrl);
    expect(purge.map((m) => m.Body)).toEqual(['{"pk":"x"}']);
    expect((await receive(restarted.sqs, restarted.queue)).map((m) => m.Body)).not.toContain('done');
  });

  it('counts receives only: a visibility change is not an attempt', async () => {
    const { queue, sqs } = await queueOn(undefined);
    await sqs.send(new SendMessageCommand({ QueueUrl: queue.webhookRetryQueueUrl, MessageBody: 'once' }));
    const first = (await receiveBody(sqs, queue, 'once')).message;
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queue.webhookRetryQueueUrl,
        ReceiptHandle: first.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const second = (await receiveBody(sqs, queue, 'once')).message;
    expect([countOf(first), countOf(second)]).toEqual([1, 2]);
    expect(second.MessageId).toBe(first.MessageId);
  });

  it('a retry due beyond the longest send delay is hidden again when handed out early, without counting', async () => {
    const file = tempFile();
    const journal = new QueueJournal(file);
    const sentAt = Date.now() - 60_000;
    journal.put(message('far', { body: 'far', sentAt, receives: 3, visibleAt: Date.now() + 3000 }));
    // Past the queue's retention (4 days): dropped at start.
    journal.put(message('stale', { body: 'stale', sentAt: Date.now() - 5 * 24 * 3600_000 }));
    journal.close();
    const due = Date.now() + 3000;

    // Sends may be delayed by 1 s at most here, so the queue hands `far` out 2 s early.
    const { queue, sqs } = await queueOn(file, { maxDelaySeconds: 1 });
    expect(queue.restored).toBe(1);
    const far = await receiveBody(sqs, queue, 'far');
    expect(far.at).toBeGreaterThanOrEqual(due - 1000);
    expect(countOf(far.message)).toBe(4);
    expect(far.message.MessageId).toBe('far');
  });

  it('refuses the Query protocol, whose writes would bypass the journal', async () => {
    const { queue } = await queueOn(undefined);
    const res = await fetch(`${queue.endpoint}/`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `Action=SendMessage&QueueUrl=${encodeURIComponent(queue.webhookRetryQueueUrl)}&MessageBody=x`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/JSON protocol/);
  });
});

describe('local queue: the FIFO first-attempt lane', () => {
  it('a restart keeps a FIFO message with its group and deduplication ids', async () => {
    const file = tempFile();
    const first = await queueOn(file);
    await first.sqs.send(
      new SendMessageCommand({
        QueueUrl: first.queue.webhookQueueUrl,
        MessageBody: 'first attempt',
        MessageGroupId: 'campaign-1#3',
        MessageDeduplicationId: 'evt_action_7',
      }),
    );
    await first.stop();
    copyFileSync(file, `${file}.copy`);
    const restarted = await queueOn(`${file}.copy`);
    expect(restarted.queue.restored).toBe(1);
    const { Messages = [] } = await restarted.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: restarted.queue.webhookQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        AttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    expect(
      Messages.map((m) => [m.Body, m.Attributes?.MessageGroupId, m.Attributes?.MessageDeduplicationId]),
    ).toEqual([['first attempt', 'campaign-1#3', 'evt_action_7']]);
  });
});

describe('local queue: long polls answered as SQS answers them', () => {
  const longPoll = (sqs: SQSClient, url: string, waitSeconds: number, abortSignal?: AbortSignal) =>
    sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: waitSeconds }),
      { abortSignal },
    );

  it('a long poll on an empty queue answers as soon as a message is sent, and empty once its wait is over', async () => {
    const { queue, sqs } = await queueOn(undefined);
    const url = queue.webhookRetryQueueUrl;
    const started = Date.now();
    const polling = longPoll(sqs, url, 10);
    await waitingPoll(queue, url);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'woken' }));
    const { Messages = [] } = await polling;
    // local-aws-sqs alone answers after the whole 10 s (it waits for MaxNumberOfMessages).
    expect(Messages.map((m) => m.Body)).toEqual(['woken']);
    expect(Date.now() - started).toBeLessThan(2000);

    const emptyFrom = Date.now();
    const empty = await longPoll(sqs, url, 1);
    expect(empty.Messages ?? []).toEqual([]);
    expect(Date.now() - emptyFrom).toBeGreaterThanOrEqual(950);
  });

  it('a message sent while the proxy is asking the queue still wakes the poll at once', async () => {
    // The proxy pauses 300 ms after each ask of the queue: a send lands in that window, after the
    // ask found the queue empty and before the poll waits. Missed, it waits for the next look (1 s).
    const { queue, sqs } = await queueOn(undefined, { askPauseMs: 300 });
    const url = queue.webhookRetryQueueUrl;
    const polling = longPoll(sqs, url, 5);
    // 100 ms into that window: a moment is what is under test here, not a state to wait for.
    await new Promise((r) => setTimeout(r, 100));
    const sent = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'in the window' }));
    const { Messages = [] } = await polling;
    expect(Messages.map((m) => m.Body)).toEqual(['in the window']);
    // Its own ask (300 ms pause included) after the pause, not the next look a second on.
    expect(Date.now() - sent).toBeLessThan(800);
  });

  it('a delayed message and one made visible again wake a long poll when they are due', async () => {
    const { queue, sqs } = await queueOn(undefined);
    const url = queue.webhookRetryQueueUrl;
    const sent = Date.now();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'later', DelaySeconds: 1 }));
    const first = await longPoll(sqs, url, 10);
    expect(first.Messages?.map((m) => m.Body)).toEqual(['later']);
    expect(Date.now() - sent).toBeGreaterThanOrEqual(900);
    expect(Date.now() - sent).toBeLessThan(2500);

    // A receiver's retry made due sooner through the proxy (VisibilityTimeout 0): at once.
    const polling = longPoll(sqs, url, 10);
    const from = Date.now();
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: url,
        ReceiptHandle: first.Messages![0]!.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    const again = await polling;
    expect(again.Messages?.map((m) => m.Body)).toEqual(['later']);
    expect(Date.now() - from).toBeLessThan(1000);
  });

  it('a long poll its caller gave up on takes nothing sent afterwards', async () => {
    const { queue, sqs } = await queueOn(undefined);
    const url = queue.webhookRetryQueueUrl;
    const abort = new AbortController();
    const gaveUp = longPoll(sqs, url, 10, abort.signal).catch((err: Error) => err.name);
    await waitingPoll(queue, url);
    abort.abort();
    expect(await gaveUp).toBe('AbortError');
    // The proxy has let go of the abandoned poll.
    await eventually('no long poll waiting', () => (queue.longPollsWaiting(url) === 0 ? true : undefined));
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'for the next receiver' }));
    // Had the abandoned poll received it, it would be invisible for the queue's visibility timeout.
    const next = await longPoll(sqs, url, 2);
    expect(next.Messages?.map((m) => m.Body)).toEqual(['for the next receiver']);
  });
});
