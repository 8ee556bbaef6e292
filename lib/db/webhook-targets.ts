/**
 * What webhook delivery reads and keeps on the campaign item (`entities/campaign.ts`): the target
 * (URL, secrets, subscriptions, state), the slow-lane flag, and the failure clock with the
 * automatic disable (`lib/webhooks/failures.ts` decides when). Each write is one conditional
 * UpdateItem that names the URL, so a changed URL, a deleted campaign (no item is created) or
 * concurrent attempts make it a no-op: it answers whether it wrote.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import { webhookUrlNotSet } from './campaigns.ts';
import { campaignKey, WEBHOOK_TARGET_ATTRIBUTES, webhookOfItem } from './entities/campaign.ts';
import { db, tableName } from './table/client.ts';

export type StoredWebhookTarget = NonNullable<ReturnType<typeof webhookOfItem>>;

/**
 * The campaign's webhook URL and secret as they are now (strongly consistent read), so a URL
 * changed or cleared after the event, or a deleted campaign, is honoured at delivery time. The
 * same read says whether that URL is in the slow lane: the flag names the URL it was set for, so a
 * new `webhook_url` starts in the first-attempt lane.
 */
export async function loadWebhookTarget(
  tenant: string,
  campaignId: string,
): Promise<StoredWebhookTarget | undefined> {
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
 * The target of the test event (`POST /api/v1/campaign/webhook_test`), signing with the secrets of
 * `now`: a 404 when the campaign is gone, a 400 when it has no webhook URL. One GetItem.
 */
export async function webhookTargetToTest(
  tenant: string,
  campaignId: string,
  now: Date,
): Promise<StoredWebhookTarget> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConsistentRead: true,
      ProjectionExpression: ['PK', ...WEBHOOK_TARGET_ATTRIBUTES].join(', '),
    }),
  );
  if (!Item) throw campaignNotFound(campaignId);
  const target = webhookOfItem(Item, now);
  if (!target) throw webhookUrlNotSet();
  return target;
}

/** One conditional UpdateItem of the campaign; false when its condition did not hold. */
async function updateIfStill(
  tenant: string,
  campaignId: string,
  update: Omit<UpdateCommandInput, 'TableName' | 'Key'>,
): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({ TableName: tableName, Key: campaignKey(tenant, campaignId), ...update }),
    );
    return true;
  } catch (err) {
    if (
      err instanceof ConditionalCheckFailedException ||
      (err as Error).name === 'ConditionalCheckFailedException'
    )
      return false;
    throw err;
  }
}

/**
 * Put the campaign's endpoint in the slow lane, or take it out. Called only when an attempt's
 * outcome disagrees with the flag it read, so a steady endpoint costs no write.
 */
export async function setSlowLane(tenant: string, campaignId: string, url: string, slow: boolean) {
  await updateIfStill(
    tenant,
    campaignId,
    slow
      ? {
          UpdateExpression: 'SET webhook_slow_lane_url = :url, webhook_slow_lane_since = :now',
          ConditionExpression:
            'webhook_url = :url AND (attribute_not_exists(webhook_slow_lane_url) OR webhook_slow_lane_url <> :url)',
          ExpressionAttributeValues: { ':url': url, ':now': new Date().toISOString() },
        }
      : {
          UpdateExpression: 'REMOVE webhook_slow_lane_url, webhook_slow_lane_since',
          ConditionExpression: 'webhook_slow_lane_url = :url',
          ExpressionAttributeValues: { ':url': url },
        },
  );
}

/** The URL's first failed attempt since its last success: its failure clock starts at `now`. */
export function startFailureClock(tenant: string, campaignId: string, url: string, now: Date) {
  return updateIfStill(tenant, campaignId, {
    UpdateExpression: 'SET webhook_failing_url = :url, webhook_failing_since = :now',
    ConditionExpression:
      'webhook_url = :url AND (attribute_not_exists(webhook_failing_url) OR webhook_failing_url <> :url)',
    ExpressionAttributeValues: { ':url': url, ':now': now.toISOString() },
  });
}

/** The URL's first success since it started failing: its failure clock stops. */
export function clearFailureClock(tenant: string, campaignId: string, url: string) {
  return updateIfStill(tenant, campaignId, {
    UpdateExpression: 'REMOVE webhook_failing_url, webhook_failing_since',
    ConditionExpression: 'webhook_failing_url = :url',
    ExpressionAttributeValues: { ':url': url },
  });
}

/**
 * Disable the webhook, with `reason`, if the URL is still the one whose clock started at `since`
 * and nobody set `webhook_status` meanwhile.
 */
export function disableFailingWebhook(
  tenant: string,
  campaignId: string,
  url: string,
  since: string,
  reason: string,
) {
  return updateIfStill(tenant, campaignId, {
    UpdateExpression: 'SET webhook_status = :disabled, webhook_disabled_reason = :reason',
    ConditionExpression:
      'webhook_url = :url AND webhook_failing_since = :since AND attribute_not_exists(webhook_status)',
    ExpressionAttributeValues: { ':url': url, ':since': since, ':disabled': 'disabled', ':reason': reason },
  });
}
