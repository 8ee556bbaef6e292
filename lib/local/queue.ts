import { createRequire } from 'node:module';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort } from './ports.ts';

export interface RunningQueue {
  endpoint: string;
  webhookQueueUrl: string;
  webhookDlqUrl: string;
  purgeQueueUrl: string;
  stop(): Promise<void>;
}

export const WEBHOOK_QUEUE_NAME = 'referrals-webhooks';
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
 * A local SQS-compatible queue server (`local-aws-sqs`) with the webhook queue and its dead-letter
 * queue, wired with the same redrive policy shape as the deployed stack.
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
  const dlq = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_DLQ_NAME,
      Attributes: { MessageRetentionPeriod: '1209600' },
    }),
  );
  const dlqArn = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
  );
  const queue = await client.send(
    new CreateQueueCommand({
      QueueName: WEBHOOK_QUEUE_NAME,
      Attributes: {
        VisibilityTimeout: '90',
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn.Attributes?.QueueArn,
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
    webhookDlqUrl: dlq.QueueUrl ?? '',
    purgeQueueUrl: purge.QueueUrl ?? '',
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
