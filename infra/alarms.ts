import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { BusinessMetric, METRICS_NAMESPACE } from '../lib/observability/metrics.ts';
import type { ThrottleClass } from '../lib/routes.ts';
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
/**
 * Below this many invocations in five minutes a function's p99 duration is not evaluated: with a
 * handful of requests the p99 is the one cold start among them, not the route's latency.
 */
export const LATENCY_MIN_INVOCATIONS = 100;
/** A latency alarm fires when the p99 stays above its threshold this many 5-minute periods in a row. */
export const LATENCY_EVALUATION_PERIODS = 3;
/** The namespace and name of the metric counted from the access logs' authorizer failures. */
export const AUTHORIZER_ERRORS_METRIC = { namespace: 'ReferralApi', name: 'AuthorizerErrors' } as const;

/** The namespace, metric and `service` dimension of the business metric `WebhookEndpointsDisabled`. */
export const WEBHOOK_DISABLED_METRIC = {
  namespace: METRICS_NAMESPACE,
  metricName: BusinessMetric.WebhookEndpointsDisabled,
  service: SERVICE_NAME,
} as const;

/** The business metric `CountingWorkParked`: work the counting consumer set aside (`lib/stream/parked.ts`). */
export const COUNTING_PARKED_METRIC = {
  namespace: METRICS_NAMESPACE,
  metricName: BusinessMetric.CountingWorkParked,
  service: SERVICE_NAME,
} as const;

export interface MonitoredFunction {
  /** Short stable name for the alarm name, e.g. the route name. */
  readonly label: string;
  readonly fn: lambda.IFunction;
}

/** A function on the request path, with the route class whose latency threshold it is held to. */
export interface LatencyMonitoredFunction extends MonitoredFunction {
  readonly routeClass: ThrottleClass;
}

