/**
 * Table stream consumer that makes rewards happen (docs/rewards.md): a signup's and a conversion's
 * rewards by the campaign's rules in force at their commit, and a refund's voids, adjustments and
 * clawbacks (`lib/db/reward-sources.ts`). Its mapping's filters (`REWARD_SOURCE_FILTERS`) pass
 * only INSERTs of referred users and conversions and MODIFYs of refunded conversions.
 *
 * Records are handled in stream order within each campaign (a conversion after its signup, a
 * refund after its conversion), campaigns side by side. A record that fails stops its campaign's
 * later records and is reported (`ReportBatchItemFailures`): Lambda hands the batch over again
 * from the lowest one reported, so nothing is skipped, and what a retry repeats creates nothing
 * twice (reward ids derive from rule and source; each put is conditioned on its absence).
 */
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import {
  CampaignReads,
  campaignOfSource,
  processRewardSource,
  type RewardSource,
  rewardSourceOf,
} from '../../lib/db/reward-sources.ts';
import { logger } from '../../lib/observability/logger.ts';
import { batchResponse, sequenceNumberOf } from '../../lib/queues/batch.ts';
import { inTurns } from '../../lib/stream/settled.ts';

/** Campaigns handled at once: each is one chain of DynamoDB calls. */
const CAMPAIGNS_AT_ONCE = 10;

export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
  const byCampaign = new Map<string, Array<{ record: DynamoDBRecord; source: RewardSource }>>();
  const failed: string[] = [];
  for (const record of event.Records ?? []) {
    let source: RewardSource | undefined;
    try {
      source = rewardSourceOf(record);
    } catch (err) {
      // An image that cannot be read is a writer's bug: hold it (and its shard) and say so, loudly;
      // the mapping gives up on it after its retries and records it in its failure queue (alarm).
      logger.error('reward source record unreadable', { error: (err as Error).message });
      failed.push(sequenceNumberOf(record));
      continue;
    }
    if (!source) continue;
    const key = campaignOfSource(source);
    const list = byCampaign.get(key);
    if (list) list.push({ record, source });
    else byCampaign.set(key, [{ record, source }]);
  }
  const campaigns = new CampaignReads();
  await inTurns([...byCampaign.values()], CAMPAIGNS_AT_ONCE, async (entries) => {
    for (const { record, source } of entries) {
      try {
        await processRewardSource(source, campaigns);
      } catch (err) {
        logger.warn('reward source failed; it comes again', {
          error: (err as Error).message,
          kind: source.kind,
        });
        // Its campaign's later records wait for it: they come again with it.
        failed.push(sequenceNumberOf(record));
        return;
      }
    }
  });
  return batchResponse(failed);
};
