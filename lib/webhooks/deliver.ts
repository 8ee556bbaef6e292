/**
 * Webhook delivery, one message per invocation in each of the two lanes (`lanes.ts`).
 *
 * Per message: load the campaign (the URL and secret in force now; none -> drop), check the
 * destination (SSRF rules, DNS resolved once and within 3 s, else a failed attempt), sign, POST
 * with a 15 s timeout and no redirects. 2xx: done. 410: the receiver asked us to stop; done.
 * Anything else is retried on the schedule, in the retry lane, until the last attempt, after which
 * the event goes with its last error to the dead-letter queue.
 *
 * - First-attempt lane (`deliverFirstAttempts`): a failed attempt is sent to the retry lane with
 *   the schedule's first delay and acknowledged, so it never holds its FIFO message group while it
 *   waits. A campaign whose endpoint is in the slow lane is sent there without an attempt, to be
 *   tried at once by the retry lane's consumer.
 * - Retry lane (`deliverRetries`): the attempt number is the attempts made before the message
 *   entered the lane (its `attempts` attribute) plus SQS's ApproximateReceiveCount. A failed
 *   attempt sets the message's visibility timeout to the next delay and is reported as a batch
 *   item failure, so SQS hands it back exactly then (per-message backoff, no sleeping Lambda).
 *
 * Every attempt also keeps the campaign's slow-lane flag current: set when an attempt fails or
 * takes longer than `SLOW_ATTEMPT_MS`, cleared when one succeeds within it.
 *
 * The queues' own redrive policies are only a safety net for messages this code never got to
 * finish, e.g. a function timeout or a DynamoDB outage.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { webhookSends } from '../domain/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { messageIdOf, processRecords } from '../queues/batch.ts';
import { type AttemptResult, attemptDelivery, type WebhookTarget } from './attempt.ts';
import { ATTEMPTS_ATTRIBUTE, DUE_ATTRIBUTE, retryMessage, SLOW_ATTEMPT_MS } from './lanes.ts';
import { parseWebhookMessage, type WebhookMessage } from './message.ts';
import { MAX_VISIBILITY_SECONDS, maxAttempts, nextDelaySeconds } from './schedule.ts';
import type { Resolver } from './ssrf.ts';

export { type AttemptResult, attemptDelivery, type WebhookTarget };

// A child: keys appended to the shared logger by the HTTP middleware (one process on the local
// stack) do not leak into these lines.
const logger = rootLogger.createChild();

/** The fields of an SQS record this code reads (Lambda's `SQSRecord` and the local poller's). */
export interface QueueRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string };
  messageAttributes?: Record<string, { stringValue?: string; dataType?: string } | undefined>;
}

