import { App, Token } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { addReferralApiStack } from '../../infra/stack.ts';
import { createTableInput } from '../../lib/local/dynamodb.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import {
  type CfnResource,
  logicalIdOf,
  resourcesOfType,
  type Synthesized,
  synth,
  synthProd,
  tempOutdir,
} from './synth.ts';

let dev: Synthesized;
let prod: Synthesized;
let unset: Synthesized;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synthProd();
  unset = synth({});
});

const tableOf = (s: Synthesized): CfnResource => {
  const tables = resourcesOfType(s.json, 'AWS::DynamoDB::Table');
  expect(tables).toHaveLength(1);
  return tables[0]![1];
};

describe('app and stages', () => {
  it('names the stack after the stage, dev when no stage is given', () => {
    expect(dev.stack.stackName).toBe('ReferralApi-dev');
    expect(prod.stack.stackName).toBe('ReferralApi-prod');
    expect(unset.stack.stackName).toBe('ReferralApi-dev');
    expect(unset.stack.stage).toBe('dev');
  });

  it('rejects an unknown stage instead of deploying a third, unprotected copy', () => {
    const app = new App({ outdir: tempOutdir(), context: { stage: 'prdo', 'aws:cdk:bundling-stacks': [] } });
    expect(() => addReferralApiStack(app)).toThrow(/Unknown stage "prdo"/);
  });

  it('keeps the logical ids of the deployed queues and their alarms (a new id replaces the queue, losing its messages)', () => {
    for (const s of [dev, prod]) {
      const { webhooks, purge } = s.stack;
      const ids = Object.fromEntries(
        Object.entries({
          retryQueue: webhooks.retryQueue,
          deadLetterQueue: webhooks.deadLetterQueue,
          firstAttemptQueue: webhooks.firstAttemptQueue,
          firstAttemptDeadLetterQueue: webhooks.firstAttemptDeadLetterQueue,
          streamFailureQueue: webhooks.streamFailureQueue,
          deadLetterAlarm: webhooks.deadLetterAlarm,
          firstAttemptDeadLetterAlarm: webhooks.firstAttemptDeadLetterAlarm,
          streamFailureAlarm: webhooks.streamFailureAlarm,
          purgeQueue: purge.queue,
          purgeDeadLetterQueue: purge.deadLetterQueue,
          purgeStreamFailureQueue: purge.streamFailureQueue,
          purgeDeadLetterAlarm: purge.deadLetterAlarm,
          purgeStreamFailureAlarm: purge.streamFailureAlarm,
          purgeBacklogAlarm: purge.backlogAlarm,
        }).map(([name, construct]) => [name, logicalIdOf(construct)]),
      );
      expect(ids, s.stack.stage).toEqual({
        retryQueue: 'WebhooksQueueCBC86013',
        deadLetterQueue: 'WebhooksDeadLetterQueue1C65998B',
        firstAttemptQueue: 'WebhooksFirstAttemptQueueDBCD4134',
        firstAttemptDeadLetterQueue: 'WebhooksFirstAttemptDeadLetterQueue8629E014',
        streamFailureQueue: 'WebhooksStreamFailureQueue9E50A87B',
        deadLetterAlarm: 'WebhooksDeadLetterAlarmE1939226',
        firstAttemptDeadLetterAlarm: 'WebhooksFirstAttemptDeadLetterAlarm5DC5EC9E',
        streamFailureAlarm: 'WebhooksStreamFailureAlarm5AD41455',
        purgeQueue: 'PurgeQueue33ACD657',
        purgeDeadLetterQueue: 'PurgeDeadLetterQueueC9E3FC2E',
        purgeStreamFailureQueue: 'PurgeStreamFailureQueue5D3BD0AD',
        purgeDeadLetterAlarm: 'PurgeDeadLetterAlarm9A498240',
        purgeStreamFailureAlarm: 'PurgeStreamFailureAlarm15EA94C9',
        purgeBacklogAlarm: 'PurgeBacklogAlarm187432F5',
      });
    }
  });

  it('is environment-agnostic and needs no context lookups (offline synth)', () => {
    for (const s of [dev, prod]) {
      expect(Token.isUnresolved(s.stack.account)).toBe(true);
      expect(Token.isUnresolved(s.stack.region)).toBe(true);
      expect(s.assembly.manifest.missing ?? []).toEqual([]);
    }
  });

  it('synthesises without warnings or errors', () => {
    for (const s of [dev, prod]) {
      const messages = s.assembly.getStackByName(s.stack.stackName).messages;
      expect(messages.filter((m) => m.level !== 'info').map((m) => `${m.id}: ${m.entry.data}`)).toEqual([]);
    }
  });

  it('outputs the stage, the API URL, the public base, the table name, the queue URLs and the first-key command', () => {
    const tableId = logicalIdOf(dev.stack.table);
    const outputs = dev.json.Outputs ?? {};
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'Stage',
        'ApiUrl',
        'PublicBaseUrl',
        'TableName',
        'WebhookFirstAttemptQueueUrl',
        'WebhookRetryQueueUrl',
        'WebhookDeadLetterQueueUrl',
        'WebhookFirstAttemptDeadLetterQueueUrl',
        'WebhookStreamFailureQueueUrl',
        'PurgeQueueUrl',
        'PurgeDeadLetterQueueUrl',
        'PurgeStreamFailureQueueUrl',
        'CreateApiKeyCommand',
      ].sort(),
    );
    expect(outputs.Stage?.Value).toBe('dev');
    expect(prod.json.Outputs?.Stage?.Value).toBe('prod');
    for (const [name, output] of Object.entries(prod.json.Outputs ?? {})) {
      expect(output.Description, name).toMatch(/\(prod\)$/);
    }
    expect(JSON.stringify(outputs.ApiUrl?.Value)).toContain('execute-api');
    expect(outputs.TableName?.Value).toEqual({ Ref: tableId });
    const queues = {
      WebhookFirstAttemptQueueUrl: dev.stack.webhooks.firstAttemptQueue,
      WebhookRetryQueueUrl: dev.stack.webhooks.retryQueue,
      WebhookDeadLetterQueueUrl: dev.stack.webhooks.deadLetterQueue,
      WebhookFirstAttemptDeadLetterQueueUrl: dev.stack.webhooks.firstAttemptDeadLetterQueue,
      WebhookStreamFailureQueueUrl: dev.stack.webhooks.streamFailureQueue,
      PurgeQueueUrl: dev.stack.purge.queue,
      PurgeDeadLetterQueueUrl: dev.stack.purge.deadLetterQueue,
      PurgeStreamFailureQueueUrl: dev.stack.purge.streamFailureQueue,
    };
    for (const [name, queue] of Object.entries(queues)) {
      expect(outputs[name]?.Value, name).toEqual({ Ref: logicalIdOf(queue) });
    }
    expect(outputs.CreateApiKeyCommand?.Value).toEqual({
      'Fn::Join': [
        '',
        [
          'npm run api-key -- create --tenant <name> --table ',
          { Ref: tableId },
          ' --region ',
          { Ref: 'AWS::Region' },
        ],
      ],
    });
  });
});

