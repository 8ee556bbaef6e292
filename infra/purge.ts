import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type FunctionDefaults, serviceFunction } from './functions.ts';
import { addQueueEventSource, grantQueue, grantTable, PURGE_GRANT } from './grants.ts';
import { alarmedDeadLetterQueue, notify, queueWithDeadLetters } from './queues.ts';

export interface PurgeProps extends FunctionDefaults {
  /** The service table; it must have a stream (the real one does). */
  readonly table: dynamodb.ITable;
  /** Where the backlog, dead-letter and stream-failure alarms notify; alarms exist either way. */
  readonly alarmTopic?: sns.ITopic;
  /** Upper bound on concurrent purge functions: purges share the table with live traffic. */
  readonly maxConcurrency?: number;
}

/**
 * One purge pass works until shortly before this timeout, then puts a continuation message on the
 * queue (`functions/queue/purge-campaign.ts` paces itself by the remaining time), so a campaign of
 * any size is purged in several passes. 5 minutes keeps a pass long enough to delete tens of
 * thousands of items and short enough that a stuck one is noticed quickly.
 */
export const PURGE_TIMEOUT = Duration.minutes(5);
/** The purge worker streams Query pages into transactions and batch writes; CPU is not its limit. */
export const PURGE_MEMORY_MB = 256;
/** AWS's guidance for SQS-triggered functions: visibility timeout at least six times the function timeout. */
export const PURGE_QUEUE_VISIBILITY_TIMEOUT = Duration.seconds(PURGE_TIMEOUT.toSeconds() * 6);
/**
 * A pass that fails (throws, times out) comes back after the visibility timeout; five failures of
 * the same message mean something a retry will not fix, and it goes to the dead-letter queue.
 */
export const PURGE_MAX_RECEIVE_COUNT = 5;
/** How long after a pass that deleted something the follow-up sweep runs (GSI replication lag). */
export const PURGE_SWEEP_DELAY_SECONDS = 60;
/** Purge passes in flight at once (the SQS mapping's maximum concurrency, 2 at least). */
export const PURGE_MAX_CONCURRENCY = 5;
/** Messages older than this on the purge queue mean passes are not keeping up or not running. */
export const PURGE_BACKLOG_AGE = Duration.hours(1);

/**
 * Background purge of deleted campaigns: table stream (REMOVE of a campaign item) -> the stream's
 * second reader (`infra/rollups.ts`, which puts the job) -> purge queue -> purge function, which replaces the campaign's links by their codes'
 * reservations and deletes its referred users and actions, in passes. DELETE /campaign answers
 * 204 at once; the data is already unreachable through the API, this only reclaims the storage
 * and lets the tenant issue its codes again.
 *
 * Nothing is lost silently: a pass that keeps failing lands in the purge dead-letter queue, a
 * REMOVE that cannot be enqueued lands (as a stream-range record) in the stream-failure queue,
 * and both alarm, as does a queue whose oldest message is too old.
 */
export class Purge extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /**
   * Lambda's on-failure records for stream batches the second stream reader gave up on (purge
   * jobs not enqueued, rollups not applied; `infra/rollups.ts`).
   */
  readonly streamFailureQueue: sqs.Queue;
  readonly purgeFunction: NodejsFunction;
  readonly backlogAlarm: cloudwatch.Alarm;
  readonly deadLetterAlarm: cloudwatch.Alarm;
  readonly streamFailureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: PurgeProps) {
    super(scope, id);
    const { table, stage } = props;
    if (!table.tableStreamArn) throw new Error('Purge needs a table with a stream');
    const defaults: FunctionDefaults = {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
    };

    const { alarmTopic } = props;
    const purgeLane = queueWithDeadLetters(this, {
      queueId: 'Queue',
      queueProps: { visibilityTimeout: PURGE_QUEUE_VISIBILITY_TIMEOUT },
      maxReceiveCount: PURGE_MAX_RECEIVE_COUNT,
      deadLetterQueueId: 'DeadLetterQueue',
      deadLetterAlarm: {
        alarmId: 'DeadLetterAlarm',
        alarmName: 'purge-dead-letters',
        alarmDescription: `Purge jobs (${stage}) failed ${PURGE_MAX_RECEIVE_COUNT} times and are in the purge dead-letter queue`,
        alarmTopic,
      },
    });
    this.queue = purgeLane.queue;
    this.deadLetterQueue = purgeLane.deadLetterQueue;
    this.deadLetterAlarm = purgeLane.deadLetterAlarm;

    const streamFailures = alarmedDeadLetterQueue(this, 'StreamFailureQueue', {
      alarmId: 'StreamFailureAlarm',
      alarmName: 'purge-stream-failures',
      alarmDescription: `Stream records (${stage}) the rollup and purge consumer gave up on (a deleted campaign's purge job, or rollups); replay them from the stream`,
      alarmTopic,
    });
    this.streamFailureQueue = streamFailures.queue;
    this.streamFailureAlarm = streamFailures.alarm;

    this.purgeFunction = serviceFunction(this, 'PurgeFunction', {
      ...defaults,
      handler: 'queue/purge-campaign',
      memoryMb: PURGE_MEMORY_MB,
      timeout: PURGE_TIMEOUT,
      description: `Purges the items of deleted campaigns (${stage})`,
      environment: {
        TABLE_NAME: table.tableName,
        PURGE_QUEUE_URL: this.queue.queueUrl,
        PURGE_SWEEP_DELAY_SECONDS: String(PURGE_SWEEP_DELAY_SECONDS),
      },
    });
    // Exactly what lib/db/purge.ts sends (`PURGE_GRANT`): on the table's ARN and on GSI2's alone,
    // not `grantReadWriteData`, which would add every index (`index/*`), Scan, UpdateItem and
    // DeleteItem the purge never uses.
    grantTable(this.purgeFunction, table, PURGE_GRANT);
    // The continuation of a large purge, and the follow-up sweep, go back on the same queue.
    grantQueue(this.purgeFunction, this.queue, ['SendMessage']);
    addQueueEventSource(this.purgeFunction, this.queue, {
      // One campaign per invocation: a pass uses the whole timeout on its own.
      batchSize: 1,
      reportBatchItemFailures: true,
      maxConcurrency: props.maxConcurrency ?? PURGE_MAX_CONCURRENCY,
    });

    this.backlogAlarm = new cloudwatch.Alarm(this, 'BacklogAlarm', {
      alarmName: `${Stack.of(this).stackName}-purge-backlog`,
      alarmDescription: `Purge jobs (${stage}) have waited over ${PURGE_BACKLOG_AGE.toHumanString()}: passes are failing, throttled or not keeping up`,
      metric: this.queue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: cloudwatch.Stats.MAXIMUM,
      }),
      threshold: PURGE_BACKLOG_AGE.toSeconds(),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    notify(this.backlogAlarm, alarmTopic);
  }
}
