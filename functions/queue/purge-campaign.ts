import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { parseCampaignPartition, purgeCampaign } from '../../lib/db/purge.ts';
import { logger } from '../../lib/observability/logger.ts';
import { createSqsClient, requiredEnv } from '../../lib/webhooks/sqs.ts';

const sqs = createSqsClient();
const queueUrl = requiredEnv('PURGE_QUEUE_URL');
/**
 * A pass that deleted something is followed by one more pass after this delay, which catches a
 * link whose index entry arrived late (GSI replication lag); a pass that finds nothing ends it.
 */
const sweepDelaySeconds = Number(process.env.PURGE_SWEEP_DELAY_SECONDS ?? 60);
/** Leave this much of the invocation for sending the follow-up message. */
const SAFETY_MS = 5_000;

/**
 * Purges deleted campaigns in the background. A message is `{"pk": "T#<tenant>#C#<campaign>"}`,
 * put on the queue by the table stream when a campaign item is removed. Large campaigns are
 * purged in several invocations, each continuing where the last stopped.
 */
export async function handler(event: SQSEvent, context: Context): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const target = parseMessage(record.body);
      if (!target) {
        logger.warn('purge message ignored', { body: record.body.slice(0, 200) });
        continue;
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
    } catch (err) {
      logger.error('purge failed', err as Error);
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}

function parseMessage(body: string) {
  try {
    const parsed = JSON.parse(body) as { pk?: unknown };
    return typeof parsed.pk === 'string' ? parseCampaignPartition(parsed.pk) : undefined;
  } catch {
    return undefined;
  }
}
