import { type App, type CfnElement, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import type { TableAccess } from '../lib/routes.ts';

/**
 * cdk-nag's AwsSolutions pack as a CDK validation plugin: it runs on every synth (`cdk synth`,
 * `cdk deploy`, the infra tests), and any finding not acknowledged below, error or warning,
 * fails the synth with the report.
 */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
}

/**
 * Why each route without the api-key authorizer is public. Keyed by path; a public route whose
 * path is not here gets no acknowledgment, so cdk-nag (APIG4) fails the synth until someone
 * writes down why it may be public.
 */
export const PUBLIC_ROUTE_REASONS: Readonly<Record<string, string>> = {
  $default:
    'The catch-all route only reaches the fallback function, which answers the contract 404/405 from the route table alone: it has no table access and no data to protect, and an authorizer here would turn every mistyped path into a 401.',
  '/r/{referral_code}':
    'Contract endpoint 13: the public redirect that visitors reach by following a referral link in a browser; they carry no api key. It only reveals the target URL the link owner published.',
  '/api/v1/openapi.json':
    'Contract endpoint 14: the OpenAPI document is public by design (clients generate code from it before holding a key); the function has no table access.',
  '/docs':
    'The API reference page rendered from the public OpenAPI document; the function has no table access.',
};

const L1_REASON =
  'Node.js 22 is pinned deliberately: it is a supported Lambda runtime (an LTS line) and the esbuild target, the local stack and the tests all use it. L1 would fail the build whenever CDK learns a newer runtime; moving to the next LTS is a planned upgrade with its own test run, not a side effect of a dependency bump.';

const STREAM_FAILURE_QUEUE_REASON =
  'This queue is itself a dead-letter destination: the on-failure destination of a table-stream event source mapping, holding records of stream batches Lambda gave up on. SQS3 only recognises queues named in a RedrivePolicy; a DLQ behind it would add nothing, and its depth is alarmed (alarm at 1 message).';

const LIST_STREAMS_REASON =
  'dynamodb:ListStreams supports no resource-level permissions, so "*" is the only valid resource (added by the DynamoDB event source). The stream reads themselves (DescribeStream, GetRecords, GetShardIterator) are limited to this table\'s stream ARN.';

const indexWildcardReason = (access: string) =>
  `grant${access}Data on the table also covers its indexes as "table/index/*". Every index of the table is this service's own (GSI1-GSI3, lib/table-definition.ts) and the wildcard matches nothing else; the actions stay those of the function's access class (${access}).`;

const acknowledge = (construct: IConstruct, id: string, reason: string) =>
  Validations.of(construct).acknowledge({ id, reason });

/**
 * What the acknowledged findings concern, and nothing more: the stack passes these constructs in
 * rather than itself, so this module does not depend on `stack.ts` (which calls it).
 */
export interface NagSubjects {
  /** Routes without the api-key authorizer, by path (APIG4). */
  readonly publicRoutes: ReadonlyArray<{ readonly path: string; readonly route: IConstruct }>;
  /** Every function of the stack (L1). */
  readonly functions: readonly lambda.IFunction[];
  /** The service table, whose `index/*` the table grants add (IAM5). */
  readonly table: dynamodb.ITable;
  /** Each function with a grant on the table, and the access class of that grant (IAM5). */
  readonly tableGrants: ReadonlyArray<{
    readonly fn: lambda.IFunction;
    readonly access: Exclude<TableAccess, 'none'>;
  }>;
  /** Functions reading the table stream (IAM5 `*` for ListStreams). */
  readonly streamConsumers: readonly lambda.IFunction[];
  /** The stream mappings' on-failure destination queues (SQS3). */
  readonly streamFailureQueues: readonly IConstruct[];
}

/**
 * Every acknowledged finding of the stack, each on the construct it concerns (its children
 * included: the function, not the whole stack), with the reason a reviewer needs.
 */
export function addNagSuppressions(subjects: NagSubjects): void {
  // APIG4: public routes, each with its own reason.
  for (const { path, route } of subjects.publicRoutes) {
    const reason = PUBLIC_ROUTE_REASONS[path];
    if (reason) acknowledge(route, 'AwsSolutions-APIG4', reason);
  }

  // L1: the pinned runtime, on every function.
  for (const fn of subjects.functions) acknowledge(fn, 'AwsSolutions-L1', L1_REASON);

  // IAM5: `table/index/*` from the route table's grants and the authorizer's read grant.
  const table = subjects.table;
  const tableId = Stack.of(table).getLogicalId(table.node.defaultChild as CfnElement);
  const indexWildcard = `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`;
  const accessName = { read: 'Read', write: 'Write', 'read-write': 'ReadWrite' } as const;
  for (const { fn, access } of subjects.tableGrants) {
    acknowledge(fn.role ?? fn, indexWildcard, indexWildcardReason(accessName[access]));
  }

  // IAM5 `*` (ListStreams) and SQS3 (on-failure destinations) of the stream consumers.
  for (const fn of subjects.streamConsumers) {
    acknowledge(fn.role ?? fn, 'AwsSolutions-IAM5[Resource::*]', LIST_STREAMS_REASON);
  }
  for (const queue of subjects.streamFailureQueues) {
    acknowledge(queue, 'AwsSolutions-SQS3', STREAM_FAILURE_QUEUE_REASON);
  }
}
