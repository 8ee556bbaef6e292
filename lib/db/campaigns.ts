/** Campaign reads and writes; the item, its keys and its decoding are `entities/campaign.ts`. */
import { randomBytes, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import type { Campaign } from '../domain/schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { db, tableName } from './client.ts';
import { campaignFromItem, campaignKey, newCampaignItem } from './entities/campaign.ts';
import { rememberAnswer } from './idempotency.ts';
import { transactWrite } from './transactions.ts';

export type { CampaignItem } from './entities/campaign.ts';

/** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * One PutItem; the condition only guards against a (practically impossible) UUID collision. With
 * an `Idempotency-Key`, one transaction of the same Put and the stored answer: still one call.
 */
export async function createCampaign(
  tenant: string,
  input: { url: string; name: string },
  idempotency?: IdempotentRequest,
): Promise<Campaign> {
  const campaign: Campaign = {
    id: randomUUID(),
    created_at: formatTimestamp(new Date()),
    url: input.url,
    name: input.name,
    webhook_url: null,
    webhook_secret: null,
  };
  const item = newCampaignItem(tenant, campaign);
  const put = { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' };
  if (idempotency) await transactWrite([{ Put: put }], rememberAnswer(idempotency, 201, campaign));
  else await db.send(new PutCommand(put));
  return campaign;
}

/** One GetItem, strongly consistent so a write is visible to the next read. */
export async function getCampaign(tenant: string, id: string): Promise<Campaign> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: campaignKey(tenant, id), ConsistentRead: true }),
  );
  if (!Item) throw campaignNotFound(id);
  return campaignFromItem(Item);
}

/**
 * One UpdateItem with ALL_NEW. The secret is generated here but written only if the item has
 * none (`if_not_exists`), so it is created when a webhook URL is first set and stable afterwards.
 */
export async function updateCampaign(
  tenant: string,
  id: string,
  changes: { name?: string; webhook_url?: string | null },
): Promise<Campaign> {
  if (changes.name === undefined && changes.webhook_url === undefined) return getCampaign(tenant, id);
  const sets: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (changes.name !== undefined) {
    sets.push('#name = :name');
    names['#name'] = 'name';
    values[':name'] = changes.name;
  }
  if (changes.webhook_url !== undefined) {
    sets.push('webhook_url = :webhook_url');
    values[':webhook_url'] = changes.webhook_url;
    if (changes.webhook_url !== null) {
      sets.push('webhook_secret = if_not_exists(webhook_secret, :secret)');
      values[':secret'] = newWebhookSecret();
    }
  }
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return campaignFromItem(Attributes ?? {});
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw campaignNotFound(id);
    throw err;
  }
}

/** One strongly consistent key-only read: a deleted campaign hides its links at once. */
export async function campaignExists(tenant: string, campaignId: string): Promise<boolean> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConsistentRead: true,
      ProjectionExpression: 'PK',
    }),
  );
  return Item !== undefined;
}

/**
 * A transaction item that cancels the transaction unless the campaign still exists: every write
 * of a campaign's records carries it, so nothing is written for a deleted campaign.
 */
export function campaignStillExists(tenant: string, campaignId: string) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConditionExpression: 'attribute_exists(PK)',
    },
  };
}

/** One DeleteItem; the campaign's links and records are purged in the background. */
export async function deleteCampaign(tenant: string, id: string): Promise<void> {
  try {
    await db.send(
      new DeleteCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        ConditionExpression: 'attribute_exists(PK)',
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw campaignNotFound(id);
    throw err;
  }
}
