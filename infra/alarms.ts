import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { BusinessMetric, METRICS_NAMESPACE } from '../lib/observability/metrics.ts';
import { SERVICE_NAME } from './functions.ts';
import type { Stage } from './stage.ts';

/** The API's 5xx share that pages someone: above 1 % of requests in five minutes. */
export const API_5XX_RATE_PERCENT = 1;
/**
 * Below this many requests in five minutes the rate is not evaluated: on a quiet dev stage one
 * failed request of three would otherwise read as a 33 % error rate.
 */
export const API_5XX_MIN_REQUESTS = 50;
/** A stream consumer this far behind is stuck on a batch (retrying) or cannot keep up. */
export const ITERATOR_AGE_THRESHOLD = Duration.minutes(10);

/** The namespace, metric and `service` dimension of the business metric `WebhookEndpointsDisabled`. */
export const WEBHOOK_DISABLED_METRIC = {
  namespace: METRICS_NAMESPACE,
  metricName: BusinessMetric.WebhookEndpointsDisabled,
  service: SERVICE_NAME,
} as const;

export interface MonitoredFunction {
  /** Short stable name for the alarm name, e.g. the route name. */
  readonly label: string;
  readonly fn: lambda.IFunction;
}

export interface AlarmsProps {
  readonly stage: Stage;
  readonly httpStage: apigw.IHttpStage;
  /** Every function of the stack: each gets an errors and a throttles alarm. */
  readonly functions: readonly MonitoredFunction[];
  /** Functions fed by the table stream: each gets an iterator-age alarm. */
  readonly streamConsumers: readonly MonitoredFunction[];
  readonly alarmTopic?: sns.ITopic;
}

/**
 * The service-wide alarms (the queue alarms live with their queues in `Webhooks` and `Purge`):
 *
 * - API 5xx rate: the share of requests answered 5xx (a function's 500 `internal_error`, a timeout,
 *   an integration failure), over five minutes, once there is enough traffic to mean something.
 * - Lambda faults: one alarm on Errors (a crash, timeout or out-of-memory: the HTTP handlers map
 *   their own errors to responses, so any Error is unexpected) and one on Throttles per function,
 *   combined into one composite alarm that notifies. The per-function alarms say which one.
 * - Stream consumers: iterator age, i.e. how far behind the table stream a consumer is.
 */
export class Alarms extends Construct {
  readonly api5xxAlarm: cloudwatch.Alarm;
  readonly functionAlarms: cloudwatch.Alarm[] = [];
  readonly lambdaFaultsAlarm: cloudwatch.CompositeAlarm;
  readonly iteratorAgeAlarms: cloudwatch.Alarm[] = [];
  readonly webhookDisabledAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const prefix = Stack.of(this).stackName;
    const notify = (alarm: cloudwatch.AlarmBase) => {
      if (!props.alarmTopic) return;
      alarm.addAlarmAction(new cloudwatchActions.SnsAction(props.alarmTopic));
      alarm.addOkAction(new cloudwatchActions.SnsAction(props.alarmTopic));
    };
    const fiveMinutes = Duration.minutes(5);

    this.api5xxAlarm = new cloudwatch.Alarm(this, 'Api5xxRate', {
      alarmName: `${prefix}-api-5xx-rate`,
      alarmDescription: `More than ${API_5XX_RATE_PERCENT} % of API requests (${props.stage}) answered 5xx in 5 minutes`,
      metric: new cloudwatch.MathExpression({
        label: '5xx rate (%)',
        expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, 0)`,
        usingMetrics: {
          errors: props.httpStage.metricServerError({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
          requests: props.httpStage.metricCount({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
        },
        period: fiveMinutes,
      }),
      threshold: API_5XX_RATE_PERCENT,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.api5xxAlarm);

    for (const { label, fn } of props.functions) {
      for (const [kind, metric] of [
        ['errors', fn.metricErrors({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM })],
        ['throttles', fn.metricThrottles({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM })],
      ] as const) {
        this.functionAlarms.push(
          new cloudwatch.Alarm(this, `${label}-${kind}`, {
            alarmName: `${prefix}-${label}-${kind}`,
            alarmDescription: `${label} (${props.stage}) had ${kind} in the last 5 minutes`,
            metric,
            threshold: 0,
            comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            evaluationPeriods: 1,
            treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
          }),
        );
      }
    }
    this.lambdaFaultsAlarm = new cloudwatch.CompositeAlarm(this, 'LambdaFaults', {
      compositeAlarmName: `${prefix}-lambda-faults`,
      alarmDescription: `A function (${props.stage}) had errors or throttles: see which ${prefix}-<function>-errors|throttles alarm is in ALARM`,
      alarmRule: cloudwatch.AlarmRule.anyOf(...this.functionAlarms),
    });
    notify(this.lambdaFaultsAlarm);

    for (const { label, fn } of props.streamConsumers) {
      const alarm = new cloudwatch.Alarm(this, `${label}-iterator-age`, {
        alarmName: `${prefix}-${label}-iterator-age`,
        alarmDescription: `${label} (${props.stage}) is over ${ITERATOR_AGE_THRESHOLD.toHumanString()} behind the table stream`,
        metric: fn.metric('IteratorAge', { period: fiveMinutes, statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: ITERATOR_AGE_THRESHOLD.toMilliseconds(),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      notify(alarm);
      this.iteratorAgeAlarms.push(alarm);
    }

    // A customer's endpoint failed every attempt for 3 days and its webhook was disabled
    // (lib/webhooks/failures.ts): worth a look, and maybe a word with the customer.
    this.webhookDisabledAlarm = new cloudwatch.Alarm(this, 'WebhookEndpointsDisabled', {
      alarmName: `${prefix}-webhook-endpoints-disabled`,
      alarmDescription: `A campaign's webhook (${props.stage}) was disabled after failing every attempt for 3 days; the log line "webhook disabled" names the campaign`,
      metric: new cloudwatch.Metric({
        namespace: WEBHOOK_DISABLED_METRIC.namespace,
        metricName: WEBHOOK_DISABLED_METRIC.metricName,
        dimensionsMap: { service: WEBHOOK_DISABLED_METRIC.service, stage: props.stage },
        period: fiveMinutes,
        statistic: cloudwatch.Stats.SUM,
      }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.webhookDisabledAlarm);
  }
}
