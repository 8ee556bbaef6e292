/**
 * Table stream -> the events feed (`lib/db/webhook-events.ts`). Apart from `stream.ts` because it
 * needs the table, like `link-actions.ts`.
 *
 * A campaign's events of one shard are written one chunk after the other, in the stream's order;
 * campaigns are written in parallel. Consumers of other shards may write the same campaign's feed
 * at the same time (its visits are spread over 16 partitions): the campaign's feed counter, moved
 * in each feed transaction (`recordFeedEvents`), numbers the events in the order their feed items
 * commit, so a reader that sees an event sees every earlier one and a poll cursor never skips, and
 * holds each shard's position, so a replayed record is not written again.
 */

import { isPoison } from '../db/table/poison.ts';
import { FEED_EVENTS_PER_TRANSACTION, type FeedRecord, recordFeedEvents } from '../db/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { park } from '../stream/parked.ts';
import { parseWebhookMessage } from './message.ts';
import { messageFromStreamRecord, type StreamRecordLike } from './stream.ts';

const logger = rootLogger.createChild();

/**
 * Write every event record's event into its campaign's feed, once (the shard's position on the
 * campaign's feed counter skips what a replayed batch held). Returns the sequence numbers of
 * records that could not be written, for the caller to retry; a record that is no event, is a
 * redelivery request or cannot be read is skipped. Without a shard id (a mapping without its
 * tumbling window) nothing can be written exactly once: every event record is reported failed,
 * and logged, so the batch is held rather than written twice.
 */
export async function recordFeedRecords(
  records: readonly StreamRecordLike[],
  shardId: string | undefined,
): Promise<{ written: number; failedSequenceNumbers: string[] }> {
  const byCampaign = new Map<string, FeedRecord[]>();
  for (const record of records) {
    const event = parsed(record);
    const streamSequence = record.dynamodb?.SequenceNumber;
    if (!event || !streamSequence) continue;
    const key = `${event.tenant}#${event.campaign_id}`;
    const list = byCampaign.get(key);
    if (list) list.push({ streamSequence, event });
    else byCampaign.set(key, [{ streamSequence, event }]);
  }
  if (byCampaign.size === 0) return { written: 0, failedSequenceNumbers: [] };
  if (!shardId) {
    logger.error('stream batch without shardId: the feed cannot be written exactly once');
    return {
      written: 0,
      failedSequenceNumbers: [...byCampaign.values()].flat().map((r) => r.streamSequence),
    };
  }
  let written = 0;
  const failed: string[] = [];
  await Promise.all(
    [...byCampaign.values()].map(async (events) => {
      for (let i = 0; i < events.length; i += FEED_EVENTS_PER_TRANSACTION) {
        const chunk = events.slice(i, i + FEED_EVENTS_PER_TRANSACTION);
        try {
          written += await writeIsolating(shardId, chunk);
        } catch (err) {
          logger.warn('feed write failed', {
            error: (err as Error).message,
            event_id: chunk[0]!.event.event_id,
          });
          // These and every later event of the campaign are retried, so none overtakes them.
          failed.push(...events.slice(i).map((e) => e.streamSequence));
          return;
        }
      }
    }),
  );
  return { written, failedSequenceNumbers: failed };
}

/**
 * Write a chunk of one campaign's events; when DynamoDB refuses it as it is (one event past a
 * limit), find the events it refuses by halving the chunk, park each of them
 * (`lib/stream/parked.ts`, with an alarm) and write the rest, so that one event cannot hold back
 * its campaign's feed.
 */
async function writeIsolating(lane: string, chunk: readonly FeedRecord[]): Promise<number> {
  try {
    return await recordFeedEvents(lane, chunk);
  } catch (err) {
    if (!isPoison(err)) throw err;
    if (chunk.length === 1) {
      await park('feed', `${lane}\u0000${chunk[0]!.streamSequence}`, { records: chunk }, err);
      return 0;
    }
    const half = Math.ceil(chunk.length / 2);
    return (
      (await writeIsolating(lane, chunk.slice(0, half))) + (await writeIsolating(lane, chunk.slice(half)))
    );
  }
}

/** Runs parked feed work again, as a lane of its own (`npm run parked -- retry`). */
export async function runParkedFeed(work: unknown, lane: string): Promise<void> {
  await recordFeedEvents(lane, (work as { records: FeedRecord[] }).records);
}

function parsed(record: StreamRecordLike) {
  const message = messageFromStreamRecord(record);
  if (!message || message.redelivery !== undefined) return undefined;
  const checked = parseWebhookMessage(JSON.stringify(message));
  return checked.ok ? checked.message : undefined;
}