describe('DynamoDB table (from lib/table-definition.ts)', () => {
  it('has the shared key schema, on-demand billing, a stage-specific name', () => {
    for (const [s, stage] of [
      [dev, 'dev'],
      [prod, 'prod'],
    ] as const) {
      const p = tableOf(s).Properties ?? {};
      expect(p.TableName).toBe(`referrals-${stage}`);
      expect(p.BillingMode).toBe('PAY_PER_REQUEST');
      expect(p.KeySchema).toEqual([
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ]);
    }
  });

  it('has point-in-time recovery, the TTL attribute and a NEW_IMAGE stream in every stage', () => {
    for (const s of [dev, prod]) {
      const p = tableOf(s).Properties ?? {};
      expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(p.TimeToLiveSpecification).toEqual({
        AttributeName: tableDefinition.ttlAttribute,
        Enabled: true,
      });
      expect(p.StreamSpecification).toEqual({ StreamViewType: tableDefinition.streamViewType });
      expect(tableDefinition.streamViewType).toBe('NEW_IMAGE');
    }
  });

  it('has exactly the GSIs of the table definition, each projecting only its attributes, with string keys', () => {
    const p = tableOf(dev).Properties ?? {};
    const expected = tableDefinition.globalSecondaryIndexes.map((g) => ({
      IndexName: g.indexName,
      KeySchema: [
        { AttributeName: g.partitionKey, KeyType: 'HASH' },
        { AttributeName: g.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...g.projectedAttributes] },
    }));
    expect(p.GlobalSecondaryIndexes).toEqual(expected);
    // The local stack creates its table from the same definition.
    expect(createTableInput('t').GlobalSecondaryIndexes).toEqual(expected);
    const projected = tableDefinition.globalSecondaryIndexes.flatMap((g) => g.projectedAttributes);
    expect(projected).not.toContain('last_action');
    const keyNames = [
      tableDefinition.partitionKey,
      tableDefinition.sortKey,
      ...tableDefinition.globalSecondaryIndexes.flatMap((g) => [g.partitionKey, g.sortKey]),
    ];
    expect(p.AttributeDefinitions).toEqual(
      keyNames.map((name) => ({ AttributeName: name, AttributeType: 'S' })),
    );
  });

  it('prod keeps the table: Retain on delete and replace, deletion protection on', () => {
    const table = tableOf(prod);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
    expect(table.Properties?.DeletionProtectionEnabled).toBe(true);
  });

  it('dev deletes the table with the stack', () => {
    const table = tableOf(dev);
    expect(table.DeletionPolicy).toBe('Delete');
    expect(table.UpdateReplacePolicy).toBe('Delete');
    expect(table.Properties?.DeletionProtectionEnabled ?? false).toBe(false);
  });

  it('reserves the webhook lanes their concurrency in prod only', () => {
    const reserved = (s: typeof dev, fn: Parameters<typeof logicalIdOf>[0]) =>
      s.json.Resources[logicalIdOf(fn)]?.Properties?.ReservedConcurrentExecutions;
    expect(reserved(prod, prod.stack.webhooks.firstAttemptFunction)).toBe(100);
    expect(reserved(prod, prod.stack.webhooks.retryFunction)).toBe(50);
    expect(reserved(dev, dev.stack.webhooks.firstAttemptFunction)).toBeUndefined();
    expect(reserved(dev, dev.stack.webhooks.retryFunction)).toBeUndefined();
  });

  it('dev cleans up after itself: no resource of the dev stack is retained', () => {
    const retained = Object.entries(dev.json.Resources).filter(
      ([, r]) => r.DeletionPolicy === 'Retain' || r.DeletionPolicy === 'RetainExceptOnCreate',
    );
    expect(retained.map(([id]) => id)).toEqual([]);
    const queues = resourcesOfType(dev.json, 'AWS::SQS::Queue');
    expect(queues).toHaveLength(9);
    for (const [id, q] of queues) expect(q.DeletionPolicy, id).toBe('Delete');
  });

  it('prod retains exactly the data: the table and the log groups', () => {
    const retained = Object.entries(prod.json.Resources)
      .filter(([, r]) => r.DeletionPolicy === 'Retain')
      .map(([, r]) => r.Type);
    expect(new Set(retained)).toEqual(new Set(['AWS::DynamoDB::Table', 'AWS::Logs::LogGroup']));
  });

  it('log groups follow the stage: retained in prod, deleted in dev', () => {
    for (const [s, policy] of [
      [dev, 'Delete'],
      [prod, 'Retain'],
    ] as const) {
      const groups = resourcesOfType(s.json, 'AWS::Logs::LogGroup');
      expect(groups.length).toBe(s.stack.allFunctions.length + 1);
      for (const [id, g] of groups) expect(g.DeletionPolicy, id).toBe(policy);
    }
  });
});
