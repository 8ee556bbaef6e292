import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import type { WebhookTarget } from './deliver.ts';

/**
 * The campaign's webhook URL and secret as they are now (strongly consistent read), so a URL
 * changed or cleared after the event, or a deleted campaign, is honoured at delivery time.
 */
export async function loadWebhookTarget(
  tenant: string,
  campaignId: string,
): Promise<WebhookTarget | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: keys.campaign(tenant, campaignId),
      ProjectionExpression: 'webhook_url, webhook_secret',
      ConsistentRead: true,
    }),
  );
  const url = Item?.webhook_url;
  const secret = Item?.webhook_secret;
  if (typeof url !== 'string' || url === '' || typeof secret !== 'string' || secret === '') return undefined;
  return { url, secret };
}
