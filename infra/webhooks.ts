import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_RETRY_DELAYS, maxAttempts } from '../lib/webhooks/schedule.ts';
import { STREAM_CONSUMER_FILTERS } from '../lib/webhooks/stream-filter.ts';
import { serviceFunction } from './functions.ts';
import type { Stage } from './stage.ts';

export interface WebhooksProps {
  /** The service table; it must have a stream with new images (the real one does). */
  readonly table: dynamodb.ITable;
  readonly stage: Stage;
  /** Where the dead-letter and stream-failure alarms notify; alarms exist either way. */
  readonly alarmTopic?: sns.ITopic;
  /** Upper bound on concurrent delivery functions (the SQS mapping's maximum concurrency). */
  readonly maxConcurrency?: number;
}

/** One attempt may take 15 s (HTTP) plus DNS, a GetItem and SQS calls; 30 s bounds a stuck one. */
export const DELIVERY_TIMEOUT = Duration.seconds(30);
/**
 * AWS's guidance for SQS-triggered functions: at least six times the function timeout, so a
 * message is not handed to a second invocation while the first (with its retries of throttled
 * invocations) may still be working on it.
 */
export const QUEUE_VISIBILITY_TIMEOUT = Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6);
/**
 * The delivery handler dead-letters explicitly after the schedule's last attempt (12). The
 * queue's own redrive is a safety net above that, for messages the handler never finished (a
 * function timeout, a DynamoDB outage), so it never cuts the schedule short.
 */
export const REDRIVE_MAX_RECEIVE_COUNT = maxAttempts(DEFAULT_RETRY_DELAYS) + 8;

/**
 * Webhook delivery: table stream -> stream consumer -> webhook queue -> delivery function, with a
 * dead-letter queue and alarms. The stream consumer also writes the items of actions recorded on
 * their link's item (see `lib/db/actions.ts`); their events then come back through the stream.
 *
 * Stream wiring: a small stream-consumer Lambda (event source mapping with filters for INSERTs of
 * items with `event_type` and MODIFYs of links carrying `last_action`) rather than an EventBridge
 * Pipe. A Pipe's input template cannot unmarshall the nested DynamoDB JSON of `event_data`, so a
 * Pipe would need an enrichment Lambda anyway, or put DynamoDB JSON on the queue; the consumer
 * instead runs the very transform the local stack's stream poller runs (`lib/webhooks/stream.ts`),
 * so the path tested locally is the one deployed. Its mapping retries failed sends per record
 * (partial batch responses, bisect on error) until a record is 23 h old, just inside the stream's
 * 24 h retention, and then records the lost range in the stream-failure queue, which alarms: the
 * items themselves are still in the table. (Except an action of a referred user whose item could
 * not be written in those 23 h: its link counted it, but the record it lived in has expired.)
 */
export class Webhooks extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** Lambda's on-failure records for stream batches that could not be enqueued in time. */
  readonly streamFailureQueue: sqs.Queue;
  readonly deliveryFunction: NodejsFunction;
  readonly streamConsumer: NodejsFunction;
  readonly deadLetterAlarm: cloudwatch.Alarm;
  readonly streamFailureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const { table, stage } = props;
    if (!table.tableStreamArn) throw new Error('Webhooks needs a table with a stream (NEW_IMAGE)');

    const retention = Duration.days(14);
    const secureQueue = (queueId: string, extra: Partial<sqs.QueueProps> = {}) =>
      new sqs.Queue(this, queueId, {
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        retentionPeriod: retention,
        ...extra,
      });

    this.deadLetterQueue = secureQueue('DeadLetterQueue');
    this.streamFailureQueue = secureQueue('StreamFailureQueue');
    this.queue = secureQueue('Queue', {
      visibilityTimeout: QUEUE_VISIBILITY_TIMEOUT,
      // The schedule spans ~3.2 days; 14 days leaves room for a long outage of the consumer.
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: REDRIVE_MAX_RECEIVE_COUNT },
    });

    this.deliveryFunction = this.function('DeliveryFunction', 'queue/deliver-webhook', stage, {
      TABLE_NAME: table.tableName,
      WEBHOOK_QUEUE_URL: this.queue.queueUrl,
      WEBHOOK_DLQ_URL: this.deadLetterQueue.queueUrl,
    });
    // Least privilege: the campaign's URL and secret are one GetItem; nothing else of the table.
    // (On the table ARN alone: `table.grant` would add its indexes, which delivery never reads.)
    this.deliveryFunction.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['dynamodb:GetItem'], resources: [table.tableArn] }),
    );
    // Receive, delete and ChangeMessageVisibility (the per-message backoff).
    this.queue.grantConsumeMessages(this.deliveryFunction);
    this.deadLetterQueue.grantSendMessages(this.deliveryFunction);
    this.deliveryFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        // Bounds the load on customers' endpoints and on the table; also keeps the mapping from
        // receiving messages it has no function to run (which would count as receives).
        maxConcurrency: props.maxConcurrency ?? 10,
      }),
    );

    this.streamConsumer = this.function('StreamConsumer', 'queue/enqueue-webhook-events', stage, {
      TABLE_NAME: table.tableName,
      WEBHOOK_QUEUE_URL: this.queue.queueUrl,
    });
    this.queue.grantSendMessages(this.streamConsumer);
    // Least privilege: writing an action item recorded on its link is one transaction of a
    // conditional Put and a ConditionCheck of the campaign; no reads, updates or deletes.
    this.streamConsumer.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:PutItem', 'dynamodb:ConditionCheckItem'],
        resources: [table.tableArn],
      }),
    );
    this.streamConsumer.addEventSource(
      new DynamoEventSource(table, {
        // Not LATEST: events committed before the mapping existed are still delivered.
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        filters: STREAM_CONSUMER_FILTERS.map((f) => lambda.FilterCriteria.filter({ ...f })),
        reportBatchItemFailures: true,
        bisectBatchOnError: true,
        maxRecordAge: Duration.hours(23),
        onFailure: new SqsDlq(this.streamFailureQueue),
      }),
    );

    const depthAlarm = (alarmId: string, queue: sqs.Queue, description: string) => {
      const alarm = new cloudwatch.Alarm(this, alarmId, {
        alarmDescription: description,
        metric: queue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      if (props.alarmTopic) {
        alarm.addAlarmAction(new cloudwatchActions.SnsAction(props.alarmTopic));
        alarm.addOkAction(new cloudwatchActions.SnsAction(props.alarmTopic));
      }
      return alarm;
    };
    this.deadLetterAlarm = depthAlarm(
      'DeadLetterAlarm',
      this.deadLetterQueue,
      `Webhook events (${stage}) failed every delivery attempt and are in the dead-letter queue`,
    );
    this.streamFailureAlarm = depthAlarm(
      'StreamFailureAlarm',
      this.streamFailureQueue,
      `Table stream records (${stage}) could not be put on the webhook queue; replay them from the table`,
    );
  }

  /** The API functions' defaults (`serviceFunction`: bundling, runtime, log group, own role), with a longer timeout. */
  private function(id: string, handler: string, stage: Stage, environment: Record<string, string>) {
    return serviceFunction(this, id, { stage, handler, timeout: DELIVERY_TIMEOUT, environment });
  }
}
