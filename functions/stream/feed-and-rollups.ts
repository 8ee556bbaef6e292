/**
 * The table stream's second reader, the counting consumer (the webhook consumer,
 * `enqueue-webhook-events.ts`, is the first; DynamoDB serves two readers per shard without
 * throttling them). Its event source mapping gathers up to 1,000 records for up to 1 s, in a
 * tumbling window of 45 s whose state carries the window's sums (`infra/rollups.ts`,
 * `ROLLUP_STREAM_BATCHING`); its filters (`FEED_AND_ROLLUP_FILTERS`) pass the INSERTs of
 * interactions (event items, bot visits), the link records of actions committed on their link,
 * and the REMOVEs of campaign items. Four jobs, each counting every record once on its own terms,
 * so none waits for another's progress and a batch handed over again redoes nothing:
 *
 * - fast rollups (`lib/analytics/fast.ts`): `total_clicks` of visited links and the campaign's own
 *   series, within 2 s, exactly once by the items' high-water marks;
 * - the window (`lib/analytics/window.ts`): series by link and by referrer, the referrers'
 *   totals and the rankings, summed in the window's state and written within a minute;
 * - the events feed (`lib/webhooks/feed.ts`), exactly once by each shard's position on the
 *   campaign's feed counter;
 * - purges: a campaign's REMOVE becomes a purge job (a duplicate job is harmless).
 *
 * What DynamoDB refuses as it is (one item, one event) is isolated and parked with an alarm
 * (`lib/stream/parked.ts`), and everything else goes on: no input can stop the counting. A passing
 * failure of any job (DynamoDB or SQS throttling, down) fails the batch: Lambda hands it over
 * again from its first record with the window's state as it was, and every job skips what it did.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type Contribution, contributionOf } from '../../lib/analytics/contributions.ts';
import { ofLiveCampaigns, runFast, withTypeNames } from '../../lib/analytics/fast.ts';
import { runWindow, type WindowSettings } from '../../lib/analytics/window.ts';
import { createSqsClient } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { parseCampaignPartition } from '../../lib/db/purge.ts';
import { logger } from '../../lib/observability/logger.ts';
import { publishMetrics } from '../../lib/observability/metrics.ts';
import { sequenceNumberOf } from '../../lib/queues/batch.ts';
import { allSettledOrThrow } from '../../lib/stream/settled.ts';
import { recordFeedRecords } from '../../lib/webhooks/feed.ts';
import { eventRecordsOf } from '../../lib/webhooks/link-action-events.ts';

const sqs = createSqsClient();
const purgeQueueUrl = config.purgeQueueUrl;
const windowSettings: WindowSettings = {
  flushAgeMs: config.analyticsFlushAgeMs,
  boardAgeMs: config.analyticsBoardAgeMs,
  flushesPerInvocation: 400,
};

/**
 * The purge trigger's stream filter. It lives in a module without side effects
 * (`lib/db/purge-filter.ts`) so that the CDK code can import it without running this module's
 * top level, which needs PURGE_QUEUE_URL.
 */
export { PURGE_RECORD_FILTER } from '../../lib/db/purge-filter.ts';

/** What Lambda hands a stream consumer whose mapping has a tumbling window. */
export type CountingEvent = DynamoDBStreamEvent & {
  shardId?: string;
  state?: Record<string, unknown>;
  window?: { start: string; end: string };
  isFinalInvokeForWindow?: boolean;
  isWindowTerminatedEarly?: boolean;
};

export interface CountingResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
  state: Record<string, unknown>;
}

export const handler = async (event: CountingEvent): Promise<CountingResponse> => {
  const records = event.Records ?? [];
  const contributions = records.map(contributionOf).filter((c): c is Contribution => c !== undefined);
  // Without the shard there is no lane to count exactly once under: hold the batch, loudly.
  if (!event.shardId) {
    logger.error('stream batch without shardId: the mapping needs its tumbling window');
    return failed(records, event.state);
  }
  const lane = event.shardId;
  const jobs = await Promise.allSettled([
    rollUp(event, contributions, lane),
    recordFeedRecords(eventRecordsOf(records), lane).then((feed) => {
      if (feed.failedSequenceNumbers.length > 0) throw new Error('the feed could not be written');
    }),
    enqueuePurges(records),
  ]);
  publishMetrics();
  const errors = jobs.flatMap((j) => (j.status === 'rejected' ? [j.reason as unknown] : []));
  if (errors.length > 0) {
    for (const error of errors)
      logger.warn('a counting job failed; the batch comes again', {
        error: error instanceof Error ? error.message : String(error),
        shard: lane,
      });
    return failed(records, event.state);
  }
  const state = (jobs[0] as PromiseFulfilledResult<Record<string, unknown>>).value;
  return { batchItemFailures: [], state };
};

/**
 * The whole batch again, with the window's state as it was handed over. An invocation with no
 * record to name (the window's final one often has none) fails by throwing, which Lambda retries
 * the same way.
 */
function failed(
  records: readonly DynamoDBRecord[],
  state: Record<string, unknown> | undefined,
): CountingResponse {
  const first = records[0];
  if (!first) throw new Error('the counting consumer failed; the invocation comes again');
  return { batchItemFailures: [{ itemIdentifier: sequenceNumberOf(first) }], state: state ?? {} };
}

/** The rollups: the fast counts and the window's, of live campaigns only. Returns the window's new state. */
async function rollUp(
  event: CountingEvent,
  contributions: readonly Contribution[],
  lane: string,
): Promise<Record<string, unknown>> {
  const counted = await withTypeNames(await ofLiveCampaigns(contributions));
  const [, state] = await allSettledOrThrow([
    runFast(counted, lane),
    runWindow(event.state, counted, {
      lane,
      final: event.isFinalInvokeForWindow === true,
      settings: windowSettings,
    }),
  ]);
  return state as unknown as Record<string, unknown>;
}

/** A purge job for each campaign item's REMOVE (other records of the batch are other jobs'). */
async function enqueuePurges(records: readonly DynamoDBRecord[]): Promise<void> {
  for (const record of records) {
    const pk = record.dynamodb?.Keys?.PK?.S;
    if (record.eventName !== 'REMOVE' || record.dynamodb?.Keys?.SK?.S !== 'CAMPAIGN' || !pk) continue;
    if (!parseCampaignPartition(pk)) continue;
    await sqs.send(new SendMessageCommand({ QueueUrl: purgeQueueUrl, MessageBody: JSON.stringify({ pk }) }));
  }
}
