import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { selfReferral } from '../domain/link-rules.ts';
import type { ReferredUser } from '../domain/link-schemas.ts';
import { eventAttributes } from '../domain/webhook-events.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { campaignKey } from './entities/campaign.ts';
import {
  newReferredUserItem,
  referredUserFromItem,
  referredUserKey,
  toReferredUser,
} from './entities/referred-user.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { countOn, findLink, findLinkByCode, linkNotFound } from './links.ts';
import { getItems } from './table/batch.ts';
import { tableName } from './table/client.ts';
import { transactWrite } from './table/transactions.ts';

/** Referred-user reads and writes; the item, its keys and decoding are `entities/referred-user.ts`. */
export { type ReferredUserItem, toReferredUser } from './entities/referred-user.ts';

export const referredUserNotFound = () =>
  new ApiError('referred_user_not_found', 'No such referred user in this campaign.');

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
  const record = newReferredUserItem(link, { id, referredUserId, now });
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
      countOn(link, { counter: 'total_referrals' }),
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
    referredUserKey(tenant, campaignId, referredUserId),
    campaignKey(tenant, campaignId),
  ]);
  if (!campaign) throw campaignNotFound(campaignId);
  if (!record) throw referredUserNotFound();
  const item = referredUserFromItem(record);
  const link = await findLinkByCode(item.link_code, tenant);
  if (!link) throw referredUserNotFound();
  return toReferredUser(item, link);
}
