/**
 * Table stream -> the events feed (`lib/db/webhook-events.ts`). Apart from `stream.ts` because it
 * needs the table, like `link-actions.ts`.
 *
 * A campaign's events of one shard are written one chunk after the other, in the stream's order;
 * campaigns are written in parallel. Consumers of other shards may write the same campaign's feed
 * at the same time (its visits are spread over 16 partitions): the campaign's feed counter, moved
 * in each feed transaction (`recordFeedEvents`), numbers the events in the order their feed items
 * commit, so a reader that sees an event sees every earlier one and a poll cursor never skips.
 */
import { FEED_EVENTS_PER_TRANSACTION, recordFeedEvents } from '../db/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { parseWebhookMessage } from './message.ts';
import { messageFromStreamRecord, type StreamRecordLike } from './stream.ts';

const logger = rootLogger.createChild();

/**
 * Write every event record's event into its campaign's feed. Returns the sequence numbers of
 * records that could not be written, for the caller to retry (a replayed record is a no-op); a
 * record that is no event, is a redelivery request or cannot be read is skipped.
 */
export async function recordFeedRecords(
  records: readonly StreamRecordLike[],
): Promise<{ written: number; failedSequenceNumbers: string[] }> {
  const byCampaign = new Map<string, Array<{ sequence: string; message: ReturnType<typeof parsed> }>>();
  for (const record of records) {
    const message = parsed(record);
    if (!message) continue;
    const key = `${message.tenant}#${message.campaign_id}`;
    const list = byCampaign.get(key) ?? [];
    // One transaction cannot hold one item twice: an event seen twice in a batch is written once.
    if (list.some((e) => e.message!.event_id === message.event_id)) continue;
    list.push({ sequence: record.dynamodb?.SequenceNumber ?? '', message });
    byCampaign.set(key, list);
  }
  let written = 0;
  const failed: string[] = [];
  await Promise.all(
    [...byCampaign.values()].map(async (events) => {
      for (let i = 0; i < events.length; i += FEED_EVENTS_PER_TRANSACTION) {
        const chunk = events.slice(i, i + FEED_EVENTS_PER_TRANSACTION);
        try {
          written += await recordFeedEvents(chunk.map((e) => e.message!));
        } catch (err) {
          logger.warn('feed write failed', {
            error: (err as Error).message,
            event_id: chunk[0]!.message!.event_id,
          });
          // These and every later event of the campaign are retried, so none overtakes them.
          failed.push(...events.slice(i).map((e) => e.sequence));
          return;
        }
      }
    }),
  );
  return { written, failedSequenceNumbers: failed };
}

function parsed(record: StreamRecordLike) {
  const message = messageFromStreamRecord(record);
  if (!message || message.redelivery !== undefined) return undefined;
  const checked = parseWebhookMessage(JSON.stringify(message));
  return checked.ok ? checked.message : undefined;
}