/** One logged attempt (`lib/db/entities/webhook-attempt.ts`), as the delivery reports it. */
export interface AttemptRecord {
  id: string;
  event_id: string;
  event_type: WebhookMessage['event_type'];
  attempt: number;
  status: 'succeeded' | 'failed' | 'pending';
  attempted_at: string;
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

export interface DeliveryDeps {
  sqs: SQSClient;
  /** The retry lane's queue: where the first-attempt lane sends, and whose messages back off. */
  retryQueueUrl: string;
  dlqUrl: string;
  /** Retry delays in seconds; attempts = delays + 1. */
  delays: readonly number[];
  allowPrivate: boolean;
  /** The campaign's current webhook URL and secret; undefined when deleted or without a URL. */
  loadTarget: (tenant: string, campaignId: string) => Promise<WebhookTarget | undefined>;
  /**
   * Put the campaign's endpoint `url` in the slow lane (`true`) or take it out. Best effort: a
   * failure only leaves the flag as it was.
   */
  setSlowLane?: (tenant: string, campaignId: string, url: string, slow: boolean) => Promise<void>;
  /**
   * Log an attempt (the delivery log). Its failure is logged and ignored: the log never fails,
   * delays past its own call or repeats a delivery.
   */
  recordAttempt?: (tenant: string, campaignId: string, attempt: AttemptRecord) => Promise<void>;
  /**
   * Keep the URL's failure clock (`lib/webhooks/failures.ts`): start it at a failure, clear it at
   * a success, and disable the webhook when it has failed every attempt for long enough. Best
   * effort, like the slow-lane flag.
   */
  trackOutcome?: (
    tenant: string,
    campaignId: string,
    target: WebhookTarget,
    failed: boolean,
    now: Date,
  ) => Promise<void>;
  resolve?: Resolver;
  timeoutMs?: number;
  now?: () => Date;
  random?: () => number;
  /** Milliseconds since some fixed point, for attempt durations (tests replace it). */
  clock?: () => number;
}

/** What became of a batch's messages, for the business metrics. */
export interface DeliveryCounts {
  /** Delivered, or stopped by the receiver's 410. */
  delivered: number;
  /** The campaign is gone or has no webhook_url. */
  dropped: number;
  /** The attempt failed; the event waits in the retry lane for the next one. */
  failed: number;
  deadLettered: number;
  /** Sent to the retry lane without an attempt (slow lane, a retry not yet due, a read error). */
  moved: number;
}

interface DeliveryResult {
  batchItemFailures: Array<{ itemIdentifier: string }>;
  counts: DeliveryCounts;
}

/** `backoff`: a failed retry-lane attempt, left on its queue until its next attempt is due. */
type Outcome = keyof DeliveryCounts | 'backoff' | 'pending';

/** First-attempt lane: every message is acknowledged unless it could not be handed on. */
export function deliverFirstAttempts(
  records: readonly QueueRecord[],
  deps: DeliveryDeps,
): Promise<DeliveryResult> {
  return deliverEach(records, deps, firstAttempt);
}

/** Retry lane: the ids returned in `batchItemFailures` stay on the queue for their next attempt. */
export function deliverRetries(records: readonly QueueRecord[], deps: DeliveryDeps): Promise<DeliveryResult> {
  return deliverEach(records, deps, retry);
}

async function deliverEach(
  records: readonly QueueRecord[],
  deps: DeliveryDeps,
  deliver: (record: QueueRecord, deps: DeliveryDeps) => Promise<Outcome>,
): Promise<DeliveryResult> {
  const counts: DeliveryCounts = { delivered: 0, dropped: 0, failed: 0, deadLettered: 0, moved: 0 };
  const { batchItemFailures } = await processRecords(
    records,
    async (record) => {
      const outcome = await deliver(record, deps);
      if (outcome === 'pending') return 'retry';
      if (outcome === 'backoff') {
        counts.failed++;
        return 'retry';
      }
      counts[outcome]++;
    },
    {
      itemIdOf: messageIdOf,
      // Unexpected (e.g. the retry lane cannot read the campaign): leave it on the queue; it
      // comes back after the queue's visibility timeout, and the redrive policy bounds how often.
      onError: (err, record) =>
        logger.error('webhook delivery error', {
          message_id: record.messageId,
          error: (err as Error).message,
        }),
    },
  );
  return { batchItemFailures, counts };
}

type Parsed =
  | { ok: true; message: WebhookMessage; log: Record<string, unknown> }
  | { ok: false; outcome: Outcome };

async function parse(record: QueueRecord, deps: DeliveryDeps, attempt: number): Promise<Parsed> {
  const parsed = parseWebhookMessage(record.body);
  if (!parsed.ok) {
    logger.error('webhook message malformed', { message_id: record.messageId, error: parsed.error });
    return { ok: false, outcome: await deadLetter(deps, { raw_body: record.body }, parsed.error, attempt) };
  }
  const { message } = parsed;
  const log = {
    event_id: message.event_id,
    event_type: message.event_type,
    campaign_id: message.campaign_id,
    attempt,
  };
  return { ok: true, message, log };
}

async function firstAttempt(record: QueueRecord, deps: DeliveryDeps): Promise<Outcome> {
  const parsed = await parse(record, deps, 1);
  if (!parsed.ok) return parsed.outcome;
  const { message, log } = parsed;

  const read = await readTarget(record, message, 0, deps, log);
  if ('outcome' in read) return read.outcome;
  const { target } = read;
  if (!target) return drop(log);
  if (!wanted(message, target)) return skip(log, target);
  if (target.slowLane) {
    logger.info('webhook endpoint in the slow lane; first attempt handed to the retry lane', log);
    return moveToRetryLane(deps, record.body, message, 0, 0, log);
  }

  const timed = await timedAttempt(message, target, deps, log);
  const { result } = timed;
  if (result.outcome !== 'failed') {
    await logAttempt(deps, message, target, 1, timed, undefined, log);
    return 'delivered';
  }
  const delay = nextDelaySeconds(1, deps.delays, {
    retryAfterSeconds: result.retryAfterSeconds,
    random: deps.random,
  });
  // The log write runs beside the hand-off, so it adds no wait of its own.
  const logged = logAttempt(deps, message, target, 1, timed, delay, log);
  if (delay === undefined) {
    logger.warn('webhook failed for the last time; dead-lettered', { ...log, error: result.error });
    const [outcome] = await Promise.all([deadLetter(deps, message, result.error, 1, result.status), logged]);
    return outcome;
  }
  logFailure(log, result, delay, deps);
  const [moved] = await Promise.all([moveToRetryLane(deps, record.body, message, 1, delay, log), logged]);
  return moved === 'moved' ? 'failed' : moved;
}

async function retry(record: QueueRecord, deps: DeliveryDeps): Promise<Outcome> {
  const attributes = record.messageAttributes ?? {};
  const before = Math.max(0, Number(attributes[ATTEMPTS_ATTRIBUTE]?.stringValue) || 0);
  const due = Number(attributes[DUE_ATTRIBUTE]?.stringValue);
  const receives = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
  const attempt = before + receives;
  const parsed = await parse(record, deps, attempt);
  if (!parsed.ok) return parsed.outcome;
  const { message, log } = parsed;

  const now = Date.now();
  if (Number.isFinite(due) && due - now > 1000) {
    // Put back as a new message, so that the receives counted above stay attempts.
    return moveToRetryLane(deps, record.body, message, before, (due - now) / 1000, log);
  }

  const read = await readTarget(record, message, before, deps, log);
  if ('outcome' in read) return read.outcome;
  const { target } = read;
  if (!target) return drop(log);
  if (!wanted(message, target)) return skip(log, target);
  const started = Date.now();
  const timed = await timedAttempt(message, target, deps, log);
  const { result } = timed;
  if (result.outcome !== 'failed') {
    await logAttempt(deps, message, target, attempt, timed, undefined, log);
    return 'delivered';
  }
  const delay = nextDelaySeconds(attempt, deps.delays, {
    retryAfterSeconds: result.retryAfterSeconds,
    random: deps.random,
  });
  if (delay === undefined) {
    logger.warn('webhook failed for the last time; dead-lettered', { ...log, error: result.error });
    const logged = logAttempt(deps, message, target, attempt, timed, undefined, log);
    const [outcome] = await Promise.all([
      deadLetter(deps, message, result.error, attempt, result.status),
      logged,
    ]);
    return outcome;
  }
  // The 12 h ceiling counts from this receive; keep a margin for the time the attempt has taken.
  const elapsed = Math.ceil((Date.now() - started) / 1000);
  const visibility = Math.max(0, Math.min(delay, MAX_VISIBILITY_SECONDS - elapsed - 60));
  logFailure(log, result, visibility, deps);
  const logged = logAttempt(deps, message, target, attempt, timed, visibility, log);
  try {
    await deps.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: deps.retryQueueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: visibility,
      }),
    );
  } catch (err) {
    // Without it the message still comes back, after the queue's visibility timeout.
    logger.warn('webhook backoff not set', { ...log, error: (err as Error).message });
  }
  await logged;
  return 'backoff';
}

