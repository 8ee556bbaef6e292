import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/**
 * The queues of webhook delivery and purge, built one way: SSE-SQS, TLS only, 14 days' retention,
 * and every dead-letter destination alarmed at its first message.
 *
 * Functions that add the resources to the caller's scope, not a `Construct` subclass, on purpose:
 * a subclass would put the queues one level deeper in the construct tree, which changes their
 * logical ids, and CloudFormation would replace the deployed queues (losing the messages in them,
 * webhook retries and purge jobs included) and the named alarms. The ids passed in are the ones the
 * resources have always had.
 */

/** How long every queue keeps a message: room for a long outage of its consumer. */
export const QUEUE_RETENTION = Duration.days(14);

/** Sends an alarm's ALARM and its return to OK to the topic, when there is one. */
export function notify(alarm: cloudwatch.AlarmBase, topic: sns.ITopic | undefined): void {
  if (!topic) return;
  alarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
  alarm.addOkAction(new cloudwatchActions.SnsAction(topic));
}

/** An SSE-SQS, TLS-only queue with the common retention; `props` adds to or overrides that. */
export function secureQueue(scope: Construct, id: string, props: sqs.QueueProps = {}): sqs.Queue {
  return new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: QUEUE_RETENTION,
    ...props,
  });
}

export interface DeadLetterAlarmProps {
  /** Construct id of the alarm. */
  readonly alarmId: string;
  /** The alarm is named `<stack name>-<alarmName>`. */
  readonly alarmName: string;
  readonly alarmDescription: string;
  /** Where the alarm notifies; the alarm exists either way. */
  readonly alarmTopic?: sns.ITopic;
}

export interface AlarmedDeadLetterQueueProps extends DeadLetterAlarmProps {
  /** A FIFO dead-letter queue (the redrive target of a FIFO queue must be one). */
  readonly fifo?: boolean;
}

export interface AlarmedDeadLetterQueue {
  readonly queue: sqs.Queue;
  /** In ALARM while the queue holds a message: anything here was given up on. */
  readonly alarm: cloudwatch.Alarm;
}

/**
 * A queue that is a dead-letter destination (a redrive target, or the on-failure destination of a
 * stream mapping) and its alarm, which fires at the first message and returns to OK once it is
 * empty again.
 */
export function alarmedDeadLetterQueue(
  scope: Construct,
  queueId: string,
  props: AlarmedDeadLetterQueueProps,
): AlarmedDeadLetterQueue {
  const queue = secureQueue(scope, queueId, props.fifo ? { fifo: true } : {});
  const alarm = new cloudwatch.Alarm(scope, props.alarmId, {
    alarmName: `${Stack.of(scope).stackName}-${props.alarmName}`,
    alarmDescription: props.alarmDescription,
    metric: queue.metricApproximateNumberOfMessagesVisible({
      period: Duration.minutes(1),
      statistic: cloudwatch.Stats.MAXIMUM,
    }),
    threshold: 0,
    comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
    treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
  });
  notify(alarm, props.alarmTopic);
  return { queue, alarm };
}

export interface QueueWithDeadLettersProps {
  /** Construct id of the queue. */
  readonly queueId: string;
  /** Settings of the queue beyond the common ones (visibility timeout, FIFO options). */
  readonly queueProps?: Omit<sqs.QueueProps, 'deadLetterQueue'>;
  /** Receives of one message before SQS moves it to the dead-letter queue. */
  readonly maxReceiveCount: number;
  /** Construct id of the dead-letter queue. */
  readonly deadLetterQueueId: string;
  /** The dead-letter queue's alarm. */
  readonly deadLetterAlarm: DeadLetterAlarmProps;
}

export interface QueueWithDeadLetters {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly deadLetterAlarm: cloudwatch.Alarm;
}

/**
 * A work queue whose messages go to an alarmed dead-letter queue after `maxReceiveCount`
 * receives. A FIFO queue gets a FIFO dead-letter queue.
 */
export function queueWithDeadLetters(
  scope: Construct,
  props: QueueWithDeadLettersProps,
): QueueWithDeadLetters {
  const deadLetters = alarmedDeadLetterQueue(scope, props.deadLetterQueueId, {
    ...props.deadLetterAlarm,
    fifo: props.queueProps?.fifo,
  });
  const queue = secureQueue(scope, props.queueId, {
    ...props.queueProps,
    deadLetterQueue: { queue: deadLetters.queue, maxReceiveCount: props.maxReceiveCount },
  });
  return { queue, deadLetterQueue: deadLetters.queue, deadLetterAlarm: deadLetters.alarm };
}
