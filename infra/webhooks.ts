import { Duration } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { FIRST_ATTEMPT_CONCURRENCY, RETRY_CONCURRENCY } from '../lib/webhooks/lanes.ts';
import { DEFAULT_RETRY_DELAYS, maxAttempts } from '../lib/webhooks/schedule.ts';
import { STREAM_CONSUMER_FILTERS, WEBHOOK_STREAM_BATCHING } from '../lib/webhooks/stream-filter.ts';
import { type FunctionDefaults, serviceFunction } from './functions.ts';
import {
  addQueueEventSource,
  addTableStreamSource,
  DELIVERY_LANE_GRANT,
  grantQueue,
  grantTable,
  WEBHOOK_STREAM_GRANT,
} from './grants.ts';
import { alarmedDeadLetterQueue, queueWithDeadLetters } from './queues.ts';

export interface WebhooksProps extends FunctionDefaults {
  /** The service table; it must have a stream with new images (the real one does). */
  readonly table: dynamodb.ITable;
  /** Where the dead-letter and stream-failure alarms notify; alarms exist either way. */
  readonly alarmTopic?: sns.ITopic;
  /**
   * Reserve each lane's concurrency for its function (prod). Reserving takes it from the account's
   * unreserved pool, which AWS keeps at 100 or more: on an account whose quota is still the
   * new-account default the deploy would fail, so dev stages rely on the mappings' caps alone.
   */
  readonly reserveConcurrency?: boolean;
}

/**
 * One attempt may take 15 s (HTTP) plus 3 s of DNS, a GetItem, maybe an UpdateItem and an SQS
 * call; with one message per invocation, 30 s bounds a stuck one.
 */
export const DELIVERY_TIMEOUT = Duration.seconds(30);
/**
 * AWS's guidance for SQS-triggered functions: at least six times the function timeout, so a
 * message is not handed to a second invocation while the first (with its retries of throttled
 * invocations) may still be working on it.
 */
export const QUEUE_VISIBILITY_TIMEOUT = Duration.seconds(DELIVERY_TIMEOUT.toSeconds() * 6);
/**
 * The retry lane dead-letters explicitly after the schedule's last attempt (12). The retry
 * queue's own redrive is a safety net above that, for messages the handler never finished (a
 * function timeout, a DynamoDB outage), so it never cuts the schedule short.
 */
export const REDRIVE_MAX_RECEIVE_COUNT = maxAttempts(DEFAULT_RETRY_DELAYS) + 8;
/**
 * A first-attempt message is received again only when its invocation did not finish (a crash, a
 * timeout, SQS refusing the hand-off to the retry lane); each time its campaign group waits for the
 * visibility timeout. After 10 (30 minutes) it goes to the FIFO dead-letter queue, which alarms.
 */
export const FIRST_ATTEMPT_MAX_RECEIVE_COUNT = 10;

/**
 * Webhook delivery: table stream -> stream consumer -> first-attempt queue -> delivery function,
 * and for failures and slow endpoints retry queue -> retry function, with dead-letter queues and
 * alarms. The stream consumer also writes the items of actions recorded on their link's item (see
 * `lib/db/actions.ts`); their events then come back through the stream.
 *
 * Isolation (contract: a receiver that is slow, times out or fails never delays another
 * campaign's deliveries). One attempt may hold a function for 15 s, so what matters is who can
 * hold the delivery functions' concurrency; the lanes of `lib/webhooks/lanes.ts` bound it:
 *
 * - One message per invocation (batch size 1) in both lanes. With batches, an invocation and its
 *   slot last as long as the batch's slowest POST, and nine healthy deliveries wait for one slow
 *   receiver. Per-message invocations cost one Lambda request each ($0.20 per million more than
 *   batches of ten) and buy that no message waits for another.
 * - First attempts go through a FIFO queue whose message groups are the campaign's events spread
 *   over `FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN` groups. SQS hands out a group's next message only
 *   when the previous one is finished, so one campaign holds at most that many of the lane's
 *   `FIRST_ATTEMPT_CONCURRENCY` slots, whatever its backlog. (Not one group per campaign: a busy
 *   campaign's own events would then go one at a time.) A FIFO group is blocked while its message
 *   is in flight, so nothing ever waits in this queue for a retry: a failed attempt is handed to
 *   the retry queue and acknowledged, and its campaign's next events go on.
 * - An attempt that fails or takes over `SLOW_ATTEMPT_MS` puts the campaign's endpoint in the slow
 *   lane (a flag on the campaign item, written only when it changes); its next first attempts are
 *   handed straight to the retry queue, so a dead endpoint holds first-attempt slots for one
 *   attempt per group, not for as long as its traffic lasts. One attempt that succeeds within the
 *   bound brings it back.
 * - The retry queue is a standard queue (per-message backoff through the visibility timeout, as
 *   the schedule needs delays up to 12 h, which would block a FIFO group) with its own function and
 *   `RETRY_CONCURRENCY`, so failing endpoints' retries never take a first-attempt slot. Its
 *   messages carry the campaign as `MessageGroupId`, which makes it an SQS fair queue: when one
 *   campaign has many messages in flight, SQS hands out the other campaigns' first.
 * - Sizing: 100 first-attempt slots at ~0.1-0.5 s per healthy POST deliver 200-1,000 events/s; a
 *   campaign whose endpoint turns slow takes at most 10 of them for one attempt (15 s), so the
 *   lane keeps its promise until about nine campaigns turn bad within the same 15 s. The retry
 *   lane's 50 slots bound what dead endpoints cost (50 × 15 s of POSTs at most). The mappings'
 *   maximum concurrency caps each lane; in prod the same figures are reserved for the functions
 *   (150 of the account's default 1,000), so an API burst cannot take the lanes' capacity and the
 *   lanes cannot take the API's.
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
 * not be written in those 23 h: its link counted it, but the record it lived in has expired.) A
 * retried stream batch sends an event again with the same deduplication id, and the FIFO queue
 * drops the copy.
 */