/** The event is of a type the campaign sends, and its webhook is enabled. */
const wanted = (message: WebhookMessage, target: WebhookTarget) => webhookSends(target, message.event_type);

function skip(log: Record<string, unknown>, target: WebhookTarget): Outcome {
  logger.info(
    target.disabled ? 'webhook not sent: disabled' : 'webhook not sent: event type not subscribed',
    log,
  );
  return 'dropped';
}

interface TimedAttempt {
  result: AttemptResult;
  startedAt: Date;
  durationMs: number;
}

/**
 * Log the attempt (`recordAttempt`); `nextDelaySeconds` is when the next one is due, undefined
 * when there is none. Never throws and never fails the delivery.
 */
async function logAttempt(
  deps: DeliveryDeps,
  message: WebhookMessage,
  target: WebhookTarget,
  attempt: number,
  timed: TimedAttempt,
  nextDelaySeconds: number | undefined,
  log: Record<string, unknown>,
): Promise<void> {
  if (!deps.recordAttempt) return;
  const { result, startedAt, durationMs } = timed;
  const startedMs = startedAt.getTime();
  const failed = result.outcome !== 'delivered';
  const record: AttemptRecord = {
    id: `att_${startedMs}_${message.event_id}_${attempt}`,
    event_id: message.event_id,
    event_type: message.event_type,
    attempt,
    status: !failed ? 'succeeded' : nextDelaySeconds === undefined ? 'failed' : 'pending',
    attempted_at: startedAt.toISOString(),
    url: target.url,
    status_code: result.outcome === 'gone' ? 410 : (result.status ?? null),
    error:
      result.outcome === 'failed'
        ? result.error
        : result.outcome === 'gone'
          ? 'HTTP 410 Gone: retries stopped'
          : null,
    duration_ms: durationMs,
    next_attempt_at:
      failed && nextDelaySeconds !== undefined
        ? new Date(startedMs + durationMs + nextDelaySeconds * 1000).toISOString()
        : null,
  };
  try {
    await deps.recordAttempt(message.tenant, message.campaign_id, record);
  } catch (err) {
    logger.warn('webhook attempt not logged', { ...log, error: (err as Error).message });
  }
}

