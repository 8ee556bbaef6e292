/**
 * The table stream's second reader (the webhook consumer, `enqueue-webhook-events.ts`, is the
 * first; DynamoDB serves two readers per shard without throttling them), for what may wait a
 * second, so that it is done in bigger batches. Its event source mapping gathers up to 1,000
 * records for up to 1 s (`infra/rollups.ts`, `ROLLUP_STREAM_BATCHING`), and its filters
 * (`FEED_AND_ROLLUP_FILTERS`) pass:
 *
 * - the INSERTs of interactions (event items, bot visits), which the analytics rollups and the
 *   links' `total_clicks` add up exactly once (`lib/analytics/rollups.ts`), and whose events go
 *   into their campaign's events feed exactly once (`lib/webhooks/feed.ts`; an action committed on
 *   its link is fed from the link's record, `eventRecordsOf`). Both are checkpointed per shard:
 *   hence the mapping's tumbling window, the one way Lambda tells a stream consumer which shard a
 *   batch comes from, and the `state` in the response that a tumbling window requires. A rollup
 *   write sums every visit of its batch per item, and a feed transaction packs up to 98 events,
 *   so the bigger the batch, the fewer the writes: at ~100 visits a second on one link, a
 *   second's visits in one batch instead of the few a poll without a window gathers. A visit
 *   shows in `total_clicks`, the analytics and the feed about 1 s after it.
 * - the REMOVEs of campaign items (DELETE /campaign), each put on the purge queue as a job for the
 *   campaign's partition. A duplicate job is harmless: purging is idempotent.
 *
 * Failures are reported per record (`ReportBatchItemFailures`), so Lambda retries from the first
 * of them and nothing is skipped; what a retry repeats is harmless (the rollups' and the feed's
 * checkpoints skip what was applied, a purge job may be sent twice).
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { applyRollups, MissingShardError } from '../../lib/analytics/rollups.ts';
import { createSqsClient } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { parseCampaignPartition } from '../../lib/db/purge.ts';
import { logger } from '../../lib/observability/logger.ts';
import { batchResponse, processRecords, sequenceNumberOf } from '../../lib/queues/batch.ts';
import { recordFeedRecords } from '../../lib/webhooks/feed.ts';
import { eventRecordsOf } from '../../lib/webhooks/link-action-events.ts';

const sqs = createSqsClient();
const purgeQueueUrl = config.purgeQueueUrl;

/**
 * The purge trigger's stream filter. It lives in a module without side effects
 * (`lib/db/purge-filter.ts`) so that the CDK code can import it without running this module's
 * top level, which needs PURGE_QUEUE_URL.
 */
export { PURGE_RECORD_FILTER } from '../../lib/db/purge-filter.ts';

/** What Lambda hands a consumer whose mapping has a tumbling window: the shard, and a state. */
export type StreamConsumerEvent = DynamoDBStreamEvent & { shardId?: string; state?: Record<string, string> };

export const handler = async (
  event: StreamConsumerEvent,
): Promise<DynamoDBBatchResponse & { state: Record<string, string> }> => {
  const [feed, rollups, purges] = await Promise.all([
    recordFeedRecords(eventRecordsOf(event.Records), event.shardId),
    rollUp(event),
    enqueuePurges(event.Records),
  ]);
  return {
    ...batchResponse([
      ...feed.failedSequenceNumbers,
      ...rollups,
      ...purges.batchItemFailures.map((f) => f.itemIdentifier),
    ]),
    state: {},
  };
};

/** The rollups of this batch; on failure the whole batch comes again (the checkpoint skips what was applied). */
async function rollUp(event: StreamConsumerEvent): Promise<string[]> {
  try {
    await applyRollups(event.Records, event.shardId);
    return [];
  } catch (err) {
    if (err instanceof MissingShardError) logger.error(err.message);
    else
      logger.warn('rollups failed; the batch comes again', {
        error: (err as Error).message,
        shard: event.shardId,
      });
    return [sequenceNumberOf(event.Records[0]!)];
  }
}

/** A purge job for each campaign item's REMOVE, in order; Lambda retries from the first failure. */
function enqueuePurges(records: readonly DynamoDBRecord[]): Promise<DynamoDBBatchResponse> {
  return processRecords(
    records,
    async (record) => {
      const pk = record.dynamodb?.Keys?.PK?.S;
      // The local poller has no filter: skip what the mapping's filter would have dropped.
      if (record.eventName !== 'REMOVE' || record.dynamodb?.Keys?.SK?.S !== 'CAMPAIGN' || !pk) return;
      if (!parseCampaignPartition(pk)) return;
      await sqs.send(
        new SendMessageCommand({ QueueUrl: purgeQueueUrl, MessageBody: JSON.stringify({ pk }) }),
      );
    },
    // Lambda retries from the first failure; later records come again with it.
    { itemIdOf: sequenceNumberOf, order: 'in-order' },
  );
}
