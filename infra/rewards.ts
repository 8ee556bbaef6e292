import { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { REWARD_SOURCE_FILTERS, REWARD_STREAM_BATCHING } from '../lib/db/reward-source-filter.ts';
import { type FunctionDefaults, serviceFunction } from './functions.ts';
import { REWARD_RELEASE_GRANT, REWARD_STREAM_GRANT } from './grant-lists.ts';
import { addTableStreamSource, grantTable } from './grants.ts';
import { alarmedDeadLetterQueue } from './queues.ts';

export interface RewardsProps extends FunctionDefaults {
  readonly table: dynamodb.ITable;
  /** Where the stream-failure alarm notifies; the alarm exists either way. */
  readonly alarmTopic?: sns.ITopic;
}

/** One batch of reward sources: a few DynamoDB calls per record, in its campaign's turn. */
export const REWARD_STREAM_TIMEOUT = Duration.seconds(60);
/**
 * A record that keeps failing (a table outage is retried for as long as it lasts, within the
 * record's age) is given up after this many retries of its batch, halved each time, and recorded
 * in the failure queue, which alarms: its signup or sale is still in the table to reward by hand.
 */
export const REWARD_STREAM_RETRIES = 100;

/** How often the release runs: a reward is approved within about this long after its hold ends. */
export const REWARD_RELEASE_RATE = Duration.minutes(1);
/** One run: pages of the due index until none is left; the next run goes on with the rest. */
export const REWARD_RELEASE_TIMEOUT = Duration.seconds(50);

/**
 * The rewards' scheduled release (docs/rewards.md): an EventBridge rule runs
 * `functions/scheduled/release-rewards.ts` every minute, which approves every `pending` reward
 * whose hold has ended, found through the sparse due index (GSI1 `REWARDS_DUE`). A run that
 * fails is simply followed by the next one a minute later (the work is all in the index), so the
 * target retries nothing itself; the function's errors alarm like every monitored function's.
 */
export class Rewards extends Construct {
  readonly releaseFunction: NodejsFunction;
  readonly releaseRule: events.Rule;
  /** `functions/stream/create-rewards.ts`: signups, conversions and refunds make rewards. */
  readonly streamConsumer: NodejsFunction;
  readonly streamFailureQueue: sqs.Queue;
  readonly streamFailureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: RewardsProps) {
    super(scope, id);
    const { table, stage } = props;
    this.releaseFunction = serviceFunction(this, 'ReleaseFunction', {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
      handler: 'scheduled/release-rewards',
      timeout: REWARD_RELEASE_TIMEOUT,
      description: `Approves rewards whose hold has ended (${stage})`,
      environment: { TABLE_NAME: table.tableName },
    });
    grantTable(this.releaseFunction, table, REWARD_RELEASE_GRANT);
    this.releaseRule = new events.Rule(this, 'ReleaseSchedule', {
      description: `Runs the rewards' release every minute (${stage})`,
      schedule: events.Schedule.rate(REWARD_RELEASE_RATE),
      targets: [new targets.LambdaFunction(this.releaseFunction, { retryAttempts: 0 })],
    });

    const failures = alarmedDeadLetterQueue(this, 'StreamFailureQueue', {
      alarmId: 'StreamFailureAlarm',
      alarmName: 'reward-stream-failures',
      alarmDescription: `Signups, sales or refunds (${stage}) whose rewards could not be made; see the queue's records`,
      alarmTopic: props.alarmTopic,
    });
    this.streamFailureQueue = failures.queue;
    this.streamFailureAlarm = failures.alarm;
    this.streamConsumer = serviceFunction(this, 'StreamConsumer', {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
      handler: 'stream/create-rewards',
      timeout: REWARD_STREAM_TIMEOUT,
      description: `Makes rewards of signups, sales and refunds (${stage})`,
      environment: { TABLE_NAME: table.tableName },
    });
    grantTable(this.streamConsumer, table, REWARD_STREAM_GRANT);
    addTableStreamSource(this.streamConsumer, table, {
      // Not LATEST: signups and sales committed before the mapping existed are still rewarded.
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: REWARD_STREAM_BATCHING.batchSize,
      filters: REWARD_SOURCE_FILTERS.map((f) => lambda.FilterCriteria.filter({ ...f })),
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      retryAttempts: REWARD_STREAM_RETRIES,
      maxRecordAge: Duration.hours(23),
      onFailure: this.streamFailureQueue,
    });
  }
}
