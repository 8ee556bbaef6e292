import { Aws, Names } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IndexName } from '../lib/table-definition.ts';
import type { TableGrant } from './grant-lists.ts';

export {
  AUTHORIZER_GRANT,
  DELIVERY_LANE_GRANT,
  PURGE_GRANT,
  ROLLUP_STREAM_GRANT,
  type TableGrant,
  WEBHOOK_STREAM_GRANT,
} from './grant-lists.ts';

/**
 * Exact grants: every function gets the actions its code sends and nothing else, each on the one
 * resource it sends them to. Not CDK's `grantReadData`/`grantWriteData`/`grantConsumeMessages`
 * bundles, which give every reader `Scan` and every index (`table/index/*`), every writer
 * `DeleteItem` and `BatchWriteItem`, and every queue consumer or sender `GetQueueUrl` and more.
 *
 * The lists themselves are plain data: the route table's `dynamo` and `queryIndexes`
 * (`lib/routes.ts`) for the HTTP functions, `grant-lists.ts` for the authorizer and the queue and
 * stream consumers. `test/integration/round-trips.test.ts` runs the code against DynamoDB Local and
 * fails when it sends an action its list lacks; `test/infra/least-privilege.test.ts` compares every
 * synthesized role with a written-out list.
 */

/** The ARN of one index of the table (what `Query` with `IndexName` is authorized on). */
export function indexArn(table: dynamodb.ITable, indexName: IndexName): string {
  return `${table.tableArn}/index/${indexName}`;
}

const sorted = <T extends string>(values: Iterable<T>): T[] => [...new Set(values)].sort();

/**
 * Grants exactly `grant` on `table`: one statement for the actions on the table's ARN, one for
 * `Query` on the named indexes' ARNs. With a customer-managed table key, also `kms:Decrypt` on that
 * key, only when DynamoDB asks for it on the function's behalf (DynamoDB decrypts the table key
 * with the caller's permission; the data keys under it never leave DynamoDB).
 */
export function grantTable(fn: lambda.IFunction, table: dynamodb.ITable, grant: TableGrant): void {
  const actions = sorted(grant.actions);
  const indexes = sorted(grant.queryIndexes ?? []);
  if (actions.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: actions.map((a) => `dynamodb:${a}`),
        resources: [table.tableArn],
      }),
    );
  }
  if (indexes.length > 0) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: indexes.map((name) => indexArn(table, name)),
      }),
    );
  }
  if (table.encryptionKey && (actions.length > 0 || indexes.length > 0)) {
    grantTableKey(fn, table.encryptionKey);
  }
}

/** `kms:Decrypt` on the table's key, through DynamoDB only. */
function grantTableKey(fn: lambda.IFunction, key: kms.IKey): void {
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [key.keyArn],
      conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${Aws.REGION}.amazonaws.com` } },
    }),
  );
}

/** An SQS action a function sends itself, or that its event source mapping needs. */
export type QueueAction =
  | 'SendMessage'
  | 'ReceiveMessage'
  | 'DeleteMessage'
  | 'GetQueueAttributes'
  | 'ChangeMessageVisibility';

/**
 * What Lambda's SQS poller does with the function's role: receive, delete what succeeded, and read
 * the queue's attributes. (Not `ChangeMessageVisibility`: only a handler that backs a message off
 * itself needs it, and gets it separately.)
 */
export const SQS_MAPPING_ACTIONS: readonly QueueAction[] = [
  'ReceiveMessage',
  'DeleteMessage',
  'GetQueueAttributes',
];

/**
 * Grants exactly `actions` on `queue` (SendMessageBatch is authorized as SendMessage). Queues are
 * SSE-SQS encrypted, so no key permission is needed.
 */
export function grantQueue(fn: lambda.IFunction, queue: sqs.IQueue, actions: readonly QueueAction[]): void {
  fn.addToRolePolicy(
    new iam.PolicyStatement({
      actions: sorted(actions).map((a) => `sqs:${a}`),
      resources: [queue.queueArn],
    }),
  );
}

/**
 * An SQS event source mapping, as `SqsEventSource` makes it (same construct id, so a deployed
 * mapping is kept), but with the poller's three actions instead of `grantConsumeMessages`.
 */
export function addQueueEventSource(
  fn: lambda.Function,
  queue: sqs.IQueue,
  options: { batchSize: number; maxConcurrency: number; reportBatchItemFailures: boolean },
): lambda.EventSourceMapping {
  grantQueue(fn, queue, SQS_MAPPING_ACTIONS);
  return fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(queue.node)}`, {
    eventSourceArn: queue.queueArn,
    ...options,
  });
}

/** What Lambda's stream poller does with the function's role, on the table's stream ARN. */
export const STREAM_READ_ACTIONS = [
  'dynamodb:DescribeStream',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
] as const;

/**
 * The on-failure destination of a stream mapping: Lambda sends the failed range's description to
 * the queue with the function's role, which needs `sqs:SendMessage` there and nothing else (not the
 * `GetQueueAttributes`, `GetQueueUrl` of `SqsDlq`).
 */
class SendOnlyQueueDestination implements lambda.IEventSourceDlq {
  constructor(private readonly queue: sqs.IQueue) {}

  bind(_target: lambda.IEventSourceMapping, targetHandler: lambda.IFunction): lambda.DlqDestinationConfig {
    grantQueue(targetHandler, this.queue, ['SendMessage']);
    return { destination: this.queue.queueArn };
  }
}

export interface TableStreamSourceOptions {
  readonly startingPosition: lambda.StartingPosition;
  readonly batchSize: number;
  readonly filters: Array<Record<string, unknown>>;
  readonly reportBatchItemFailures: boolean;
  readonly bisectBatchOnError: boolean;
  readonly maxRecordAge: import('aws-cdk-lib').Duration;
  readonly retryAttempts?: number;
  /** A tumbling window: the one way Lambda passes the batch's shard id to the function. */
  readonly tumblingWindow?: import('aws-cdk-lib').Duration;
  /** How long Lambda gathers records before it invokes with fewer than `batchSize`. */
  readonly maxBatchingWindow?: import('aws-cdk-lib').Duration;
  /** Where Lambda records the ranges it gave up on. */
  readonly onFailure: sqs.IQueue;
}

/**
 * A table-stream event source mapping, as `DynamoEventSource` makes it (same construct id), with
 * the stream reads on the stream's ARN, `dynamodb:ListStreams` (which has no resource-level
 * permissions, hence `*`), `sqs:SendMessage` on the failure queue, and with a customer-managed
 * table key `kms:Decrypt` on it (stream records are encrypted with the table's key).
 */
export function addTableStreamSource(
  fn: lambda.Function,
  table: dynamodb.ITable,
  options: TableStreamSourceOptions,
): lambda.EventSourceMapping {
  if (!table.tableStreamArn) throw new Error(`${table.node.path} has no stream`);
  fn.addToRolePolicy(
    new iam.PolicyStatement({ actions: [...STREAM_READ_ACTIONS], resources: [table.tableStreamArn] }),
  );
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['dynamodb:ListStreams'], resources: ['*'] }));
  if (table.encryptionKey) {
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['kms:Decrypt'], resources: [table.encryptionKey.keyArn] }),
    );
  }
  const { onFailure, ...mapping } = options;
  return fn.addEventSourceMapping(`DynamoDBEventSource:${Names.nodeUniqueId(table.node)}`, {
    eventSourceArn: table.tableStreamArn,
    ...mapping,
    onFailure: new SendOnlyQueueDestination(onFailure),
  });
}
