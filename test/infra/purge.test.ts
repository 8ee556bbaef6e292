import { Match } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PURGE_RECORD_FILTER } from '../../lib/db/purge-filter.ts';
import { FEED_AND_ROLLUP_FILTERS } from '../../lib/webhooks/stream-filter.ts';
import { actionsOf, logicalIdOf, referencedIds, roleStatementsOf, type Synthesized, synth } from './synth.ts';

let s: Synthesized;
let id: (c: Parameters<typeof logicalIdOf>[0]) => string;

beforeAll(() => {
  s = synth({ stage: 'dev' });
  id = logicalIdOf;
});

const props = (construct: Parameters<typeof logicalIdOf>[0]) =>
  s.json.Resources[id(construct)]?.Properties ?? {};

describe('campaign purge (infra/purge.ts)', () => {
  it('makes encrypted, TLS-only queues that keep messages 14 days; the purge queue redrives to its DLQ', () => {
    const { purge } = s.stack;
    for (const q of [purge.queue, purge.deadLetterQueue, purge.streamFailureQueue]) {
      expect(props(q).SqsManagedSseEnabled).toBe(true);
      expect(props(q).MessageRetentionPeriod).toBe(14 * 86400);
      s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id(q) }],
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
    expect(props(purge.queue).RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [id(purge.deadLetterQueue), 'Arn'] },
      maxReceiveCount: 5,
    });
  });

  it('runs the purge for up to 5 minutes with 256 MB, with a visibility timeout of six times that', () => {
    const fn = props(s.stack.purge.purgeFunction);
    expect(fn.Timeout).toBe(300);
    expect(fn.MemorySize).toBe(256);
    expect(props(s.stack.purge.queue).VisibilityTimeout).toBe(1800);
    expect(fn.Environment.Variables).toEqual({
      STAGE: 'dev',
      POWERTOOLS_SERVICE_NAME: 'referral-api',
      NODE_OPTIONS: '--enable-source-maps',
      TABLE_NAME: { Ref: id(s.stack.table) },
      PURGE_QUEUE_URL: { Ref: id(s.stack.purge.queue) },
      PURGE_SWEEP_DELAY_SECONDS: '60',
      PUBLIC_BASE_URL: { 'Fn::GetAtt': [id(s.stack.api.httpApi), 'ApiEndpoint'] },
    });
  });

  it('feeds the purge one message at a time, with partial batch responses and bounded concurrency', () => {
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [id(s.stack.purge.queue), 'Arn'] },
      FunctionName: { Ref: id(s.stack.purge.purgeFunction) },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 5 },
    });
  });

  it('triggers from REMOVEs of campaign items on the table stream, through its second reader, losing none', () => {
    const mapping = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).find(
      (r) =>
        JSON.stringify(r.Properties.FunctionName) ===
        JSON.stringify({ Ref: id(s.stack.rollups.streamConsumer) }),
    )!.Properties;
    expect(mapping).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [id(s.stack.table), 'StreamArn'] },
      StartingPosition: 'TRIM_HORIZON',
      // The deployed windows, pinned (the test stacks shorten them): a second of records per batch
      // (visits in total_clicks and the campaign's series within the contract's 2 s; a purge job
      // waits that second too, which is harmless), and a 45 s tumbling window whose state carries
      // the sums written within a minute.
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 1,
      TumblingWindowInSeconds: 45,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 100,
      // One hour: given up well inside the stream's 24 h retention, so a replay stays possible.
      MaximumRecordAgeInSeconds: 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [id(s.stack.purge.streamFailureQueue), 'Arn'] } },
      },
    });
    // The events, the rollups' records and the campaign REMOVEs, nothing else.
    expect(mapping.FilterCriteria.Filters.map((f: { Pattern: string }) => JSON.parse(f.Pattern))).toEqual(
      FEED_AND_ROLLUP_FILTERS,
    );
    expect(FEED_AND_ROLLUP_FILTERS).toContainEqual(PURGE_RECORD_FILTER);
    const consumer = props(s.stack.rollups.streamConsumer);
    expect(consumer.Timeout).toBe(60);
    expect(consumer.MemorySize).toBe(256);
    expect(consumer.Environment.Variables.PURGE_QUEUE_URL).toEqual({ Ref: id(s.stack.purge.queue) });
    expect(consumer.Environment.Variables.TABLE_NAME).toEqual({ Ref: id(s.stack.table) });
    // The window's sums written once 30 s old, rankings merged 10 s after: the defaults of
    // lib/config.ts, which only the local stack's settings change.
    expect(consumer.Environment.Variables.ANALYTICS_FLUSH_AGE_MS).toBeUndefined();
    expect(consumer.Environment.Variables.ANALYTICS_BOARD_AGE_MS).toBeUndefined();
  });

  describe('the filter the handler module exports', () => {
    const saved = { ...process.env };
    beforeAll(() => {
      // The module reads its queue URL at load, as in Lambda.
      process.env.PURGE_QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000/purge';
      process.env.TABLE_NAME = 'referrals-infra-test';
      process.env.AWS_REGION ??= 'us-east-1';
    });
    afterAll(() => {
      process.env = saved;
    });

    it('is the one the stack deploys', async () => {
      const mod = (await import('../../functions/stream/feed-and-rollups.ts')) as {
        PURGE_RECORD_FILTER: unknown;
      };
      expect(mod.PURGE_RECORD_FILTER).toEqual(PURGE_RECORD_FILTER);
    });
  });

  it('lets the purge read, reserve and delete exactly what lib/db/purge.ts touches', () => {
    const tableId = id(s.stack.table);
    const dynamo = roleStatementsOf(s.json, id(s.stack.purge.purgeFunction))
      .filter((st) => actionsOf(st).some((a) => a.startsWith('dynamodb:')))
      .map((st) => ({ ...st, Action: Array.isArray(st.Action) ? [...st.Action].sort() : st.Action }));
    expect(dynamo).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:BatchWriteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
        Resource: { 'Fn::GetAtt': [tableId, 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        // GSI2 alone: its links by campaign. Never `index/*`.
        Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [tableId, 'Arn'] }, '/index/GSI2']] },
      },
    ]);
  });

  it('gives the second reader the stream, the feed’s and the rollups’ items and send on the purge queue, and nothing else', () => {
    const statements = roleStatementsOf(s.json, id(s.stack.rollups.streamConsumer));
    const actions = statements.flatMap(actionsOf);
    expect(actions).toContain('dynamodb:GetRecords');
    // The feed and the rollups read by key and write in transactions (and the feed's lookups in a
    // batch); never these.
    for (const item of ['Query', 'Scan', 'DeleteItem']) {
      expect(actions).not.toContain(`dynamodb:${item}`);
    }
    const sends = statements
      .filter((st) => actionsOf(st).includes('sqs:SendMessage'))
      .flatMap((st) => [...referencedIds(st.Resource)]);
    expect(sends.sort()).toEqual([id(s.stack.purge.queue), id(s.stack.purge.streamFailureQueue)].sort());
  });
});
