import { type App, Validations } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

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
  '/dashboard':
    'The dashboard web app: a static page with its script and stylesheet, holding no data. It calls the key-protected API with the key the user pastes; the function has no table access.',
  '/health':
    'Liveness for load balancers and uptime checks, which hold no api key: it answers a constant {"status":"ok"}, calls nothing and has no table access. The readiness check that reads the table needs a key.',
};

const L1_REASON =
  'Node.js 22 is pinned deliberately: it is a supported Lambda runtime (an LTS line) and the esbuild target, the local stack and the tests all use it. L1 would fail the build whenever CDK learns a newer runtime; moving to the next LTS is a planned upgrade with its own test run, not a side effect of a dependency bump.';

const STREAM_FAILURE_QUEUE_REASON =
  'This queue is itself a dead-letter destination: the on-failure destination of a table-stream event source mapping, holding records of stream batches Lambda gave up on. SQS3 only recognises queues named in a RedrivePolicy; a DLQ behind it would add nothing, and its depth is alarmed (alarm at 1 message).';

const LIST_STREAMS_REASON =
  'dynamodb:ListStreams, which Lambda\'s stream poller needs, supports no resource-level permissions, so "*" is the only valid resource. The stream reads themselves (DescribeStream, GetRecords, GetShardIterator) are limited to this table\'s stream ARN.';

const XRAY_REASON =
  'Active tracing (-c tracing=true) lets the function send its X-Ray segments: xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions, so "*" is the only valid resource. Nothing else of the role uses "*".';

const acknowledge = (construct: IConstruct, id: string, reason: string) =>
  Validations.of(construct).acknowledge({ id, reason });

/**
 * What the acknowledged findings concern, and nothing more: the stack passes these constructs in
 * rather than itself, so this module does not depend on `stack.ts` (which calls it).
 */
export interface NagSubjects {
  /** Routes without the api-key authorizer, by path (APIG4). */
  readonly publicRoutes: ReadonlyArray<{ readonly path: string; readonly route: IConstruct }>;
  /** Every function of the stack (L1; IAM5 `*` for X-Ray with tracing on). */
  readonly functions: readonly lambda.IFunction[];
  /** Functions reading the table stream (IAM5 `*` for ListStreams). */
  readonly streamConsumers: readonly lambda.IFunction[];
  /** Whether the functions have active tracing, whose X-Ray actions take no resource (IAM5 `*`). */
  readonly tracing: boolean;
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

  // IAM5 `*`: ListStreams on the stream consumers, the X-Ray actions on every function when traced.
  // (No table grant has a wildcard: each names the table and the indexes it queries.)
  const streamConsumers = new Set(subjects.streamConsumers);
  for (const fn of subjects.functions) {
    const reasons = [
      ...(streamConsumers.has(fn) ? [LIST_STREAMS_REASON] : []),
      ...(subjects.tracing ? [XRAY_REASON] : []),
    ];
    if (reasons.length > 0) acknowledge(fn.role ?? fn, 'AwsSolutions-IAM5[Resource::*]', reasons.join(' '));
  }

  // SQS3: the stream mappings' on-failure destinations.
  for (const queue of subjects.streamFailureQueues) {
    acknowledge(queue, 'AwsSolutions-SQS3', STREAM_FAILURE_QUEUE_REASON);
  }
}