export class Webhooks extends Construct {
  /** First attempts of every event (FIFO, the campaign's events over its message groups). */
  readonly firstAttemptQueue: sqs.Queue;
  /** Every later attempt, and the first attempts of endpoints in the slow lane. */
  readonly retryQueue: sqs.Queue;
  /** Events that failed every attempt, or could not be read. */
  readonly deadLetterQueue: sqs.Queue;
  /** First-attempt messages no invocation managed to finish (the first queue's redrive target). */
  readonly firstAttemptDeadLetterQueue: sqs.Queue;
  /** Lambda's on-failure records for stream batches that could not be enqueued in time. */
  readonly streamFailureQueue: sqs.Queue;
  readonly firstAttemptFunction: NodejsFunction;
  readonly retryFunction: NodejsFunction;
  readonly streamConsumer: NodejsFunction;
  readonly deadLetterAlarm: cloudwatch.Alarm;
  readonly firstAttemptDeadLetterAlarm: cloudwatch.Alarm;
  readonly streamFailureAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WebhooksProps) {
    super(scope, id);
    const { table, stage } = props;
    if (!table.tableStreamArn) throw new Error('Webhooks needs a table with a stream (NEW_IMAGE)');
    const defaults: FunctionDefaults = {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
    };

    const { alarmTopic } = props;
    // The construct ids `Queue` and `DeliveryFunction` are the retry lane's: a stack that had a
    // single webhook queue keeps it, with the retries pending in it, and its consumer.
    const retryLane = queueWithDeadLetters(this, {
      queueId: 'Queue',
      // The schedule spans ~3.2 days; the queues' 14 days of retention leave room for a long
      // outage of the consumer.
      queueProps: { visibilityTimeout: QUEUE_VISIBILITY_TIMEOUT },
      maxReceiveCount: REDRIVE_MAX_RECEIVE_COUNT,
      deadLetterQueueId: 'DeadLetterQueue',
      deadLetterAlarm: {
        alarmId: 'DeadLetterAlarm',
        alarmName: 'webhook-dead-letters',
        alarmDescription: `Webhook events (${stage}) failed every delivery attempt and are in the dead-letter queue`,
        alarmTopic,
      },
    });
    this.retryQueue = retryLane.queue;
    this.deadLetterQueue = retryLane.deadLetterQueue;
    this.deadLetterAlarm = retryLane.deadLetterAlarm;

    const firstAttemptLane = queueWithDeadLetters(this, {
      queueId: 'FirstAttemptQueue',
      queueProps: {
        fifo: true,
        // Deduplication by the event id (set by the stream consumer) within a campaign's group;
        // per-group scope and throughput are SQS's high-throughput FIFO mode.
        contentBasedDeduplication: false,
        deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
        fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        visibilityTimeout: QUEUE_VISIBILITY_TIMEOUT,
      },
      maxReceiveCount: FIRST_ATTEMPT_MAX_RECEIVE_COUNT,
      deadLetterQueueId: 'FirstAttemptDeadLetterQueue',
      deadLetterAlarm: {
        alarmId: 'FirstAttemptDeadLetterAlarm',
        alarmName: 'webhook-first-attempt-dead-letters',
        alarmDescription: `Webhook events (${stage}) whose first attempt never finished are in the first-attempt dead-letter queue`,
        alarmTopic,
      },
    });
    this.firstAttemptQueue = firstAttemptLane.queue;
    this.firstAttemptDeadLetterQueue = firstAttemptLane.deadLetterQueue;
    this.firstAttemptDeadLetterAlarm = firstAttemptLane.deadLetterAlarm;

    const streamFailures = alarmedDeadLetterQueue(this, 'StreamFailureQueue', {
      alarmId: 'StreamFailureAlarm',
      alarmName: 'webhook-stream-failures',
      alarmDescription: `Table stream records (${stage}) could not be put on the webhook queue; replay them from the table`,
      alarmTopic,
    });
    this.streamFailureQueue = streamFailures.queue;
    this.streamFailureAlarm = streamFailures.alarm;

    const laneEnvironment = {
      TABLE_NAME: table.tableName,
      WEBHOOK_RETRY_QUEUE_URL: this.retryQueue.queueUrl,
      WEBHOOK_DLQ_URL: this.deadLetterQueue.queueUrl,
    };
    const lane = (
      functionId: string,
      handler: string,
      queue: sqs.Queue,
      maxConcurrency: number,
      description: string,
      backsOff: boolean,
    ) => {
      const fn = serviceFunction(this, functionId, {
        ...defaults,
        handler,
        timeout: DELIVERY_TIMEOUT,
        description: `${description} (${stage})`,
        environment: laneEnvironment,
        reservedConcurrency: props.reserveConcurrency ? maxConcurrency : undefined,
      });
      // The campaign's URL and secret are one GetItem, its slow-lane flag and failure clock
      // conditional UpdateItems, each attempt's log line one BatchWriteItem, on the table's ARN
      // alone (delivery reads no index).
      grantTable(fn, table, DELIVERY_LANE_GRANT);
      // Send to the retry queue (a failed first attempt, a slow-lane hand-off, a retry not yet
      // due) and the DLQ; the retry lane also backs a failed message off on its own queue
      // (ChangeMessageVisibility), which the first-attempt lane never does.
      grantQueue(
        fn,
        this.retryQueue,
        backsOff ? ['SendMessage', 'ChangeMessageVisibility'] : ['SendMessage'],
      );
      grantQueue(fn, this.deadLetterQueue, ['SendMessage']);
      addQueueEventSource(fn, queue, {
        batchSize: 1,
        reportBatchItemFailures: true,
        // Caps the lane's load on customers' endpoints and on the table, and keeps the mapping
        // from receiving messages it has no function to run (which would count as receives).
        maxConcurrency,
      });
      return fn;
    };
    this.firstAttemptFunction = lane(
      'FirstAttemptFunction',
      'queue/deliver-webhook',
      this.firstAttemptQueue,
      FIRST_ATTEMPT_CONCURRENCY,
      'webhook first attempts',
      false,
    );
    this.retryFunction = lane(
      'DeliveryFunction',
      'queue/retry-webhook',
      this.retryQueue,
      RETRY_CONCURRENCY,
      'webhook retries and slow endpoints',
      true,
    );

    this.streamConsumer = serviceFunction(this, 'StreamConsumer', {
      ...defaults,
      handler: 'stream/enqueue-webhook-events',
      timeout: DELIVERY_TIMEOUT,
      environment: { TABLE_NAME: table.tableName, WEBHOOK_QUEUE_URL: this.firstAttemptQueue.queueUrl },
    });
    // Events go on the first-attempt queue in SendMessageBatch calls (authorized as SendMessage).
    grantQueue(this.streamConsumer, this.firstAttemptQueue, ['SendMessage']);
    // Action items, the feed and the queue's campaign check (`WEBHOOK_STREAM_GRANT` says what).
    grantTable(this.streamConsumer, table, WEBHOOK_STREAM_GRANT);
    addTableStreamSource(this.streamConsumer, table, {
      // Not LATEST: events committed before the mapping existed are still delivered.
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      batchSize: WEBHOOK_STREAM_BATCHING.batchSize,
      filters: STREAM_CONSUMER_FILTERS.map((f) => lambda.FilterCriteria.filter({ ...f })),
      reportBatchItemFailures: true,
      bisectBatchOnError: true,
      // No batching window: another campaign's first attempt must start within 1 s of its event.
      maxRecordAge: Duration.hours(23),
      onFailure: this.streamFailureQueue,
    });
  }
}
