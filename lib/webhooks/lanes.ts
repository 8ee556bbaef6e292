/**
 * The two delivery lanes, shared by the CDK stack (queue types, event source mappings) and the
 * local stack (queues, pollers), so both run the same design:
 *
 * - **First-attempt lane**: a FIFO queue that every new event enters. Each campaign's events are
 *   spread over `FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN` message groups, and SQS hands out a group's
 *   next message only once the previous one is finished, so one campaign never has more than that
 *   many first attempts running, however many events it has pending and however slow its
 *   receiver is. Nothing waits in this queue for a retry: a failed attempt leaves it at once.
 * - **Retry lane**: a standard queue for every later attempt (per-message backoff through the
 *   visibility timeout) and for the first attempts of campaigns whose endpoint is in the slow lane
 *   (its last attempt failed or took longer than `SLOW_ATTEMPT_MS`). Its messages carry the
 *   campaign as `MessageGroupId`, which makes it an SQS fair queue: a campaign with a large backlog
 *   does not raise the dwell time of the others.
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { WebhookMessage } from './message.ts';

/**
 * At most this many first attempts of one campaign run at once (its FIFO message groups). It caps
 * what one slow campaign can hold of the lane (10 of `FIRST_ATTEMPT_CONCURRENCY`, for one attempt
 * of at most 15 s before it is in the slow lane) against how fast one campaign's own burst drains
 * (10 / latency: ~100 deliveries/s at 100 ms per POST).
 */
export const FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN = 10;

/** First attempts running at once: the lane's event source mapping maximum concurrency. */
export const FIRST_ATTEMPT_CONCURRENCY = 100;

/** Retry-lane attempts running at once: its event source mapping maximum concurrency. */
export const RETRY_CONCURRENCY = 50;

/**
 * Retry-lane attempts of one campaign running at once on the local stack, where the poller stands
 * in for SQS fair queues (which prefer the campaigns with the fewest messages in flight).
 */
export const RETRY_CONCURRENCY_PER_CAMPAIGN = 10;

/**
 * An attempt that fails or takes longer than this puts its endpoint in the slow lane: the
 * campaign's next first attempts go to the retry lane until one attempt succeeds within it.
 * Healthy receivers answer in well under a second; 2 s leaves room for a cold TLS handshake
 * across the world while keeping a slow endpoint from holding first-attempt slots for long.
 */
export const SLOW_ATTEMPT_MS = 2_000;

/** SQS's ceiling for a message's `DelaySeconds`. */
export const MAX_DELAY_SECONDS = 15 * 60;

/** Message attributes of retry-lane messages. */
export const ATTEMPTS_ATTRIBUTE = 'attempts';
export const DUE_ATTRIBUTE = 'due_at';

/** The group a message group id may be built from: a campaign id (a UUID) or a stand-in. */
const SAFE_GROUP = /^[A-Za-z0-9_-]{1,100}$/;

/** FNV-1a: a cheap, stable spread of event ids over a campaign's groups. */
function spread(text: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % buckets;
}

const campaignKey = (message: Partial<WebhookMessage>): string =>
  typeof message.campaign_id === 'string' && SAFE_GROUP.test(message.campaign_id)
    ? message.campaign_id
    : 'unreadable';

/**
 * The first-attempt message's group and deduplication ids. The group is one of the campaign's
 * groups, chosen by the event id, so a stream batch retried by Lambda puts a repeated event in
 * the same group with the same deduplication id, and SQS drops the copy (within 5 minutes).
 */
export function firstAttemptIds(
  message: Partial<WebhookMessage>,
  body: string,
): { MessageGroupId: string; MessageDeduplicationId: string } {
  const eventId =
    typeof message.event_id === 'string' && /^[\x21-\x7e]{1,128}$/.test(message.event_id)
      ? message.event_id
      : createHash('sha256').update(body).digest('hex');
  const group = spread(eventId, FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN);
  // A redelivery is the same event sent again on request: its own deduplication id, or SQS would
  // drop it as a copy of the event's first delivery (within 5 minutes).
  const redelivery =
    typeof message.redelivery === 'string' && /^[A-Za-z0-9_-]{1,16}$/.test(message.redelivery)
      ? message.redelivery
      : undefined;
  const dedupe = redelivery ? `${eventId.slice(0, 100)}#rd#${redelivery}` : eventId;
  return { MessageGroupId: `${campaignKey(message)}#${group}`, MessageDeduplicationId: dedupe };
}

/** The retry-lane message's group: the campaign, the tenant unit of SQS fair queues. */
const retryGroupId = (message: Partial<WebhookMessage>): string => campaignKey(message);

/**
 * The retry-lane message for an event that has had `attempts` attempts and is due in
 * `delaySeconds`. SQS delays a message by at most 15 minutes; a longer delay (a `Retry-After` on a
 * first attempt) also records when it is due, and the retry lane puts it back until then.
 */
export function retryMessage(
  body: string,
  message: Partial<WebhookMessage>,
  attempts: number,
  delaySeconds: number,
  now = Date.now(),
): {
  MessageBody: string;
  MessageGroupId: string;
  DelaySeconds: number;
  MessageAttributes: Record<string, MessageAttributeValue>;
} {
  const delay = Math.max(0, Math.round(delaySeconds));
  const attributes: Record<string, MessageAttributeValue> = {
    [ATTEMPTS_ATTRIBUTE]: { DataType: 'Number', StringValue: String(attempts) },
  };
  if (delay > MAX_DELAY_SECONDS) {
    attributes[DUE_ATTRIBUTE] = { DataType: 'Number', StringValue: String(now + delay * 1000) };
  }
  return {
    MessageBody: body,
    MessageGroupId: retryGroupId(message),
    DelaySeconds: Math.min(delay, MAX_DELAY_SECONDS),
    MessageAttributes: attributes,
  };
}