export interface AlarmsProps {
  readonly stage: Stage;
  readonly httpStage: apigw.IHttpStage;
  /** Every function of the stack: each gets an errors and a throttles alarm. */
  readonly functions: readonly MonitoredFunction[];
  /** Functions fed by the table stream: each gets an iterator-age alarm. */
  readonly streamConsumers: readonly MonitoredFunction[];
  /** The route functions and the authorizer: each gets a p99 duration alarm. */
  readonly latencyFunctions: readonly LatencyMonitoredFunction[];
  /** p99 duration threshold (ms) per route class. */
  readonly latencyP99Ms: Readonly<Record<ThrottleClass, number>>;
  /** The table, and the names of its global secondary indexes: each gets a throttle alarm. */
  readonly table: dynamodb.ITable;
  readonly indexNames: readonly string[];
  /** Whether the table and its indexes get throttle alarms (not in the minimal set). */
  readonly watchTableThrottles: boolean;
  /** The HTTP API's access log group, whose authorizer failures are counted into a metric. */
  readonly accessLogGroup: logs.ILogGroup;
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
 * - Latency: the p99 duration of each route's function (and of the authorizer) above its route
 *   class's threshold for 15 minutes, once the route has traffic; combined into one composite
 *   alarm that notifies. (Lambda's Duration, free and per function; API Gateway's per-route
 *   latency needs detailed metrics, billed as custom metrics per route.)
 * - DynamoDB throttling: read or write throttle events on the table or any of its indexes (an
 *   on-demand table throttles on a hot partition or a traffic jump past twice its previous peak;
 *   an index that cannot keep up throttles the table's writes), one alarm each, combined into one
 *   composite alarm that notifies.
 * - Authorizer failures: a metric counted from the access logs, of requests whose authorizer
 *   failed (API Gateway then answers 500 itself, without running the route) or could not read the
 *   key (the route answers 503): the authorizer's own Errors alarm misses the second kind.
 *
 * With a topic, every alarm notifies it, directly or through exactly one composite alarm that does.
 * The minimal set of a dev stage (`-c alarmSet=minimal`) is the same construct given fewer
 * functions, no latency-monitored ones and no table throttles: a composite without children is
 * left out.
 */
export class Alarms extends Construct {
  readonly api5xxAlarm: cloudwatch.Alarm;
  readonly functionAlarms: cloudwatch.Alarm[] = [];
  readonly lambdaFaultsAlarm: cloudwatch.CompositeAlarm;
  readonly iteratorAgeAlarms: cloudwatch.Alarm[] = [];
  readonly webhookDisabledAlarm: cloudwatch.Alarm;
  readonly countingParkedAlarm: cloudwatch.Alarm;
  readonly latencyAlarms: cloudwatch.Alarm[] = [];
  /** Absent when no function is latency-monitored (the minimal set). */
  readonly latencyAlarm?: cloudwatch.CompositeAlarm;
  readonly throttleAlarms: cloudwatch.Alarm[] = [];
  /** Absent without table throttle alarms (the minimal set). */
  readonly dynamoThrottlesAlarm?: cloudwatch.CompositeAlarm;
  readonly authorizerErrorsAlarm: cloudwatch.Alarm;

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

    // One alarm per function on its errors and throttles together: two alarms each would take 92
    // of CloudFormation's 500 resources a stack may hold, and the stack reached the limit with the
    // rewards' routes. It bills the same two metrics; the runbook says how to tell them apart.
    for (const { label, fn } of props.functions) {
      this.functionAlarms.push(
        new cloudwatch.Alarm(this, `${label}-faults`, {
          alarmName: `${prefix}-${label}-faults`,
          alarmDescription: `${label} (${props.stage}) had errors or throttles in the last 5 minutes`,
          metric: new cloudwatch.MathExpression({
            label: 'errors + throttles',
            expression: 'FILL(errors, 0) + FILL(throttles, 0)',
            usingMetrics: {
              errors: fn.metricErrors({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
              throttles: fn.metricThrottles({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
            },
            period: fiveMinutes,
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    this.lambdaFaultsAlarm = new cloudwatch.CompositeAlarm(this, 'LambdaFaults', {
      compositeAlarmName: `${prefix}-lambda-faults`,
      alarmDescription: `A function (${props.stage}) had errors or throttles: see which ${prefix}-<function>-faults alarm is in ALARM`,
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

    /** An alarm at the first count of a business metric in 5 minutes, notifying the topic. */
    const businessMetricAlarm = (
      alarmId: string,
      metric: typeof WEBHOOK_DISABLED_METRIC | typeof COUNTING_PARKED_METRIC,
      alarmName: string,
      alarmDescription: string,
    ) => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        alarmName,
        alarmDescription,
        metric: new cloudwatch.Metric({
          namespace: metric.namespace,
          metricName: metric.metricName,
          dimensionsMap: { service: metric.service, stage: props.stage },
          period: fiveMinutes,
          statistic: cloudwatch.Stats.SUM,
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      notify(alarm);
      return alarm;
    };

    // A customer's endpoint failed every attempt for 3 days and its webhook was disabled
    // (lib/webhooks/failures.ts): worth a look, and maybe a word with the customer.
    this.webhookDisabledAlarm = businessMetricAlarm(
      'WebhookEndpointsDisabled',
      WEBHOOK_DISABLED_METRIC,
      `${prefix}-webhook-endpoints-disabled`,
      `A campaign's webhook (${props.stage}) was disabled after failing every attempt for 3 days; the log line "webhook disabled" names the campaign`,
    );

    // The counting consumer parked work DynamoDB refuses as it is (an item past a limit, an
    // attribute of the wrong type): nothing waits for it, but its counts are missing until an
    // operator runs it again (`npm run parked`, docs/deploying.md).
    this.countingParkedAlarm = businessMetricAlarm(
      'CountingWorkParked',
      COUNTING_PARKED_METRIC,
      `${prefix}-counting-work-parked`,
      `The stream's counting consumer (${props.stage}) parked work DynamoDB refuses; the log line "counting work parked" says what, and \`npm run parked\` lists it`,
    );
    for (const { label, fn, routeClass } of props.latencyFunctions) {
      const thresholdMs = props.latencyP99Ms[routeClass];
      this.latencyAlarms.push(
        new cloudwatch.Alarm(this, `${label}-latency`, {
          alarmName: `${prefix}-${label}-latency-p99`,
          alarmDescription: `${label} (${props.stage}, ${routeClass} route) took over ${thresholdMs} ms at p99 for ${LATENCY_EVALUATION_PERIODS * 5} minutes`,
          metric: new cloudwatch.MathExpression({
            label: 'p99 duration (ms)',
            expression: `IF(invocations >= ${LATENCY_MIN_INVOCATIONS}, p99, 0)`,
            usingMetrics: {
              p99: fn.metricDuration({ period: fiveMinutes, statistic: cloudwatch.Stats.p(99) }),
              invocations: fn.metricInvocations({ period: fiveMinutes, statistic: cloudwatch.Stats.SUM }),
            },
            period: fiveMinutes,
          }),
          threshold: thresholdMs,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: LATENCY_EVALUATION_PERIODS,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (this.latencyAlarms.length > 0) {
      this.latencyAlarm = new cloudwatch.CompositeAlarm(this, 'ApiLatency', {
        compositeAlarmName: `${prefix}-api-latency`,
        alarmDescription: `A route (${props.stage}) is slow at p99: see which ${prefix}-<route>-latency-p99 alarm is in ALARM`,
        alarmRule: cloudwatch.AlarmRule.anyOf(...this.latencyAlarms),
      });
      notify(this.latencyAlarm);
    }

    const tableName = props.table.tableName;
    const watchedIndexes = props.watchTableThrottles ? [undefined, ...props.indexNames] : [];
    for (const index of watchedIndexes) {
      const dimensionsMap: Record<string, string> = index
        ? { TableName: tableName, GlobalSecondaryIndexName: index }
        : { TableName: tableName };
      const throttleEvents = (metricName: string) =>
        new cloudwatch.Metric({
          namespace: 'AWS/DynamoDB',
          metricName,
          dimensionsMap,
          period: fiveMinutes,
          statistic: cloudwatch.Stats.SUM,
        });
      const label = index ?? 'table';
      this.throttleAlarms.push(
        new cloudwatch.Alarm(this, `DynamoThrottles-${label}`, {
          alarmName: `${prefix}-dynamodb-${label}-throttles`,
          alarmDescription: `DynamoDB throttled reads or writes of the ${index ? `index ${index}` : 'table'} (${props.stage}) in the last 5 minutes`,
          metric: new cloudwatch.MathExpression({
            label: 'throttle events',
            expression: 'FILL(reads, 0) + FILL(writes, 0)',
            usingMetrics: {
              reads: throttleEvents('ReadThrottleEvents'),
              writes: throttleEvents('WriteThrottleEvents'),
            },
            period: fiveMinutes,
          }),
          threshold: 0,
          comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
        }),
      );
    }
    if (this.throttleAlarms.length > 0) {
      this.dynamoThrottlesAlarm = new cloudwatch.CompositeAlarm(this, 'DynamoThrottles', {
        compositeAlarmName: `${prefix}-dynamodb-throttles`,
        alarmDescription: `DynamoDB throttled requests (${props.stage}): see which ${prefix}-dynamodb-<table|index>-throttles alarm is in ALARM`,
        alarmRule: cloudwatch.AlarmRule.anyOf(...this.throttleAlarms),
      });
      notify(this.dynamoThrottlesAlarm);
    }

    // One count per request whose authorizer failed (any message in `authError`: API Gateway
    // logs "-" for none) or answered `unavailable` (the key could not be read in time).
    const authorizerFailures = new logs.MetricFilter(this, 'AuthorizerErrorsFilter', {
      logGroup: props.accessLogGroup,
      filterPattern: logs.FilterPattern.any(
        logs.FilterPattern.regexValue('$.authError', '=', '[A-Za-z]'),
        logs.FilterPattern.stringValue('$.authDown', '=', 'true'),
      ),
      metricNamespace: AUTHORIZER_ERRORS_METRIC.namespace,
      metricName: AUTHORIZER_ERRORS_METRIC.name,
      metricValue: '1',
      // Per API, so that stages in one account count apart.
      dimensions: { ApiId: '$.api' },
      unit: cloudwatch.Unit.COUNT,
    });
    this.authorizerErrorsAlarm = new cloudwatch.Alarm(this, 'AuthorizerErrors', {
      alarmName: `${prefix}-authorizer-errors`,
      alarmDescription: `The api-key authorizer (${props.stage}) failed or could not read a key in the last 5 minutes: those requests got a 500 from API Gateway or a 503`,
      metric: authorizerFailures.metric({
        period: fiveMinutes,
        statistic: cloudwatch.Stats.SUM,
        dimensionsMap: { ApiId: props.httpStage.api.apiId },
      }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.authorizerErrorsAlarm);
  }
}
