import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FEED_AND_ROLLUP_FILTERS, ROLLUP_STREAM_BATCHING } from '../lib/webhooks/stream-filter.ts';
import { type FunctionDefaults, serviceFunction } from './functions.ts';
import { addTableStreamSource, grantQueue, grantTable, ROLLUP_STREAM_GRANT } from './grants.ts';

export interface RollupsProps extends FunctionDefaults {
  /** The service table; it must have a stream (the real one does). */
  readonly table: dynamodb.ITable;
  /** Where a deleted campaign's purge job goes (`Purge.queue`). */
  readonly purgeQueue: sqs.IQueue;
  /** Where Lambda records the stream ranges it gave up on (`Purge.streamFailureQueue`, alarmed). */
  readonly failureQueue: sqs.IQueue;
}

/**
 * A batch is up to a thousand records: a few hundred rollup updates and feed transactions of
 * ~10-20 ms, 16 at a time, and at a window's end its sums; 60 s bounds a stuck one with room.
 */
export const ROLLUP_CONSUMER_TIMEOUT = Duration.seconds(60);
/**
 * A batch that keeps failing for this long is given up and recorded in the stream-failure queue
 * (which alarms). One hour rides out an incident and leaves 23 of the stream's 24 hours of
 * retention to replay the range by hand (README, "Alarms"); the rollups' checkpoint makes a replay
 * count nothing twice.
 */
export const ROLLUP_STREAM_MAX_RECORD_AGE = Duration.hours(1);
/** Retries of a failed stream batch; with bisection a bad record is isolated within a few. */
export const ROLLUP_STREAM_RETRY_ATTEMPTS = 100;

/**
 * The table stream's second reader, the counting consumer (the webhook consumer in `webhooks.ts`
 * is the first; DynamoDB serves at most two readers per shard without throttling them, so a third
 * consumer would need a fan-out instead): what may wait a second, in bigger batches. It writes
 * the events feed, adds up the links' `total_clicks` and the analytics (within 2 s the campaign's
 * series; within a minute, summed in its tumbling window, the rest), each exactly once, and turns
 * a campaign's REMOVE into a purge job (`functions/stream/feed-and-rollups.ts`).
 */
export class Rollups extends Construct {
  readonly streamConsumer: NodejsFunction;

  constructor(scope: Construct, id: string, props: RollupsProps) {
    super(scope, id);
    const { table, stage } = props;
    if (!table.tableStreamArn) throw new Error('Rollups needs a table with a stream');
    this.streamConsumer = serviceFunction(this, 'StreamConsumer', {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
      handler: 'stream/feed-and-rollups',
      timeout: ROLLUP_CONSUMER_TIMEOUT,
      description: `Writes the table stream's events into the feed, adds its interactions to the analytics and counters, and turns a campaign's REMOVE into a purge job (${stage})`,
      environment: { TABLE_NAME: table.tableName, PURGE_QUEUE_URL: props.purgeQueue.queueUrl },
    });
    grantTable(this.streamConsumer, table, ROLLUP_STREAM_GRANT);
    grantQueue(this.streamConsumer, props.purgeQueue, ['SendMessage']);
    addTableStreamSource(this.streamConsumer, table, {
      // Not LATEST: interactions and deletes committed before the mapping existed still count (the
      // checkpoints skip what another reader applied already; a purge job may come twice).
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      // Up to 1,000 records gathered for up to 1 s (`ROLLUP_STREAM_BATCHING` says why).
      batchSize: ROLLUP_STREAM_BATCHING.batchSize,
      maxBatchingWindow: Duration.seconds(ROLLUP_STREAM_BATCHING.windowSeconds),
      filters: FEED_AND_ROLLUP_FILTERS.map((f) => lambda.FilterCriteria.filter({ ...f })),
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      retryAttempts: ROLLUP_STREAM_RETRY_ATTEMPTS,
      // The window's state carries what the consumer sums for up to a minute (series by link and
      // by referrer, rankings: `lib/analytics/window.ts`), and the shard's id, which the rollups
      // and the feed count under, comes only to a mapping with a tumbling window.
      tumblingWindow: Duration.seconds(ROLLUP_STREAM_BATCHING.tumblingWindowSeconds),
      maxRecordAge: ROLLUP_STREAM_MAX_RECORD_AGE,
      onFailure: props.failureQueue,
    });
  }
}
