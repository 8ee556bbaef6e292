/**
 * Local stand-in for Lambda's SQS event source mapping: receives from the local webhook queue,
 * invokes the delivery handler with SQS-shaped events and deletes what the handler did not report
 * in `batchItemFailures`. Failed messages are left alone: the handler has already set their
 * visibility timeout to the next retry delay, as it does in AWS.
 *
 * The event carries the queue's ApproximateReceiveCount, as Lambda passes SQS's: the local queue's
 * proxy (`queue-proxy.ts`) counts receives only, across restarts, where local-aws-sqs alone would
 * also count visibility changes.
 *
 * local-aws-sqs 2.0.2 differs from SQS in two more ways this poller works around:
 * - it returns message system attributes only for the older `AttributeNames` parameter, so both
 *   that and `MessageSystemAttributeNames` are sent;
 * - a long poll waits for the full `WaitTimeSeconds` unless `MaxNumberOfMessages` arrive, so it
 *   polls with `WaitTimeSeconds: 0` (answers within ~40 ms) and sleeps briefly when empty.
 */
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { sqsClient } from './queue.ts';

export type QueueHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

export interface QueuePollerOptions {
  endpoint: string;
  queueUrl: string;
  handler: QueueHandler;
  /** Batches in flight at once, like the mapping's maximum concurrency. */
  concurrency?: number;
  batchSize?: number;
  idleMs?: number;
  onError?: (err: unknown) => void;
}

export interface QueuePoller {
  stop(): Promise<void>;
}

export function startQueuePoller(options: QueuePollerOptions): QueuePoller {
  const client = sqsClient(options.endpoint);
  const wakers = new Set<() => void>();
  let stopped = false;
  let queueArn: string | undefined;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      wakers.add(wake);
    });

  const worker = async () => {
    while (!stopped) {
      try {
        queueArn ??= (
          await client.send(
            new GetQueueAttributesCommand({ QueueUrl: options.queueUrl, AttributeNames: ['QueueArn'] }),
          )
        ).Attributes?.QueueArn;
        const { Messages = [] } = await client.send(
          new ReceiveMessageCommand({
            QueueUrl: options.queueUrl,
            MaxNumberOfMessages: options.batchSize ?? 10,
            WaitTimeSeconds: 0,
            AttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
          }),
        );
        if (Messages.length === 0) {
          await pause(options.idleMs ?? 100);
          continue;
        }
        const records: SQSRecord[] = Messages.map((m) => ({
          messageId: m.MessageId!,
          receiptHandle: m.ReceiptHandle!,
          body: m.Body ?? '',
          attributes: {
            ApproximateReceiveCount: m.Attributes?.ApproximateReceiveCount ?? '1',
            SentTimestamp: m.Attributes?.SentTimestamp ?? String(Date.now()),
            SenderId: m.Attributes?.SenderId ?? 'local',
            ApproximateFirstReceiveTimestamp:
              m.Attributes?.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
          },
          messageAttributes: {},
          md5OfBody: m.MD5OfBody ?? '',
          eventSource: 'aws:sqs',
          eventSourceARN: queueArn ?? '',
          awsRegion: 'us-east-1',
        }));
        let failed: Set<string>;
        try {
          const result = await options.handler({ Records: records });
          failed = new Set((result?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (err) {
          // As in Lambda: a thrown handler fails the whole batch.
          options.onError?.(err);
          failed = new Set(records.map((r) => r.messageId));
        }
        const done = records.filter((r) => !failed.has(r.messageId));
        if (done.length > 0) {
          await client.send(
            new DeleteMessageBatchCommand({
              QueueUrl: options.queueUrl,
              Entries: done.map((r, i) => ({ Id: String(i), ReceiptHandle: r.receiptHandle })),
            }),
          );
        }
      } catch (err) {
        if (stopped) break;
        options.onError?.(err);
        await pause(1000);
      }
    }
  };

  const workers = Array.from({ length: options.concurrency ?? 4 }, () => worker());

  return {
    async stop() {
      stopped = true;
      for (const wake of [...wakers]) wake();
      await Promise.all(workers);
      client.destroy();
    },
  };
}
