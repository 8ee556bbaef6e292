/**
 * Table stream -> the webhook first-attempt queue (FIFO, see `lanes.ts`): one transform shared by
 * the AWS stream consumer (`functions/stream/enqueue-webhook-events.ts`) and the local stream
 * poller. The same consumer writes the items of actions recorded on their link's item
 * (`link-actions.ts`).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { EVENT_FROM_LINK } from '../domain/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { firstAttemptIds } from './lanes.ts';
import { eventJsonOf, type WebhookMessage } from './message.ts';

// A child: keys appended to the shared logger by the HTTP middleware (one process on the local
// stack) do not leak into these lines.
const logger = rootLogger.createChild();

/** The part of a stream record we read; Lambda's event records and GetRecords' records both fit. */
export interface StreamRecordLike {
  eventName?: string;
  dynamodb?: {
    // Lambda's and the SDK's AttributeValue types differ only nominally.
    NewImage?: Record<string, unknown>;
    SequenceNumber?: string;
  };
}

/**
 * `EVENT_RECORD_FILTER`'s predicate, an INSERT of an item with a string `event_type`, less the
 * items whose event came from their link's record (`EVENT_FROM_LINK`; the filter passes those
 * for the rollups).
 */
export function isEventRecord(record: StreamRecordLike): boolean {
  const image = record.dynamodb?.NewImage;
  const type = image?.event_type as { S?: unknown } | undefined;
  return (
    record.eventName === 'INSERT' && typeof type?.S === 'string' && image?.[EVENT_FROM_LINK] === undefined
  );
}

/**
 * The queue message for an event record, or `undefined` for any other record. Only the event
 * attributes are copied; the item's keys and record fields stay in the table. A malformed event
 * item is still forwarded as it is: the delivery handler dead-letters it with the reason, so a
 * writer bug is visible (DLQ alarm) instead of silently dropped here.
 */
export function messageFromStreamRecord(record: StreamRecordLike): WebhookMessage | undefined {
  if (!isEventRecord(record)) return undefined;
  const image = record.dynamodb!.NewImage as Record<string, AttributeValue>;
  let item: Record<string, unknown>;
  try {
    item = unmarshall(image, { wrapNumbers: safeNumber });
  } catch (err) {
    // Never fail the stream batch on content: a record that cannot be read is forwarded with what
    // is known, and delivery dead-letters it with the reason.
    return {
      event_id: (image.event_id as { S?: string } | undefined)?.S ?? '',
      event_type: (image.event_type as { S: string }).S,
      unreadable: (err as Error).message,
    } as unknown as WebhookMessage;
  }
  return {
    event_id: item.event_id,
    event_type: item.event_type,
    event_time: item.event_time,
    tenant: item.tenant,
    campaign_id: item.campaign_id,
    event_json: eventJsonOf(item),
    ...(typeof item.redelivery === 'string' ? { redelivery: item.redelivery } : {}),
  } as WebhookMessage;
}

/** Same predicate as `REWARD_EVENT_RECORD_FILTER`: a reward's change of state, with its event. */
export function isRewardEventRecord(record: StreamRecordLike): boolean {
  const image = record.dynamodb?.NewImage;
  const type = image?.type as { S?: unknown } | undefined;
  const event = image?.event_type as { S?: unknown } | undefined;
  return record.eventName === 'MODIFY' && type?.S === 'reward' && typeof event?.S === 'string';
}

/** Same predicate as `LINK_ACTION_RECORD_FILTER`: a MODIFY of a link that carries `last_action`. */
export function isLinkActionRecord(record: StreamRecordLike): boolean {
  const action = record.dynamodb?.NewImage?.last_action as { M?: { id?: { N?: unknown } } } | undefined;
  return record.eventName === 'MODIFY' && typeof action?.M?.id?.N === 'string';
}

/** Numbers as JS numbers, except integers beyond 2^53, kept exact as strings (never a throw). */
export function safeNumber(text: string): number | string {
  const n = Number(text);
  return Number.isInteger(n) && !Number.isSafeInteger(n) ? text : n;
}

/** SendMessageBatch takes 10 entries and 256 KiB per call. */
const MAX_BATCH_ENTRIES = 10;
const MAX_BATCH_BYTES = 250 * 1024;

/**
 * Put the event records' messages on the queue. Returns the sequence numbers of records whose
 * message could not be sent, for the caller to retry (Lambda: batch item failures; local poller:
 * re-read from the first one). Non-event records are skipped.
 */
export async function enqueueStreamRecords(
  records: readonly StreamRecordLike[],
  sqs: SQSClient,
  queueUrl: string,
): Promise<{ sent: number; failedSequenceNumbers: string[] }> {
  const entries: Array<{ sequence: string; body: string; message: WebhookMessage }> = [];
  for (const record of records) {
    const message = messageFromStreamRecord(record);
    if (message) {
      entries.push({
        sequence: record.dynamodb?.SequenceNumber ?? '',
        body: JSON.stringify(message),
        message,
      });
    }
  }
  const batches: Array<typeof entries> = [];
  let current: typeof entries = [];
  let bytes = 0;
  for (const entry of entries) {
    const size = Buffer.byteLength(entry.body);
    if (current.length === MAX_BATCH_ENTRIES || (current.length > 0 && bytes + size > MAX_BATCH_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);

  const failed: string[] = [];
  await Promise.all(
    batches.map(async (batch) => {
      try {
        const result = await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: batch.map((e, i) => ({
              Id: String(i),
              MessageBody: e.body,
              ...firstAttemptIds(e.message, e.body),
            })),
          }),
        );
        for (const f of result.Failed ?? []) {
          logger.warn('webhook enqueue failed', { error: f.Code ?? f.Message, records: 1 });
          failed.push(batch[Number(f.Id)]!.sequence);
        }
      } catch (err) {
        logger.warn('webhook enqueue failed', { error: (err as Error).message, records: batch.length });
        failed.push(...batch.map((e) => e.sequence));
      }
    }),
  );
  return { sent: entries.length - failed.length, failedSequenceNumbers: failed };
}
