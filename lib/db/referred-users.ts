import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { selfReferral } from '../domain/link-rules.ts';
import type { ReferredUser } from '../domain/link-schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { eventAttributes } from '../domain/webhook-events.ts';
import { getItems } from './batch.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { tableName } from './client.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { keys } from './keys.ts';
import { countOn, findLink, findLinkByCode, type LinkItem, linkNotFound, toLink } from './links.ts';
import { transactWrite } from './transactions.ts';

/** The stored referred user: its own fields and its link's code; the link object is read live. */
export interface ReferredUserItem {
  PK: string;
  SK: string;
  type: 'referred_user';
  tenant: string;
  campaign_id: string;
  id: number;
  created_at: string;
  referred_user_id: string;
  link_code: string;
  link_id: number;
}

export const referredUserNotFound = () =>
  new ApiError('referred_user_not_found', 'No such referred user in this campaign.');

export function toReferredUser(
  item: Pick<ReferredUserItem, 'id' | 'created_at' | 'referred_user_id'>,
  link: LinkItem,
  increments = {},
): ReferredUser {
  return {
    id: item.id,
    created_at: item.created_at,
    referral_link: toLink(link, increments),
    referred_user_id: item.referred_user_id,
  };
}

/**
 * Endpoint 10. Two round trips: the link read, then one transaction that writes the referred
 * user only if the id is new in the campaign, raises the link's `total_referrals`, checks the
 * campaign still exists, and carries the `referred_user.created` event for the webhook stream.
 */
export async function createReferredUser(
  tenant: string,
  target: { code: string } | { id: number },
  referredUserId: string,
  idempotency?: IdempotentRequest,
): Promise<ReferredUser> {
  const link = await findLink(target, tenant);
  if (!link) throw linkNotFound();
  if (link.referrer_id !== null && link.referrer_id === referredUserId) {
    // Only on this error path: a link of a deleted campaign is 404, not 422.
    if (!(await campaignExists(tenant, link.campaign_id))) throw linkNotFound();
    throw selfReferral();
  }
  const id = await nextId('referred_user');
  const now = new Date();
  const record: ReferredUserItem = {
    ...keys.referredUser(tenant, link.campaign_id, referredUserId),
    type: 'referred_user',
    tenant,
    campaign_id: link.campaign_id,
    id,
    created_at: formatTimestamp(now),
    referred_user_id: referredUserId,
    link_code: link.referral_code,
    link_id: link.id,
  };
  const referredUser = toReferredUser(record, link, { referrals: 1 });
  const result = await transactWrite(
    [
      {
        Put: {
          TableName: tableName,
          Item: {
            ...record,
            ...eventAttributes('referred_user.created', id, tenant, link.campaign_id, referredUser, now),
          },
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
      countOn(link, 'total_referrals'),
      campaignStillExists(tenant, link.campaign_id),
    ],
    idempotency && rememberAnswer(idempotency, 201, referredUser),
  );
  if (!result.ok) {
    // A link or campaign that is gone wins over a duplicate: a deleted campaign's links are 404.
    if (result.failed.has(1) || result.failed.has(2)) throw linkNotFound();
    throw new ApiError('referred_user_exists', 'This referred_user_id already exists in the campaign.');
  }
  return referredUser;
}

/** Endpoint 11: the record and its campaign in one batch read, then the live link. */
export async function getReferredUser(
  tenant: string,
  campaignId: string,
  referredUserId: string,
): Promise<ReferredUser> {
  const [record, campaign] = await getItems([
    keys.referredUser(tenant, campaignId, referredUserId),
    keys.campaign(tenant, campaignId),
  ]);
  if (!campaign) throw campaignNotFound(campaignId);
  if (!record) throw referredUserNotFound();
  const item = record as unknown as ReferredUserItem;
  const link = await findLinkByCode(item.link_code, tenant);
  if (!link) throw referredUserNotFound();
  return toReferredUser(item, link);
}
