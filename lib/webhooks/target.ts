import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { campaignKey, WEBHOOK_TARGET_ATTRIBUTES, webhookOfItem } from '../db/entities/campaign.ts';
import { db, tableName } from '../db/table/client.ts';
import type { WebhookTarget } from './deliver.ts';

/**
 * The campaign's webhook URL and secret as they are now (strongly consistent read), so a URL
 * changed or cleared after the event, or a deleted campaign, is honoured at delivery time. The
 * same read says whether that URL is in the slow lane: the flag names the URL it was set for, so a
 * new `webhook_url` starts in the first-attempt lane.
 */
export async function loadWebhookTarget(
  tenant: string,
  campaignId: string,
): Promise<WebhookTarget | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ProjectionExpression: WEBHOOK_TARGET_ATTRIBUTES.join(', '),
      ConsistentRead: true,
    }),
  );
  return webhookOfItem(Item);
}

/**
 * Put the campaign's endpoint in the slow lane, or take it out: one conditional UpdateItem, only
 * when an attempt's outcome disagrees with the flag it read, so a steady endpoint costs no write.
 * The conditions make it a no-op on a deleted campaign (no item is created) or once the URL has
 * changed, and let concurrent attempts race harmlessly.
 */
export async function setSlowLane(tenant: string, campaignId: string, url: string, slow: boolean) {
  try {
    await db.send(
      new UpdateCommand(
        slow
          ? {
              TableName: tableName,
              Key: campaignKey(tenant, campaignId),
              UpdateExpression: 'SET webhook_slow_lane_url = :url, webhook_slow_lane_since = :now',
              ConditionExpression:
                'webhook_url = :url AND (attribute_not_exists(webhook_slow_lane_url) OR webhook_slow_lane_url <> :url)',
              ExpressionAttributeValues: { ':url': url, ':now': new Date().toISOString() },
            }
          : {
              TableName: tableName,
              Key: campaignKey(tenant, campaignId),
              UpdateExpression: 'REMOVE webhook_slow_lane_url, webhook_slow_lane_since',
              ConditionExpression: 'webhook_slow_lane_url = :url',
              ExpressionAttributeValues: { ':url': url },
            },
      ),
    );
  } catch (err) {
    if (
      !(
        err instanceof ConditionalCheckFailedException ||
        (err as Error).name === 'ConditionalCheckFailedException'
      )
    ) {
      throw err;
    }
  }
}