/**
 * The event's campaign (undefined when it is gone or has no webhook_url). When it cannot be read
 * (DynamoDB throttling, failing or paused), no attempt is made: the event goes back to the retry
 * lane as a new message with the `attempts` it had, due in `READ_RETRY_SECONDS`, rather than
 * waiting for the queue's visibility timeout (minutes) with this receive counted as an attempt;
 * meanwhile a first-attempt group moves on.
 */
async function readTarget(
  record: QueueRecord,
  message: WebhookMessage,
  attempts: number,
  deps: DeliveryDeps,
  log: Record<string, unknown>,
): Promise<{ target: WebhookTarget | undefined } | { outcome: Outcome }> {
  try {
    return { target: await deps.loadTarget(message.tenant, message.campaign_id) };
  } catch (err) {
    logger.warn('webhook campaign not read; handed to the retry lane', {
      ...log,
      error: (err as Error).message,
    });
    return { outcome: await moveToRetryLane(deps, record.body, message, attempts, READ_RETRY_SECONDS, log) };
  }
}

/** One attempt, timed, that also keeps the campaign's slow-lane flag current. */
async function timedAttempt(
  message: WebhookMessage,
  target: WebhookTarget,
  deps: DeliveryDeps,
  log: Record<string, unknown>,
): Promise<TimedAttempt> {
  const clock = deps.clock ?? (() => performance.now());
  const startedAt = deps.now?.() ?? new Date();
  const started = clock();
  const result = await attemptDelivery(message, target, {
    allowPrivate: deps.allowPrivate,
    resolve: deps.resolve,
    timeoutMs: deps.timeoutMs,
    now: startedAt,
  });
  const durationMs = Math.round(clock() - started);
  const slow = result.outcome === 'failed' || durationMs > SLOW_ATTEMPT_MS;
  if (result.outcome === 'delivered') {
    logger.info('webhook delivered', { ...log, status: result.status, duration_ms: durationMs });
  } else if (result.outcome === 'gone') {
    logger.info('webhook stopped: receiver answered 410 Gone', { ...log, duration_ms: durationMs });
  }
  if (slow !== Boolean(target.slowLane) && deps.setSlowLane) {
    logger.info(slow ? 'webhook endpoint enters the slow lane' : 'webhook endpoint leaves the slow lane', {
      ...log,
      duration_ms: durationMs,
    });
    try {
      await deps.setSlowLane(message.tenant, message.campaign_id, target.url, slow);
    } catch (err) {
      logger.warn('webhook slow-lane flag not changed', { ...log, error: (err as Error).message });
    }
  }
  const failed = result.outcome === 'failed';
  // A failure, or the first success after failures: a steady healthy endpoint costs nothing.
  if (deps.trackOutcome && (failed || target.failingSince !== undefined)) {
    try {
      await deps.trackOutcome(
        message.tenant,
        message.campaign_id,
        target,
        failed,
        deps.now?.() ?? new Date(),
      );
    } catch (err) {
      logger.warn('webhook failure clock not changed', { ...log, error: (err as Error).message });
    }
  }
  return { result, startedAt, durationMs };
}

