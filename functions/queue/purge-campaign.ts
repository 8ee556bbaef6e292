import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createSqsClient } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { parseCampaignPartition, purgeCampaign } from '../../lib/db/purge.ts';
import { logger } from '../../lib/observability/logger.ts';
import { messageIdOf, processRecords } from '../../lib/queues/batch.ts';

const sqs = createSqsClient();
const queueUrl = config.purgeQueueUrl;
/**
 * A pass that deleted something is followed by one more pass after this delay, which catches a
 * link whose index entry arrived late (GSI replication lag); a pass that finds nothing ends it.
 */
const sweepDelaySeconds = config.purgeSweepDelaySeconds;
/** Leave this much of the invocation for sending the follow-up message. */
const SAFETY_MS = 5_000;

/**
 * Purges deleted campaigns in the background. A message is `{"pk": "T#<tenant>#C#<campaign>"}`,
 * put on the queue by the table stream when a campaign item is removed. Large campaigns are
 * purged in several invocations, each continuing where the last stopped.
 */
export function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  // One message per invocation (the mapping's batch size): a pass has the whole timeout to itself.
  return processRecords(
    event.Records,
    async (record) => {
      const target = parseMessage(record.body);
      if (!target) {
        logger.warn('purge message ignored', { body: record.body.slice(0, 200) });
        return;
      }
      const deadline = Date.now() + Math.max(1_000, context.getRemainingTimeInMillis() - SAFETY_MS);
      const result = await purgeCampaign(target.tenant, target.campaignId, deadline);
      logger.info('purge pass', { campaign_id: target.campaignId, ...result });
      if (!result.done || result.deleted > 0) {
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: queueUrl,
            MessageBody: record.body,
            DelaySeconds: result.done ? Math.min(900, sweepDelaySeconds) : 0,
          }),
        );
      }
    },
    { itemIdOf: messageIdOf, onError: (err) => logger.error('purge failed', err as Error) },
  );
}

function parseMessage(body: string) {
  try {
    const parsed = JSON.parse(body) as { pk?: unknown };
    return typeof parsed.pk === 'string' ? parseCampaignPartition(parsed.pk) : undefined;
  } catch {
    return undefined;
  }
}
