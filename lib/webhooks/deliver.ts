/**
 * Webhook delivery: one SQS batch in, partial batch response out.
 *
 * Per message: load the campaign (the URL and secret in force now; none -> drop), check the
 * destination (SSRF rules, DNS resolved once and within 3 s, else a failed attempt), sign, POST
 * with a 15 s timeout and no redirects. 2xx: done. 410: the receiver asked us to stop; done.
 * Anything else: if retries remain, set the message's visibility timeout to the next delay of the
 * schedule and report it as a batch item failure, so SQS hands it back exactly then (per-message
 * backoff, no sleeping Lambda); after the last attempt, send the event with its last error to the
 * dead-letter queue and acknowledge it.
 *
 * The attempt number is SQS's ApproximateReceiveCount. The queue's own redrive policy
 * (maxReceiveCount above the schedule's attempts) is only a safety net for messages this code
 * never got to finish, e.g. a function timeout or a DynamoDB outage.
 */
import { ChangeMessageVisibilityCommand, SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { logger as rootLogger } from '../http/logger.ts';
import { postWebhook } from './http.ts';
import { parseWebhookMessage, type WebhookMessage } from './message.ts';
import { MAX_VISIBILITY_SECONDS, maxAttempts, nextDelaySeconds, parseRetryAfter } from './schedule.ts';
import { signDelivery } from './sign.ts';
import { checkDestination, type Resolver } from './ssrf.ts';

// A child: keys appended to the shared logger by the HTTP middleware (one process on the local
// stack) do not leak into these lines.
const logger = rootLogger.createChild();

/** The fields of an SQS record this code reads (Lambda's `SQSRecord` and the local poller's). */
export interface QueueRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: { ApproximateReceiveCount?: string };
}

export interface WebhookTarget {
  url: string;
  secret: string;
}

export interface DeliveryDeps {
  sqs: SQSClient;
  queueUrl: string;
  dlqUrl: string;
  /** Retry delays in seconds; attempts = delays + 1. */
  delays: readonly number[];
  allowPrivate: boolean;
  /** The campaign's current webhook URL and secret; undefined when deleted or without a URL. */
  loadTarget: (tenant: string, campaignId: string) => Promise<WebhookTarget | undefined>;
  resolve?: Resolver;
  timeoutMs?: number;
  now?: () => Date;
  random?: () => number;
}

export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'gone' }
  | { outcome: 'failed'; error: string; status?: number; retryAfterSeconds?: number };

/** Sign and POST one event to one target: the single attempt, usable on its own (bench, tools). */
export async function attemptDelivery(
  message: WebhookMessage,
  target: WebhookTarget,
  options: { allowPrivate: boolean; resolve?: Resolver; timeoutMs?: number; now?: Date },
): Promise<AttemptResult> {
  const destination = await checkDestination(target.url, options);
  if (!destination.ok) return { outcome: 'failed', error: `destination refused: ${destination.message}` };
  const signed = signDelivery(message, target.secret, options.now ?? new Date());
  const result = await postWebhook(destination, signed.headers, signed.body, options.timeoutMs);
  if (result.kind === 'error') return { outcome: 'failed', error: result.error };
  const { status } = result;
  if (status >= 200 && status < 300) return { outcome: 'delivered', status };
  if (status === 410) return { outcome: 'gone' };
  const error = status >= 300 && status < 400 ? `HTTP ${status} redirect (not followed)` : `HTTP ${status}`;
  const retryAfterSeconds = status === 429 || status === 503 ? parseRetryAfter(result.retryAfter) : undefined;
  return { outcome: 'failed', error, status, retryAfterSeconds };
}

/** Deliver a batch; the ids returned in `batchItemFailures` stay on the queue. */
export async function deliverBatch(
  records: readonly QueueRecord[],
  deps: DeliveryDeps,
): Promise<{ batchItemFailures: Array<{ itemIdentifier: string }> }> {
  const started = Date.now();
  const results = await Promise.all(
    records.map(async (record) => {
      try {
        return await deliverRecord(record, deps, started);
      } catch (err) {
        // Unexpected (e.g. DynamoDB unavailable): leave it on the queue; it comes back after the
        // queue's visibility timeout, and the redrive policy bounds how often.
        logger.error('webhook delivery error', {
          message_id: record.messageId,
          error: (err as Error).message,
        });
        return false;
      }
    }),
  );
  return {
    batchItemFailures: records
      .filter((_, i) => !results[i])
      .map((record) => ({ itemIdentifier: record.messageId })),
  };
}

/** True when the message is finished (delivered, dropped or dead-lettered). */
async function deliverRecord(
  record: QueueRecord,
  deps: DeliveryDeps,
  batchStarted: number,
): Promise<boolean> {
  const attempt = Math.max(1, Number(record.attributes.ApproximateReceiveCount) || 1);
  const parsed = parseWebhookMessage(record.body);
  if (!parsed.ok) {
    logger.error('webhook message malformed', { message_id: record.messageId, error: parsed.error });
    return deadLetter(deps, { raw_body: record.body }, parsed.error, attempt);
  }
  const message = parsed.message;
  const log = {
    event_id: message.event_id,
    event_type: message.event_type,
    campaign_id: message.campaign_id,
    attempt,
  };

  const target = await deps.loadTarget(message.tenant, message.campaign_id);
  if (!target) {
    logger.info('webhook dropped: campaign deleted or has no webhook_url', log);
    return true;
  }

  const result = await attemptDelivery(message, target, {
    allowPrivate: deps.allowPrivate,
    resolve: deps.resolve,
    timeoutMs: deps.timeoutMs,
    now: deps.now?.(),
  });
  if (result.outcome === 'delivered') {
    logger.info('webhook delivered', { ...log, status: result.status });
    return true;
  }
  if (result.outcome === 'gone') {
    logger.info('webhook stopped: receiver answered 410 Gone', log);
    return true;
  }

  const delay = nextDelaySeconds(attempt, deps.delays, {
    retryAfterSeconds: result.retryAfterSeconds,
    random: deps.random,
  });
  if (delay === undefined) {
    logger.warn('webhook failed for the last time; dead-lettered', { ...log, error: result.error });
    return deadLetter(deps, message, result.error, attempt, result.status);
  }
  // The 12 h ceiling counts from this receive; keep a margin for the time the batch has taken.
  const elapsed = Math.ceil((Date.now() - batchStarted) / 1000);
  const visibility = Math.max(0, Math.min(delay, MAX_VISIBILITY_SECONDS - elapsed - 60));
  logger.info('webhook attempt failed; retrying', {
    ...log,
    error: result.error,
    status: result.status,
    retry_in_seconds: visibility,
    attempts: maxAttempts(deps.delays),
  });
  try {
    await deps.sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: deps.queueUrl,
        ReceiptHandle: record.receiptHandle,
        VisibilityTimeout: visibility,
      }),
    );
  } catch (err) {
    // Without it the message still comes back, after the queue's visibility timeout.
    logger.warn('webhook backoff not set', { ...log, error: (err as Error).message });
  }
  return false;
}

async function deadLetter(
  deps: DeliveryDeps,
  event: WebhookMessage | { raw_body: string },
  error: string,
  attempts: number,
  status?: number,
): Promise<boolean> {
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
    return true;
  } catch (err) {
    // Not acknowledged: the message comes back and this is tried again.
    logger.error('webhook dead-letter send failed', { error: (err as Error).message });
    return false;
  }
}
