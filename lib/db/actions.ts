import { campaignNotFound } from '../domain/errors.ts';
import type { Action } from '../domain/link-schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { eventAttributes } from '../webhooks/events.ts';
import { getItems } from './batch.ts';
import { tableName } from './client.ts';
import { nextId } from './ids.ts';
import { keys } from './keys.ts';
import { findLink, findLinkByCode, type LinkItem, linkNotFound, toLink } from './links.ts';
import { type ReferredUserItem, referredUserNotFound, toReferredUser } from './referred-users.ts';
import { transactWrite } from './transactions.ts';

/**
 * Record an action: one transaction writes the action (with its `action.created` event), raises
 * the link's `total_clicks`, and checks that the campaign (and the referred user, when there is
 * one) still exist. The link object in the result includes this action's increment.
 */
async function recordAction(
  tenant: string,
  link: LinkItem,
  input: { actionType: string; metadata: Record<string, unknown>; referredUser?: ReferredUserItem },
): Promise<Action | 'campaign_gone' | 'referred_user_gone'> {
  const id = await nextId('action');
  const now = new Date();
  const increments = { clicks: 1 };
  const action: Action = {
    id,
    created_at: formatTimestamp(now),
    action_type: input.actionType,
    metadata: input.metadata,
    referral_link: toLink(link, increments),
    referred_user: input.referredUser ? toReferredUser(input.referredUser, link, increments) : null,
  };
  const checks = [
    {
      ConditionCheck: {
        TableName: tableName,
        Key: keys.campaign(tenant, link.campaign_id),
        ConditionExpression: 'attribute_exists(PK)',
      },
    },
    ...(input.referredUser
      ? [
          {
            ConditionCheck: {
              TableName: tableName,
              Key: { PK: input.referredUser.PK, SK: input.referredUser.SK },
              ConditionExpression: 'attribute_exists(PK)',
            },
          },
        ]
      : []),
  ];
  const result = await transactWrite([
    {
      Put: {
        TableName: tableName,
        Item: {
          ...keys.action(tenant, link.campaign_id, id),
          type: 'action',
          link_code: link.referral_code,
          ...eventAttributes('action.created', id, tenant, link.campaign_id, action, now),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    {
      Update: {
        TableName: tableName,
        Key: keys.link(link.referral_code),
        UpdateExpression: 'ADD total_clicks :one',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
    ...checks,
  ]);
  if (result.ok) return action;
  // The campaign (or its link) being gone wins over the referred user being gone.
  return result.failed.has(3) && !result.failed.has(1) && !result.failed.has(2)
    ? 'referred_user_gone'
    : 'campaign_gone';
}

/** Endpoints 12 and 13: an action on a link alone (13 passes the tenant found on the link). */
export async function createLinkAction(
  tenant: string | undefined,
  target: { code: string } | { id: number },
  input: { actionType: string; metadata: Record<string, unknown> },
): Promise<Action> {
  const link = await findLink(target, tenant);
  if (!link) throw linkNotFound();
  const result = await recordAction(link.tenant, link, input);
  if (typeof result === 'string') throw linkNotFound();
  return result;
}

/**
 * The link of a referred user never changes (a referred user is never moved or deleted on its
 * own), so a warm function remembers it and saves a read on later actions of the same user.
 * Correctness does not depend on it: the transaction re-checks that the record still exists.
 */
const referredUserCache = new Map<string, ReferredUserItem>();
const REFERRED_USER_CACHE_SIZE = 10_000;

/** Endpoint 5: an action tied to a referred user of a campaign. */
export async function createReferredUserAction(
  tenant: string,
  input: {
    campaignId: string;
    referredUserId: string;
    actionType: string;
    metadata: Record<string, unknown>;
  },
): Promise<Action> {
  const key = keys.referredUser(tenant, input.campaignId, input.referredUserId);
  const cacheKey = `${key.PK}|${key.SK}`;
  let record = referredUserCache.get(cacheKey);
  if (!record) {
    // One batch read tells apart an unknown campaign and an unknown referred user.
    const [item, campaign] = await getItems([key, keys.campaign(tenant, input.campaignId)]);
    if (!campaign) throw campaignNotFound(input.campaignId);
    if (!item) throw referredUserNotFound();
    record = item as unknown as ReferredUserItem;
  }
  const link = await findLinkByCode(record.link_code, tenant);
  if (!link) throw campaignNotFound(input.campaignId);
  const result = await recordAction(tenant, link, { ...input, referredUser: record });
  if (result === 'campaign_gone') {
    referredUserCache.delete(cacheKey);
    throw campaignNotFound(input.campaignId);
  }
  if (result === 'referred_user_gone') {
    referredUserCache.delete(cacheKey);
    throw referredUserNotFound();
  }
  if (referredUserCache.size >= REFERRED_USER_CACHE_SIZE) referredUserCache.clear();
  referredUserCache.set(cacheKey, record);
  return result;
}
