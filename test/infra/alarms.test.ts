import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { addReferralApiStack } from '../../infra/stack.ts';
import {
  type CfnResource,
  logicalIdOf,
  referencedIds,
  resourcesOfType,
  type Synthesized,
  synth,
  tempOutdir,
} from './synth.ts';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

let dev: Synthesized;
let withTopic: Synthesized;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  withTopic = synth({ stage: 'prod', context: { alarmTopicArn: TOPIC_ARN } });
});

const alarms = (s: Synthesized) => resourcesOfType(s.json, 'AWS::CloudWatch::Alarm');
const alarmNamed = (s: Synthesized, suffix: string): CfnResource => {
  const found = alarms(s).filter(([, a]) => String(a.Properties?.AlarmName).endsWith(suffix));
  expect(found, suffix).toHaveLength(1);
  return found[0]![1];
};
/** The alarm on a queue metric, found by the queue it watches. */
const queueAlarm = (s: Synthesized, queueId: string, metricName: string): CfnResource => {
  const found = alarms(s).filter(
    ([, a]) =>
      a.Properties?.MetricName === metricName &&
      JSON.stringify(a.Properties?.Dimensions) ===
        JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]),
  );
  expect(found, `${metricName} of ${queueId}`).toHaveLength(1);
  return found[0]![1];
};