function logFailure(
  log: Record<string, unknown>,
  result: Extract<AttemptResult, { outcome: 'failed' }>,
  retryInSeconds: number,
  deps: DeliveryDeps,
) {
  // A warning, so the local stack (LOG_LEVEL=WARN) shows every failed attempt and when it is tried next.
  logger.warn('webhook attempt failed; retrying', {
    ...log,
    error: result.error,
    status: result.status,
    retry_in_seconds: retryInSeconds,
    next_attempt_at: new Date(Date.now() + retryInSeconds * 1000).toISOString(),
    attempts: maxAttempts(deps.delays),
  });
}

function drop(log: Record<string, unknown>): Outcome {
  logger.info('webhook dropped: campaign deleted or has no webhook_url', log);
  return 'dropped';
}

/**
 * When an event's campaign cannot be read (DynamoDB throttling, failing or paused), it is tried
 * again after this long, in the retry lane, without counting an attempt.
 */
const READ_RETRY_SECONDS = 5;

/** Send the event to the retry lane, due in `delaySeconds`, after `attempts` attempts. */
async function moveToRetryLane(
  deps: DeliveryDeps,
  body: string,
  message: WebhookMessage,
  attempts: number,
  delaySeconds: number,
  log: Record<string, unknown>,
): Promise<Outcome> {
  try {
    await deps.sqs.send(
      new SendMessageCommand({
        QueueUrl: deps.retryQueueUrl,
        ...retryMessage(body, message, attempts, delaySeconds),
      }),
    );
    return 'moved';
  } catch (err) {
    // Not acknowledged: the message comes back to this lane and is handled again.
    logger.error('webhook retry-lane send failed', { ...log, error: (err as Error).message });
    return 'pending';
  }
}

async function deadLetter(
  deps: DeliveryDeps,
  event: WebhookMessage | { raw_body: string },
  error: string,
  attempts: number,
  status?: number,
): Promise<Outcome> {
  try {
    await deps.sqs.send(
      new SendMessageCommand({
        QueueUrl: deps.dlqUrl,
        MessageBody: JSON.stringify({
          ...event,
          dead_letter: {
            error,
            ...(status !== undefined ? { status } : {}),
            attempts,
            failed_at: new Date().toISOString(),
          },
        }),
      }),
    );
    return 'deadLettered';
  } catch (err) {
    // Not acknowledged: the message comes back and this is tried again.
    logger.error('webhook dead-letter send failed', { error: (err as Error).message });
    return 'pending';
  }
}
