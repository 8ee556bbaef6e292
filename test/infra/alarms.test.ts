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

  it('watch Errors and Throttles of every function, combined into one composite alarm', () => {
    const composites = resourcesOfType(dev.json, 'AWS::CloudWatch::CompositeAlarm');
    expect(composites).toHaveLength(1);
    const rule = composites[0]![1].Properties?.AlarmRule;
    const inRule = referencedIds(rule);
    for (const fn of dev.stack.allFunctions) {
      const fnId = logicalIdOf(fn);
      for (const metricName of ['Errors', 'Throttles']) {
        const found = alarms(dev).filter(
          ([, a]) =>
            a.Properties?.Namespace === 'AWS/Lambda' &&
            a.Properties?.MetricName === metricName &&
            JSON.stringify(a.Properties?.Dimensions) ===
              JSON.stringify([{ Name: 'FunctionName', Value: { Ref: fnId } }]),
        );
        expect(found, `${metricName} of ${fn.node.path}`).toHaveLength(1);
        const [alarmId, alarm] = found[0]!;
        expect(alarm.Properties).toMatchObject({
          Statistic: 'Sum',
          Period: 300,
          Threshold: 0,
          ComparisonOperator: 'GreaterThanThreshold',
          EvaluationPeriods: 1,
          TreatMissingData: 'notBreaching',
        });
        expect(inRule.has(alarmId), `${alarmId} in the composite rule`).toBe(true);
      }
    }
    expect(inRule.size).toBe(2 * dev.stack.allFunctions.length);
  });

  it('watch how far each table-stream consumer is behind (IteratorAge)', () => {
    for (const fn of [dev.stack.webhooks.streamConsumer, dev.stack.purge.streamConsumer]) {
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

  it('notify nobody without an alarm topic', () => {
    for (const [id, a] of [...alarms(dev), ...resourcesOfType(dev.json, 'AWS::CloudWatch::CompositeAlarm')]) {
      expect(a.Properties?.AlarmActions, id).toBeUndefined();
      expect(a.Properties?.OKActions, id).toBeUndefined();
    }
  });

  it('with -c alarmTopicArn=, send every alarm and its return to OK to that topic, once', () => {
    const perFunction = new Set(referencedIds(withTopicComposite().Properties?.AlarmRule));
    const notifying = [
      ...alarms(withTopic),
      ...resourcesOfType(withTopic.json, 'AWS::CloudWatch::CompositeAlarm'),
    ].filter(([id]) => !perFunction.has(id));
    // API 5xx, the composite, 2 iterator ages, 3 webhook queues, 3 purge queues, disabled webhooks.
    expect(notifying).toHaveLength(11);
    for (const [id, a] of notifying) {
      expect(a.Properties?.AlarmActions, id).toEqual([TOPIC_ARN]);
      expect(a.Properties?.OKActions, id).toEqual([TOPIC_ARN]);
    }
    // The per-function alarms reach the topic through the composite only: one page, not two.
    for (const id of perFunction)
      expect(withTopic.json.Resources[id]?.Properties?.AlarmActions, id).toBeUndefined();
  });

  it('refuses an alarm topic that is not an SNS topic ARN', () => {
    const app = new App({
      outdir: tempOutdir(),
      context: { alarmTopicArn: 'ops-alarms', 'aws:cdk:bundling-stacks': [] },
    });
    expect(() => addReferralApiStack(app)).toThrow(/alarmTopicArn/);
  });
});

function withTopicComposite(): CfnResource {
  return resourcesOfType(withTopic.json, 'AWS::CloudWatch::CompositeAlarm')[0]![1];
}
