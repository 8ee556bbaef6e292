import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as sns from 'aws-cdk-lib/aws-sns';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { ESM_REQUIRE_BANNER, projectRoot } from '../../infra/functions.ts';
import { ReferralTable } from '../../infra/table.ts';
import { Webhooks } from '../../infra/webhooks.ts';
import { tempOutdir } from './synth.ts';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are free-form JSON.
type Resources = Record<string, { Type: string; Properties: Record<string, any> }>;

function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const { stage: _ignored, ...context } = cdkJson.context ?? {};
  return context;
}

/** The construct in a throwaway stack, next to the real table construct (stream NEW_IMAGE). */
function synthWebhooks(options: { alarmTopic?: boolean; reserveConcurrency?: boolean } = {}) {
  // Bundling is skipped here (the template is the same); the bundles are built below.
  const app = new App({
    outdir: tempOutdir(),
    context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] },
  });
  const stack = new Stack(app, 'WebhooksTest');
  const { table } = new ReferralTable(stack, 'Storage', { stage: 'dev' });
  const topic = options.alarmTopic ? new sns.Topic(stack, 'Alarms') : undefined;
  const webhooks = new Webhooks(stack, 'Webhooks', {
    table,
    stage: 'dev',
    alarmTopic: topic,
    reserveConcurrency: options.reserveConcurrency,
  });
  const template = Template.fromStack(stack);
  const resources = template.toJSON().Resources as Resources;
  const id = (construct: { node: { defaultChild?: unknown } }) =>
    stack.getLogicalId(construct.node.defaultChild as never);
  return { stack, table, webhooks, template, resources, id, topic };
}

