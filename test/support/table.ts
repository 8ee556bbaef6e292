/**
 * The file's table and queues behind the API's back (the run's stack, or the file's own:
 * `run-stack.ts`): `tools/table.ts`'s reads and bulk writes on it by default, reads that wait for
 * the stream, the dead-letter queue, and the settings that point in-process handlers at them.
 */
import { GetQueueUrlCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { WEBHOOK_DLQ_NAME } from '../../lib/local/queue.ts';
import {
  type Table,
  campaignItems as tableCampaignItems,
  partitionItems as tablePartitionItems,
  putItems as tablePutItems,
  visitItems as tableVisitItems,
} from '../../tools/table.ts';
import { eventually } from '../../tools/wait.ts';
import { runStack } from './run-stack.ts';

export type { Table };

/** A test's own reads and bulk writes behind the API's back wait longer than a request's attempt. */
export const TOOL_TIMEOUT_MS = 30_000;

const clients = new Map<string, DynamoDBDocumentClient>();

/**
 * A document client on a DynamoDB Local table: the file's stack's (`run-stack.ts`) by default, or
 * that of a stack the test started. One client per endpoint for the worker's life.
 */
export function table(at: { dynamodbEndpoint: string; tableName: string } = runStack()): Table {
  const endpoint = at.dynamodbEndpoint;
  let db = clients.get(endpoint);
  if (!db) {
    db = createDocumentClient(endpoint, undefined, TOOL_TIMEOUT_MS);
    clients.set(endpoint, db);
  }
  return { db, name: at.tableName };
}

export const partitionItems = (pk: string, prefix: string, on: Table = table()) =>
  tablePartitionItems(pk, prefix, on);
export const campaignItems = (tenant: string, campaignId: string, prefix: string, on: Table = table()) =>
  tableCampaignItems(tenant, campaignId, prefix, on);
export const visitItems = (tenant: string, campaignId: string, on: Table = table()) =>
  tableVisitItems(tenant, campaignId, on);
export const putItems = async (items: readonly object[], on: Table = table()): Promise<void> => {
  await tablePutItems(items, on);
};

/** The stored campaign item (`SK CAMPAIGN`), read strongly consistently. */
export async function campaignItem(
  tenant: string,
  campaignId: string,
  on: Table = table(),
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await on.db.send(
    new GetCommand({
      TableName: on.name,
      Key: { PK: `T#${tenant}#C#${campaignId.toLowerCase()}`, SK: 'CAMPAIGN' },
      ConsistentRead: true,
    }),
  );
  return Item;
}

/** The stored link item of a code (PK `LINK#<code>`), read strongly consistently. */
export async function linkItem(
  code: string,
  on: Table = table(),
): Promise<Record<string, unknown> | undefined> {
  const { Item } = await on.db.send(
    new GetCommand({ TableName: on.name, Key: { PK: `LINK#${code}`, SK: 'LINK' }, ConsistentRead: true }),
  );
  return Item;
}

/**
 * A campaign's action items once every counted action has one. Endpoint 5 records an action on
 * its link's item; the table stream writes the action item a moment later. Waits until, for every
 * link given, its items number exactly its stored `total_clicks`, and fails with the counts if
 * that does not happen in time (an action counted but never written, or written twice).
 */
export async function settledActionItems(
  tenant: string,
  campaignId: string,
  codes: string[],
  timeoutMs = 15_000,
): Promise<Record<string, unknown>[]> {
  let last: unknown;
  try {
    return await eventually(
      'action items matching total_clicks',
      async () => {
        const items = [
          ...(await campaignItems(tenant, campaignId, 'A#')),
          ...(await visitItems(tenant, campaignId)).filter((i) => String(i.SK).startsWith('A#')),
        ];
        const counts = await Promise.all(
          codes.map(async (code) => ({
            code,
            clicks: Number((await linkItem(code))?.total_clicks ?? 0),
            items: items.filter((i) => i.link_code === code).length,
          })),
        );
        last = counts;
        return counts.every((c) => c.clicks === c.items) ? items : undefined;
      },
      timeoutMs,
      50,
    );
  } catch {
    throw new Error(`action items do not match total_clicks: ${JSON.stringify(last)}`);
  }
}

/** The API object an event-bearing item carries (its webhook's `data`), stored as JSON text. */
// biome-ignore lint/suspicious/noExplicitAny: tests read fields of the stored object without a type per call
export function eventDataOf<T = any>(item: Record<string, unknown> | undefined): T {
  return JSON.parse(String(item?.event_json)) as T;
}

/**
 * The dead-lettered message of an event on the run's webhook dead-letter queue, once it is there.
 * Receiving takes it off the queue for its visibility timeout; nothing else reads that queue.
 */
export async function deadLetterOf(eventId: string, timeoutMs = 10_000): Promise<Record<string, unknown>> {
  const sqs = new SQSClient({
    endpoint: runStack().queueEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: WEBHOOK_DLQ_NAME }));
    return await eventually(
      `${eventId} on the dead-letter queue`,
      async () => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }),
        );
        return Messages.map((m) => JSON.parse(m.Body ?? '{}') as Record<string, unknown>).find(
          (b) => b.event_id === eventId,
        );
      },
      timeoutMs,
      200,
    );
  } finally {
    sqs.destroy();
  }
}

/**
 * Point modules of lib/ and functions/ loaded in this test worker at the file's stack (its table
 * and queues), as the local stack does for its handlers: every setting they read, none left to be
 * inherited from the process that started the run's stack. They read these settings when they
 * load, so import them (dynamically) after this call. Each integration file runs in its own
 * worker: nothing leaks.
 */
export function configureInProcessHandlers(): void {
  const stack = runStack();
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: stack.dynamodbEndpoint,
    TABLE_NAME: stack.tableName,
    PUBLIC_BASE_URL: stack.baseUrl,
    AWS_ENDPOINT_URL_SQS: stack.queueEndpoint,
    WEBHOOK_QUEUE_URL: stack.queueUrls.webhookQueueUrl,
    WEBHOOK_RETRY_QUEUE_URL: stack.queueUrls.webhookRetryQueueUrl,
    WEBHOOK_DLQ_URL: stack.queueUrls.webhookDlqUrl,
    PURGE_QUEUE_URL: stack.queueUrls.purgeQueueUrl,
    STAGE: 'local',
    ALLOW_PRIVATE_WEBHOOKS: 'true',
    LOG_LEVEL: 'WARN',
    DYNAMODB_ATTEMPT_TIMEOUT_MS: '4000',
  });
}
