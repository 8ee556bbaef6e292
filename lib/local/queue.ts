import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { createSqsClient } from '../aws/clients.ts';
import { QueueJournal } from './queue-journal.ts';
import { queueNameOf, startQueueProxy } from './queue-proxy.ts';

export interface RunningQueue {
  endpoint: string;
  /** The webhook first-attempt lane (FIFO), which the stream poller feeds. */
  webhookQueueUrl: string;
  webhookRetryQueueUrl: string;
  webhookDlqUrl: string;
  purgeQueueUrl: string;
  /** Messages the journal held at start, sent again to the queues. */
  restored: number;
  /** Long polls waiting on the queue of `queueUrl` right now (for tests to wait on, not the clock). */
  longPollsWaiting(queueUrl: string): number;
  stop(): Promise<void>;
}

export const WEBHOOK_QUEUE_NAME = 'referrals-webhooks.fifo';
export const WEBHOOK_FIFO_DLQ_NAME = 'referrals-webhooks-dlq.fifo';
export const WEBHOOK_RETRY_QUEUE_NAME = 'referrals-webhooks-retry';
export const WEBHOOK_DLQ_NAME = 'referrals-webhooks-dlq';
export const PURGE_QUEUE_NAME = 'referrals-purge';

/** A client of the local queue for the stack's pollers and tools: no attempt bound on receives. */
export const sqsClient = (endpoint: string) => createSqsClient({ endpoint, bounded: false });

/**
 * The local SQS-compatible queues: `local-aws-sqs` behind the journaling proxy of
 * `queue-proxy.ts`, with the webhook lanes (a FIFO first-attempt queue and a standard retry queue,
 * see `lib/webhooks/lanes.ts`) and their dead-letter queues, wired with the same redrive policy
 * shapes as the deployed stack, and the purge queue. With a `journalFile` the queues' contents
 * survive a restart, however the process ended: what the journal holds is sent again before this
 * returns. Without one (DATA_DIR=memory) they live and die with the process.
 */
export async function startLocalQueue(
  journalFile?: string,
  options: { maxDelaySeconds?: number; askPauseMs?: number } = {},
): Promise<RunningQueue> {
  const require = createRequire(import.meta.url);
  const { createRequestHandler } = require('local-aws-sqs') as {
    createRequestHandler: (o: Record<string, unknown>) => {
      requestHandler: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    };
  };
  const journal = new QueueJournal(journalFile);
  const proxy = await startQueueProxy({
    journal,
    host: '127.0.0.1',
    maxDelaySeconds: options.maxDelaySeconds,
    askPauseMs: options.askPauseMs,
    startInner: async (proxyPort) => {
      // Its queue URLs name the proxy's port: callers that follow a QueueUrl reach the proxy.
      const { requestHandler } = createRequestHandler({
        port: proxyPort,
        hostname: '127.0.0.1',
        emulateQueueCreationLifecycle: false,
      });
      const server = createServer((req, res) => void requestHandler(req, res));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
      const { port } = server.address() as AddressInfo;
      return {
        endpoint: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      };
    },
  });
  const endpoint = proxy.endpoint;
  const client = sqsClient(endpoint);
  const arnOf = async (url: string | undefined) =>
    (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] })))
      .Attributes?.QueueArn;
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_DLQ_NAME,
      Attributes: { MessageRetentionPeriod: '1209600' },
    }),
  );
  const fifoDlq = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_FIFO_DLQ_NAME,
      Attributes: { FifoQueue: 'true', MessageRetentionPeriod: '1209600' },
    }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_QUEUE_NAME,
      Attributes: {
        FifoQueue: 'true',
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
        VisibilityTimeout: '180',
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await arnOf(fifoDlq.QueueUrl),
          maxReceiveCount: 1000,
        }),
      },
    }),
  );
  const retry = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_RETRY_QUEUE_NAME,
      Attributes: {
        VisibilityTimeout: '180',
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: await arnOf(dlq.QueueUrl),
          maxReceiveCount: 1000,
        }),
      },
    }),
  );
  // Purge jobs of deleted campaigns; a failed pass is simply received again.
  const purge = await client.send(
    new CreateQueueCommand({ QueueName: PURGE_QUEUE_NAME, Attributes: { VisibilityTimeout: '30' } }),
  );
  client.destroy();
  const restored = await proxy.restore();
  return {
    endpoint,
    webhookQueueUrl: queue.QueueUrl ?? '',
    webhookRetryQueueUrl: retry.QueueUrl ?? '',
    webhookDlqUrl: dlq.QueueUrl ?? '',
    purgeQueueUrl: purge.QueueUrl ?? '',
    restored: restored.restored,
    longPollsWaiting: (queueUrl) => proxy.longPollsWaiting(queueNameOf(queueUrl)),
    stop: () => proxy.stop(),
  };
}