describe('Webhooks construct', () => {
  let s: ReturnType<typeof synthWebhooks>;
  beforeAll(() => {
    s = synthWebhooks({ alarmTopic: true });
  });

  it('makes an encrypted, TLS-only retry queue that redrives to the DLQ above 12 attempts', () => {
    const queue = s.resources[s.id(s.webhooks.retryQueue)]!.Properties;
    expect(queue.FifoQueue).toBeUndefined();
    expect(queue.SqsManagedSseEnabled).toBe(true);
    expect(queue.MessageRetentionPeriod).toBe(14 * 86400);
    expect(queue.RedrivePolicy.deadLetterTargetArn).toEqual({
      'Fn::GetAtt': [s.id(s.webhooks.deadLetterQueue), 'Arn'],
    });
    expect(queue.RedrivePolicy.maxReceiveCount).toBe(20);
    // enforceSSL: a queue policy denying every non-TLS request, on each queue.
    for (const q of [
      s.webhooks.firstAttemptQueue,
      s.webhooks.retryQueue,
      s.webhooks.deadLetterQueue,
      s.webhooks.firstAttemptDeadLetterQueue,
      s.webhooks.streamFailureQueue,
    ]) {
      s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: s.id(q) }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Action: 'sqs:*',
              Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            }),
          ]),
        },
      });
    }
  });

  it('makes the first-attempt queue a high-throughput FIFO queue with its own FIFO dead-letter queue', () => {
    const queue = s.resources[s.id(s.webhooks.firstAttemptQueue)]!.Properties;
    expect(queue).toMatchObject({
      FifoQueue: true,
      ContentBasedDeduplication: false,
      DeduplicationScope: 'messageGroup',
      FifoThroughputLimit: 'perMessageGroupId',
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86400,
      VisibilityTimeout: 180,
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [s.id(s.webhooks.firstAttemptDeadLetterQueue), 'Arn'] },
        maxReceiveCount: 10,
      },
    });
    const dlq = s.resources[s.id(s.webhooks.firstAttemptDeadLetterQueue)]!.Properties;
    expect(dlq).toMatchObject({
      FifoQueue: true,
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 1209600,
    });
  });

  it('keeps dead letters 14 days, encrypted, and alarms as soon as one arrives', () => {
    const dlq = s.resources[s.id(s.webhooks.deadLetterQueue)]!.Properties;
    expect(dlq.MessageRetentionPeriod).toBe(1209600);
    expect(dlq.SqsManagedSseEnabled).toBe(true);
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        { Name: 'QueueName', Value: { 'Fn::GetAtt': [s.id(s.webhooks.deadLetterQueue), 'QueueName'] } },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: s.stack.getLogicalId(s.topic!.node.defaultChild as never) }],
    });
    for (const queue of [s.webhooks.firstAttemptDeadLetterQueue, s.webhooks.streamFailureQueue]) {
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [s.id(queue), 'QueueName'] } }],
        Threshold: 0,
        AlarmActions: [{ Ref: s.stack.getLogicalId(s.topic!.node.defaultChild as never) }],
      });
    }
  });

  it('runs both lanes on Node.js 22 arm64 with their settings and a log group with retention', () => {
    for (const lane of [s.webhooks.firstAttemptFunction, s.webhooks.retryFunction]) {
      const fn = s.resources[s.id(lane)]!.Properties;
      expect(fn.Runtime).toBe('nodejs22.x');
      expect(fn.Architectures).toEqual(['arm64']);
      expect(fn.Timeout).toBe(30);
      expect(fn.MemorySize).toBe(256);
      expect(fn.Environment.Variables).toMatchObject({
        TABLE_NAME: { Ref: s.id(s.table) },
        STAGE: 'dev',
        WEBHOOK_RETRY_QUEUE_URL: { Ref: s.id(s.webhooks.retryQueue) },
        WEBHOOK_DLQ_URL: { Ref: s.id(s.webhooks.deadLetterQueue) },
      });
      // Never in a deployed stage: private destinations stay refused.
      expect(fn.Environment.Variables.ALLOW_PRIVATE_WEBHOOKS).toBeUndefined();
      expect(fn.Environment.Variables.WEBHOOK_RETRY_DELAYS).toBeUndefined();
      // Not reserved unless asked for (prod): a new account's quota could not give it.
      expect(fn.ReservedConcurrentExecutions).toBeUndefined();
      const logGroupId = fn.LoggingConfig.LogGroup.Ref as string;
      expect(s.resources[logGroupId]!.Properties.RetentionInDays).toBe(30);
    }
  });

  it('invokes each lane with one message at a time, partial batch responses and its own concurrency', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [s.id(s.webhooks.firstAttemptQueue), 'Arn'] },
      FunctionName: { Ref: s.id(s.webhooks.firstAttemptFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 100 },
      BatchSize: 1,
    });
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [s.id(s.webhooks.retryQueue), 'Arn'] },
      FunctionName: { Ref: s.id(s.webhooks.retryFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 50 },
      BatchSize: 1,
    });
  });

  it('reserves each lane its mapping concurrency when asked to', () => {
    const reserved = synthWebhooks({ reserveConcurrency: true });
    const of = (fn: { node: { defaultChild?: unknown } }) =>
      reserved.resources[reserved.id(fn)]!.Properties.ReservedConcurrentExecutions;
    expect(of(reserved.webhooks.firstAttemptFunction)).toBe(100);
    expect(of(reserved.webhooks.retryFunction)).toBe(50);
  });

  it('sets each queue visibility timeout to six times the function timeout', () => {
    for (const [queue, fn] of [
      [s.webhooks.firstAttemptQueue, s.webhooks.firstAttemptFunction],
      [s.webhooks.retryQueue, s.webhooks.retryFunction],
    ] as const) {
      // 30 s: a 15 s attempt, DNS, a GetItem, an SQS call; AWS asks for six times that.
      expect(s.resources[s.id(fn)]!.Properties.Timeout).toBe(30);
      expect(s.resources[s.id(queue)]!.Properties.VisibilityTimeout).toBe(180);
    }
  });

  it('feeds the consumer from the table stream: event INSERTs, link actions and reward changes only, at once, nothing skipped', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [s.id(s.table), 'StreamArn'] },
      FunctionName: { Ref: s.id(s.webhooks.streamConsumer) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      FilterCriteria: {
        Filters: [
          {
            Pattern:
              '{"eventName":["INSERT"],"dynamodb":{"NewImage":{"event_type":{"S":[{"exists":true}]}}}}',
          },
          {
            Pattern:
              '{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"last_action":{"M":{"id":{"N":[{"exists":true}]}}}}}}',
          },
          {
            Pattern:
              '{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"type":{"S":["reward"]},"event_type":{"S":[{"exists":true}]}}}}',
          },
        ],
      },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      // 23 hours: just inside the stream's 24 h retention.
      MaximumRecordAgeInSeconds: 82800,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [s.id(s.webhooks.streamFailureQueue), 'Arn'] } },
      },
    });
    // No batching window: another campaign's first attempt must start within 1 s of its event.
    const mapping = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (r) =>
        JSON.stringify(r.Properties.FunctionName) ===
        JSON.stringify({ Ref: s.id(s.webhooks.streamConsumer) }),
    )!.Properties;
    expect(mapping.MaximumBatchingWindowInSeconds).toBeUndefined();
    const consumer = s.resources[s.id(s.webhooks.streamConsumer)]!.Properties;
    expect(consumer.Timeout).toBe(30);
    expect(consumer.MemorySize).toBe(256);
    expect(consumer.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({
      Ref: s.id(s.webhooks.firstAttemptQueue),
    });
    expect(consumer.Environment.Variables.TABLE_NAME).toEqual({ Ref: s.id(s.table) });
  });

  /** Every Allow statement of the function's role, flattened to [action, resource] pairs. */
  function permissions(fnConstruct: { node: { defaultChild?: unknown } }): Array<[string, string]> {
    const fn = s.resources[s.id(fnConstruct)]!.Properties;
    const roleId = fn.Role['Fn::GetAtt'][0] as string;
    const out: Array<[string, string]> = [];
    for (const r of Object.values(s.resources)) {
      if (r.Type !== 'AWS::IAM::Policy') continue;
      if (!(r.Properties.Roles as Array<{ Ref: string }>).some((x) => x.Ref === roleId)) continue;
      for (const st of r.Properties.PolicyDocument.Statement) {
        if (st.Effect !== 'Allow') continue;
        const actions = Array.isArray(st.Action) ? st.Action : [st.Action];
        const res = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
        for (const a of actions) for (const x of res) out.push([a, JSON.stringify(x)]);
      }
    }
    return out;
  }

  it('gives each lane GetItem, UpdateItem and BatchWriteItem (the delivery log) on the table, consume on its queue, send to the retry queue and DLQ', () => {
    const tableArn = JSON.stringify({ 'Fn::GetAtt': [s.id(s.table), 'Arn'] });
    const arn = (q: { node: { defaultChild?: unknown } }) =>
      JSON.stringify({ 'Fn::GetAtt': [s.id(q), 'Arn'] });
    for (const [fn, queue] of [
      [s.webhooks.firstAttemptFunction, s.webhooks.firstAttemptQueue],
      [s.webhooks.retryFunction, s.webhooks.retryQueue],
    ] as const) {
      const perms = permissions(fn);
      expect(perms.filter(([a]) => a.startsWith('dynamodb:'))).toEqual([
        ['dynamodb:BatchWriteItem', tableArn],
        ['dynamodb:GetItem', tableArn],
        ['dynamodb:UpdateItem', tableArn],
      ]);
      // What Lambda's poller needs on the lane's own queue, and no GetQueueUrl.
      expect(perms).toContainEqual(['sqs:ReceiveMessage', arn(queue)]);
      expect(perms).toContainEqual(['sqs:DeleteMessage', arn(queue)]);
      expect(perms).toContainEqual(['sqs:GetQueueAttributes', arn(queue)]);
      expect(perms.filter(([a]) => a === 'sqs:GetQueueUrl')).toEqual([]);
      expect(
        perms
          .filter(([a]) => a === 'sqs:SendMessage')
          .map(([, r]) => r)
          .sort(),
      ).toEqual([arn(s.webhooks.retryQueue), arn(s.webhooks.deadLetterQueue)].sort());
    }
    // Only the retry lane backs a message off (on its own queue).
    expect(permissions(s.webhooks.retryFunction)).toContainEqual([
      'sqs:ChangeMessageVisibility',
      arn(s.webhooks.retryQueue),
    ]);
    expect(
      permissions(s.webhooks.firstAttemptFunction).filter(([a]) => a === 'sqs:ChangeMessageVisibility'),
    ).toEqual([]);
    // The first-attempt lane never consumes the retry queue, nor the other way round.
    expect(permissions(s.webhooks.firstAttemptFunction)).not.toContainEqual([
      'sqs:ReceiveMessage',
      arn(s.webhooks.retryQueue),
    ]);
    expect(permissions(s.webhooks.retryFunction)).not.toContainEqual([
      'sqs:ReceiveMessage',
      arn(s.webhooks.firstAttemptQueue),
    ]);
  });

  it('gives the stream consumer the stream, queue send, and the writes of an action item on the table', () => {
    const perms = permissions(s.webhooks.streamConsumer);
    const queueArn = JSON.stringify({ 'Fn::GetAtt': [s.id(s.webhooks.firstAttemptQueue), 'Arn'] });
    const tableArn = JSON.stringify({ 'Fn::GetAtt': [s.id(s.table), 'Arn'] });
    expect(perms).toContainEqual(['sqs:SendMessage', queueArn]);
    expect(perms.some(([a]) => a === 'dynamodb:GetRecords')).toBe(true);
    // An action item is a conditional Put beside the campaign's GetItem, taken back (DeleteItem)
    // if the campaign is gone, or for a keyed action one transaction of conditional Puts and a
    // ConditionCheck of the campaign; then the action and expired held keys are taken off the
    // link (conditional UpdateItems). The queue's check reads the campaigns (BatchGetItem). The
    // feed and the rollups are the second reader's (`infra/rollups.ts`).
    expect(perms.filter(([a, r]) => a.startsWith('dynamodb:') && r === tableArn).sort()).toEqual([
      ['dynamodb:BatchGetItem', tableArn],
      ['dynamodb:ConditionCheckItem', tableArn],
      ['dynamodb:DeleteItem', tableArn],
      ['dynamodb:GetItem', tableArn],
      ['dynamodb:PutItem', tableArn],
      ['dynamodb:UpdateItem', tableArn],
    ]);
    for (const item of ['Query', 'Scan', 'BatchWriteItem']) {
      expect(perms.some(([a]) => a === `dynamodb:${item}`)).toBe(false);
    }
  });

  it('refuses a table without a stream', () => {
    const stack = new Stack(new App({ outdir: tempOutdir() }), 'NoStream');
    const table = new dynamodb.Table(stack, 'T', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
    });
    expect(() => new Webhooks(stack, 'W', { table, stage: 'dev' })).toThrow(/stream/);
  });

  it.each(['queue/deliver-webhook', 'queue/retry-webhook', 'stream/enqueue-webhook-events'])(
    'bundles %s as the stack does (ESM, nothing external but Node built-ins)',
    async (handler) => {
      const result = await build({
        entryPoints: [join(projectRoot, 'functions', `${handler}.ts`)],
        bundle: true,
        write: false,
        platform: 'node',
        format: 'esm',
        target: 'node22',
        minify: true,
        mainFields: ['module', 'main'],
        banner: { js: ESM_REQUIRE_BANNER },
        logLevel: 'silent',
        metafile: true,
      });
      const output = result.outputFiles[0]!;
      const external = Object.values(result.metafile.outputs)
        .flatMap((o) => o.imports)
        .filter((i) => i.external && !isBuiltin(i.path));
      expect(external).toEqual([]);
      // Bundle size is a tracked figure (architecture.md): keep delivery lean.
      expect(output.contents.byteLength).toBeLessThan(1_500_000);
    },
  );
});