describe('alarms', () => {
  it('are named after the stack, so the stage is in every name', () => {
    for (const [id, a] of alarms(withTopic))
      expect(a.Properties?.AlarmName, id).toMatch(/^ReferralApi-prod-/);
    for (const [id, a] of alarms(dev)) expect(a.Properties?.AlarmName, id).toMatch(/^ReferralApi-dev-/);
  });

  it('watch the webhooks disabled for failing every attempt: one per stage, on the business metric', () => {
    for (const [s, stage] of [
      [dev, 'dev'],
      [withTopic, 'prod'],
    ] as const) {
      const p = alarmNamed(s, '-webhook-endpoints-disabled').Properties ?? {};
      expect(p).toMatchObject({
        Namespace: 'ReferralApi',
        MetricName: 'WebhookEndpointsDisabled',
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
      });
      expect(p.Dimensions).toEqual(
        expect.arrayContaining([
          { Name: 'service', Value: 'referral-api' },
          { Name: 'stage', Value: stage },
        ]),
      );
    }
    expect(alarmNamed(withTopic, '-webhook-endpoints-disabled').Properties?.AlarmActions).toEqual([
      TOPIC_ARN,
    ]);
  });

  it('watch the API 5xx rate: 5xx / requests over 5 minutes above 1 %, once there are enough requests', () => {
    const p = alarmNamed(dev, '-api-5xx-rate').Properties ?? {};
    expect(p.Threshold).toBe(1);
    expect(p.ComparisonOperator).toBe('GreaterThanThreshold');
    expect(p.EvaluationPeriods).toBe(1);
    expect(p.TreatMissingData).toBe('notBreaching');
    const metrics = p.Metrics as Array<{
      Id: string;
      Expression?: string;
      ReturnData?: boolean;
      MetricStat?: unknown;
    }>;
    const expression = metrics.find((m) => m.Expression);
    expect(expression?.Expression).toBe('IF(requests >= 50, 100 * errors / requests, 0)');
    expect(expression?.ReturnData ?? true).toBe(true);
    const apiId = logicalIdOf(dev.stack.api.httpApi);
    const byId = Object.fromEntries(metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat]));
    for (const [metricId, name] of [
      ['errors', '5xx'],
      ['requests', 'Count'],
    ]) {
      expect(byId[metricId!], metricId).toMatchObject({
        Metric: {
          Namespace: 'AWS/ApiGateway',
          MetricName: name,
          Dimensions: expect.arrayContaining([{ Name: 'ApiId', Value: { Ref: apiId } }]),
        },
        Period: 300,
        Stat: 'Sum',
      });
    }
  });

  it('watch Errors and Throttles of every function in one alarm each, combined into one composite alarm', () => {
    const rule = compositeNamed(dev, 'ReferralApi-dev-lambda-faults').Properties?.AlarmRule;
    const inRule = referencedIds(rule);
    const ofFunction = (fnId: string, metricName: string) => (m: { MetricStat?: { Metric?: unknown } }) =>
      JSON.stringify(m.MetricStat?.Metric) ===
      JSON.stringify({
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: fnId } }],
        MetricName: metricName,
        Namespace: 'AWS/Lambda',
      });
    for (const fn of dev.stack.allFunctions) {
      const fnId = logicalIdOf(fn);
      const found = alarms(dev).filter(([, a]) => {
        const metrics = (a.Properties?.Metrics ?? []) as Array<{ MetricStat?: { Metric?: unknown } }>;
        return metrics.some(ofFunction(fnId, 'Errors')) && metrics.some(ofFunction(fnId, 'Throttles'));
      });
      expect(found, fn.node.path).toHaveLength(1);
      const [alarmId, alarm] = found[0]!;
      const metrics = alarm.Properties?.Metrics as Array<Record<string, unknown>>;
      expect(metrics.find((m) => m.Expression)?.Expression).toBe('FILL(errors, 0) + FILL(throttles, 0)');
      for (const m of metrics.filter((x) => x.MetricStat))
        expect(m.MetricStat).toMatchObject({ Period: 300, Stat: 'Sum' });
      expect(alarm.Properties).toMatchObject({
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      expect(inRule.has(alarmId), `${alarmId} in the composite rule`).toBe(true);
    }
    expect(inRule.size).toBe(dev.stack.allFunctions.length);
  });

  it('watch how far each table-stream consumer is behind (IteratorAge)', () => {
    for (const fn of [dev.stack.webhooks.streamConsumer, dev.stack.rollups.streamConsumer]) {
      const found = alarms(dev).filter(
        ([, a]) =>
          a.Properties?.MetricName === 'IteratorAge' &&
          JSON.stringify(a.Properties?.Dimensions) ===
            JSON.stringify([{ Name: 'FunctionName', Value: { Ref: logicalIdOf(fn) } }]),
      );
      expect(found, fn.node.path).toHaveLength(1);
      // 10 minutes behind (IteratorAge is in milliseconds), twice in a row.
      expect(found[0]![1].Properties).toMatchObject({
        Statistic: 'Maximum',
        Period: 300,
        Threshold: 600_000,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 2,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('watch the webhook dead-letter and stream-failure queues (from the Webhooks construct)', () => {
    const { webhooks } = dev.stack;
    for (const [queue, name] of [
      [webhooks.deadLetterQueue, '-webhook-dead-letters'],
      [webhooks.firstAttemptDeadLetterQueue, '-webhook-first-attempt-dead-letters'],
      [webhooks.streamFailureQueue, '-webhook-stream-failures'],
    ] as const) {
      const alarm = queueAlarm(dev, logicalIdOf(queue), 'ApproximateNumberOfMessagesVisible');
      expect(alarm.Properties?.AlarmName).toBe(`ReferralApi-dev${name}`);
      // At the first message: the maximum over one minute above 0.
      expect(alarm.Properties).toMatchObject({
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
    }
  });

  it('watch the purge: backlog age, dead letters, stream failures', () => {
    const { purge } = dev.stack;
    const backlog = queueAlarm(dev, logicalIdOf(purge.queue), 'ApproximateAgeOfOldestMessage');
    expect(backlog.Properties).toMatchObject({
      AlarmName: 'ReferralApi-dev-purge-backlog',
      Statistic: 'Maximum',
      Period: 300,
      // The oldest purge job has waited over an hour (seconds).
      Threshold: 3600,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
    });
    for (const [queue, name] of [
      [purge.deadLetterQueue, 'ReferralApi-dev-purge-dead-letters'],
      [purge.streamFailureQueue, 'ReferralApi-dev-purge-stream-failures'],
    ] as const) {
      const alarm = queueAlarm(dev, logicalIdOf(queue), 'ApproximateNumberOfMessagesVisible');
      expect(alarm.Properties).toMatchObject({
        AlarmName: name,
        Statistic: 'Maximum',
        Period: 60,
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
      });
    }
  });

  it("watch each route function's p99 duration, and the authorizer's, by route class; one composite", () => {
    // Thresholds in ms, written out: `redirect` 250, `api` 500, `docs` 1,000.
    const expected: Record<string, number> = {
      CreateReferralLink: 500,
      GetReferralLink: 500,
      ListCampaignLinks: 500,
      ListReferrerLinks: 500,
      CreateReferredUserAction: 500,
      CreateCampaign: 500,
      GetCampaign: 500,
      UpdateCampaign: 500,
      DeleteCampaign: 500,
      ListCampaigns: 500,
      CreateReferredUser: 500,
      GetReferredUser: 500,
      ListReferredUsers: 500,
      CreateLinkAction: 500,
      GetAnalytics: 500,
      GetAnalyticsTop: 500,
      ListWebhookDeliveries: 500,
      ListEvents: 500,
      RedeliverEvent: 500,
      RotateWebhookSecret: 500,
      CreateConversion: 500,
      RefundConversion: 500,
      GetConversion: 500,
      ListConversions: 500,
      ListRewards: 500,
      ApproveReward: 500,
      VoidReward: 500,
      GetBalance: 500,
      CreatePayout: 500,
      ListPayouts: 500,
      // Not TestWebhook: its duration is the customer's endpoint's.
      Visit: 250,
      Health: 1000,
      Readiness: 500,
      GetOpenApiDocument: 1000,
      GetApiReference: 1000,
      GetDashboard: 1000,
      Authorizer: 500,
    };
    const rule = referencedIds(compositeNamed(dev, 'ReferralApi-dev-api-latency').Properties?.AlarmRule);
    expect(rule.size).toBe(Object.keys(expected).length);
    const fnOf = (label: string) =>
      label === 'Authorizer' ? dev.stack.functions.authorizer : dev.stack.functions.byRoute.get(label)!;
    for (const [label, threshold] of Object.entries(expected)) {
      const [id, alarm] = alarmEntryNamed(dev, `ReferralApi-dev-${label}-latency-p99`);
      expect(rule.has(id), label).toBe(true);
      expect(alarm.Properties, label).toMatchObject({
        Threshold: threshold,
        ComparisonOperator: 'GreaterThanThreshold',
        // 15 minutes in a row.
        EvaluationPeriods: 3,
        TreatMissingData: 'notBreaching',
      });
      const metrics = alarm.Properties?.Metrics as Array<{
        Id: string;
        Expression?: string;
        MetricStat?: unknown;
      }>;
      // Only once the function had 100 invocations in the 5 minutes.
      expect(metrics.find((m) => m.Expression)?.Expression, label).toBe('IF(invocations >= 100, p99, 0)');
      const dimensions = [{ Name: 'FunctionName', Value: { Ref: logicalIdOf(fnOf(label)) } }];
      expect(metrics.find((m) => m.Id === 'p99')?.MetricStat, label).toEqual({
        Metric: { Namespace: 'AWS/Lambda', MetricName: 'Duration', Dimensions: dimensions },
        Period: 300,
        Stat: 'p99',
      });
      expect(metrics.find((m) => m.Id === 'invocations')?.MetricStat, label).toEqual({
        Metric: { Namespace: 'AWS/Lambda', MetricName: 'Invocations', Dimensions: dimensions },
        Period: 300,
        Stat: 'Sum',
      });
    }
  });

  it('take the latency thresholds from -c <class>LatencyP99Ms=', () => {
    const s = synth({
      stage: 'dev',
      context: { redirectLatencyP99Ms: '120', apiLatencyP99Ms: '300', docsLatencyP99Ms: '2000' },
    });
    expect(alarmNamed(s, '-Visit-latency-p99').Properties?.Threshold).toBe(120);
    expect(alarmNamed(s, '-GetCampaign-latency-p99').Properties?.Threshold).toBe(300);
    expect(alarmNamed(s, '-Authorizer-latency-p99').Properties?.Threshold).toBe(300);
    expect(alarmNamed(s, '-GetApiReference-latency-p99').Properties?.Threshold).toBe(2000);
    const app = new App({
      outdir: tempOutdir(),
      context: { apiLatencyP99Ms: 'fast', 'aws:cdk:bundling-stacks': [] },
    });
    expect(() => addReferralApiStack(app)).toThrow(/apiLatencyP99Ms/);
  });

  it('watch DynamoDB read and write throttle events of the table and of each index; one composite', () => {
    const tableRef = { Ref: logicalIdOf(dev.stack.table) };
    const rule = referencedIds(
      compositeNamed(dev, 'ReferralApi-dev-dynamodb-throttles').Properties?.AlarmRule,
    );
    const expected: Array<[string, Array<{ Name: string; Value: unknown }>]> = [
      ['table', [{ Name: 'TableName', Value: tableRef }]],
      ...['GSI1', 'GSI2', 'GSI3'].map((gsi): [string, Array<{ Name: string; Value: unknown }>] => [
        gsi,
        [
          { Name: 'GlobalSecondaryIndexName', Value: gsi },
          { Name: 'TableName', Value: tableRef },
        ],
      ]),
    ];
    expect(rule.size).toBe(expected.length);
    for (const [label, dimensions] of expected) {
      const [id, alarm] = alarmEntryNamed(dev, `ReferralApi-dev-dynamodb-${label}-throttles`);
      expect(rule.has(id), label).toBe(true);
      expect(alarm.Properties, label).toMatchObject({
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        EvaluationPeriods: 1,
        TreatMissingData: 'notBreaching',
      });
      const metrics = alarm.Properties?.Metrics as Array<{
        Id: string;
        Expression?: string;
        MetricStat?: { Metric: { Dimensions: Array<{ Name: string }> } };
      }>;
      expect(metrics.find((m) => m.Expression)?.Expression).toBe('FILL(reads, 0) + FILL(writes, 0)');
      for (const [metricId, name] of [
        ['reads', 'ReadThrottleEvents'],
        ['writes', 'WriteThrottleEvents'],
      ] as const) {
        const stat = metrics.find((m) => m.Id === metricId)?.MetricStat;
        const sortedDimensions = [...(stat?.Metric.Dimensions ?? [])].sort((a, b) =>
          a.Name.localeCompare(b.Name),
        );
        expect(
          { ...stat, Metric: { ...stat?.Metric, Dimensions: sortedDimensions } },
          `${label} ${name}`,
        ).toEqual({
          Metric: { Namespace: 'AWS/DynamoDB', MetricName: name, Dimensions: dimensions },
          Period: 300,
          Stat: 'Sum',
        });
      }
    }
  });

  it('count authorizer failures from the access logs, per API, and alarm at the first one', () => {
    const filters = resourcesOfType(dev.json, 'AWS::Logs::MetricFilter');
    expect(filters).toHaveLength(1);
    expect(filters[0]![1].Properties).toEqual({
      LogGroupName: { Ref: logicalIdOf(dev.stack.api.accessLogGroup) },
      // A message in `authError` (API Gateway logs "-" for none), or the authorizer's
      // `unavailable` answer.
      FilterPattern: '{ ($.authError = %[A-Za-z]%) || ($.authDown = "true") }',
      MetricTransformations: [
        {
          MetricNamespace: 'ReferralApi',
          MetricName: 'AuthorizerErrors',
          MetricValue: '1',
          Dimensions: [{ Key: 'ApiId', Value: '$.api' }],
          Unit: 'Count',
        },
      ],
    });
    const stage = dev.json.Resources[logicalIdOf(dev.stack.api.stage)];
    const format = JSON.parse(String(stage?.Properties?.AccessLogSettings?.Format)) as Record<string, string>;
    expect(format).toMatchObject({
      api: '$context.apiId',
      authError: '$context.authorizer.error',
      authDown: '$context.authorizer.unavailable',
    });
    expect(alarmNamed(dev, '-authorizer-errors').Properties).toMatchObject({
      Namespace: 'ReferralApi',
      MetricName: 'AuthorizerErrors',
      Dimensions: [{ Name: 'ApiId', Value: { Ref: logicalIdOf(dev.stack.api.httpApi) } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      EvaluationPeriods: 1,
      TreatMissingData: 'notBreaching',
    });
  });

  it('notify nobody without an alarm topic (dev)', () => {
    for (const [id, a] of [...alarms(dev), ...resourcesOfType(dev.json, 'AWS::CloudWatch::CompositeAlarm')]) {
      expect(a.Properties?.AlarmActions, id).toBeUndefined();
      expect(a.Properties?.OKActions, id).toBeUndefined();
    }
  });

  it('with -c alarmTopicArn=, none is silent: each notifies the topic itself or through exactly one composite', () => {
    const composites = resourcesOfType(withTopic.json, 'AWS::CloudWatch::CompositeAlarm');
    expect(composites.map(([, c]) => c.Properties?.AlarmName).sort()).toEqual([
      'ReferralApi-prod-api-latency',
      'ReferralApi-prod-dynamodb-throttles',
      'ReferralApi-prod-lambda-faults',
    ]);
    const children = new Map<string, number>();
    for (const [, c] of composites) {
      for (const id of referencedIds(c.Properties?.AlarmRule)) children.set(id, (children.get(id) ?? 0) + 1);
    }
    const notifying: string[] = [];
    for (const [id, a] of [...alarms(withTopic), ...composites]) {
      const actions = a.Properties?.AlarmActions;
      if (children.has(id)) {
        // Through one composite only: one incident pages once.
        expect(children.get(id), id).toBe(1);
        expect(actions, id).toBeUndefined();
        continue;
      }
      expect(actions, id).toEqual([TOPIC_ARN]);
      expect(a.Properties?.OKActions, id).toEqual([TOPIC_ARN]);
      notifying.push(id);
    }
    // API 5xx, authorizer errors, 3 iterator ages, 3 webhook queues, 3 purge queues, the rewards'
    // stream failures, 3 composites, disabled webhooks, parked counting work.
    expect(notifying).toHaveLength(17);
    // 1 per function, a latency alarm per route (but the webhook test's) and the authorizer, the
    // table and its 3 indexes.
    const functions = withTopic.stack.allFunctions.length;
    expect(children.size).toBe(functions + withTopic.stack.routes.length + 4);
  });

  it('refuse to synthesize prod without an alarm topic, unless -c alarms=none says so', () => {
    expect(() => synth({ stage: 'prod' })).toThrow(
      /ReferralApi-prod: the alarms of stage prod would notify nobody\. Give -c alarmTopicArn=.*or -c alarms=none/,
    );
    const optedOut = synth({ stage: 'prod', context: { alarms: 'none' } });
    for (const [id, a] of [
      ...alarms(optedOut),
      ...resourcesOfType(optedOut.json, 'AWS::CloudWatch::CompositeAlarm'),
    ]) {
      expect(a.Properties?.AlarmActions, id).toBeUndefined();
    }
    expect(() => synth({ stage: 'prod', context: { alarms: 'none', alarmTopicArn: TOPIC_ARN } })).toThrow(
      /contradict/,
    );
    expect(() => synth({ stage: 'prod', context: { alarms: 'off' } })).toThrow(/alarms=off/);
  });

  it('with -c alarmSet=minimal (dev), keep the service-wide alarms and those guarding data, none silent', () => {
    const minimal = synth({ stage: 'dev', context: { alarmSet: 'minimal', alarmTopicArn: TOPIC_ARN } });
    const full = synth({ stage: 'dev', context: { alarmTopicArn: TOPIC_ARN } });
    const names = (s: Synthesized) =>
      new Set(alarms(s).map(([, a]) => String(a.Properties?.AlarmName).replace(/^ReferralApi-dev-/, '')));
    const kept = names(minimal);
    const dropped = [...names(full)].filter((n) => !kept.has(n));
    for (const name of kept) expect(names(full).has(name), `${name} is one of the full set`).toBe(true);
    for (const name of dropped) expect(name).toMatch(/-latency-p99$|^dynamodb-|-faults$/);
    // Every route's latency, the table's throttles and the faults of the API's functions go ...
    expect([...kept].filter((n) => /-latency-p99$|^dynamodb-/.test(n))).toEqual([]);
    for (const route of minimal.stack.routes)
      expect(kept.has(`${route.name}-faults`), route.name).toBe(false);
    // ... the service-wide alarms, the stream consumers' and queues' alarms stay ...
    for (const name of [
      'api-5xx-rate',
      'authorizer-errors',
      'webhook-endpoints-disabled',
      'counting-work-parked',
      'webhook-dead-letters',
      'webhook-first-attempt-dead-letters',
      'webhook-stream-failures',
      'reward-stream-failures',
      'purge-backlog',
      'purge-dead-letters',
      'WebhookStreamConsumer-iterator-age',
      'RollupStreamConsumer-iterator-age',
      'RewardStreamConsumer-iterator-age',
    ]) {
      expect(kept.has(name), name).toBe(true);
    }
    // ... and so do the faults of the functions no request shows, through the one composite left.
    const composites = resourcesOfType(minimal.json, 'AWS::CloudWatch::CompositeAlarm');
    expect(composites.map(([, c]) => c.Properties?.AlarmName)).toEqual(['ReferralApi-dev-lambda-faults']);
    const children = referencedIds(composites[0]![1].Properties?.AlarmRule);
    expect(
      [...children].map((id) => String(minimal.json.Resources[id]?.Properties?.AlarmName)).sort(),
    ).toEqual(minimal.stack.backgroundFunctions.map(({ label }) => `ReferralApi-dev-${label}-faults`).sort());
    for (const [id, a] of [...alarms(minimal), ...composites]) {
      if (children.has(id)) {
        expect(a.Properties?.AlarmActions, id).toBeUndefined();
        continue;
      }
      expect(a.Properties?.AlarmActions, id).toEqual([TOPIC_ARN]);
      expect(a.Properties?.OKActions, id).toEqual([TOPIC_ARN]);
    }
  });

  it('keep the full set in prod, and take no alarm set but full and minimal', () => {
    expect(() =>
      synth({ stage: 'prod', context: { alarmSet: 'minimal', alarmTopicArn: TOPIC_ARN } }),
    ).toThrow(/ReferralApi-prod: -c alarmSet=minimal is for dev stages/);
    expect(() => synth({ stage: 'dev', context: { alarmSet: 'few' } })).toThrow(
      /-c alarmSet=few: expected one of full, minimal/,
    );
  });

  it('refuses an alarm topic that is not an SNS topic ARN', () => {
    const app = new App({
      outdir: tempOutdir(),
      context: { alarmTopicArn: 'ops-alarms', 'aws:cdk:bundling-stacks': [] },
    });
    expect(() => addReferralApiStack(app)).toThrow(/alarmTopicArn/);
  });
});

function alarmEntryNamed(s: Synthesized, name: string): [string, CfnResource] {
  const found = alarms(s).filter(([, a]) => a.Properties?.AlarmName === name);
  expect(found, name).toHaveLength(1);
  return found[0]!;
}

function compositeNamed(s: Synthesized, name: string): CfnResource {
  const found = resourcesOfType(s.json, 'AWS::CloudWatch::CompositeAlarm').filter(
    ([, a]) => a.Properties?.AlarmName === name,
  );
  expect(found, name).toHaveLength(1);
  return found[0]![1];
}
