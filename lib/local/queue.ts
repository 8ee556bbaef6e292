import { createRequire } from 'node:module';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort } from './ports.ts';

export interface RunningQueue {
  endpoint: string;
  /** The webhook first-attempt lane (FIFO), which the stream poller feeds. */
  webhookQueueUrl: string;
  webhookRetryQueueUrl: string;
  webhookDlqUrl: string;
  purgeQueueUrl: string;
  stop(): Promise<void>;
}

export const WEBHOOK_QUEUE_NAME = 'referrals-webhooks.fifo';
export const WEBHOOK_FIFO_DLQ_NAME = 'referrals-webhooks-dlq.fifo';
export const WEBHOOK_RETRY_QUEUE_NAME = 'referrals-webhooks-retry';
export const WEBHOOK_DLQ_NAME = 'referrals-webhooks-dlq';
export const PURGE_QUEUE_NAME = 'referrals-purge';

export function sqsClient(endpoint: string): SQSClient {
  return new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
}

/**
 * A local SQS-compatible queue server (`local-aws-sqs`) with the webhook lanes (a FIFO
 * first-attempt queue and a standard retry queue, see `lib/webhooks/lanes.ts`) and their
 * dead-letter queues, wired with the same redrive policy shapes as the deployed stack.
 */
export async function startLocalQueue(): Promise<RunningQueue> {
  const require = createRequire(import.meta.url);
  const { createSqsServer } = require('local-aws-sqs') as {
    createSqsServer: (o: Record<string, unknown>) => Promise<{ close: (cb?: () => void) => void }>;
  };
  const port = await freePort();
  const server = await createSqsServer({ port, hostname: '127.0.0.1', emulateQueueCreationLifecycle: false });
  const endpoint = `http://127.0.0.1:${port}`;
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
  return {
    endpoint,
    webhookQueueUrl: queue.QueueUrl ?? '',
    webhookRetryQueueUrl: retry.QueueUrl ?? '',
    webhookDlqUrl: dlq.QueueUrl ?? '',
    purgeQueueUrl: purge.QueueUrl ?? '',
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
