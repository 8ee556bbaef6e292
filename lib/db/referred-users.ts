import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { selfReferral } from '../domain/link-rules.ts';
import type { ReferredUser } from '../domain/link-schemas.ts';
import { eventAttributes } from '../domain/webhook-events.ts';
import { LINK_COUNTER_ATTRIBUTES, LINK_INDEX_ATTRIBUTES } from '../table-definition.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { campaignKey } from './entities/campaign.ts';
import { isLinkItem, type LinkItem, linkFromItem, linkKey } from './entities/link.ts';
import {
  listedReferredUserFromItem,
  newReferredUserItem,
  REFERRED_USER_LIST_INDEX,
  type ReferredUserFilter,
  referredUserFromItem,
  referredUserKey,
  referredUserListPartition,
  toReferredUser,
} from './entities/referred-user.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { countOn, findLink, findLinkByCode, linkNotFound } from './links.ts';
import { getItems } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { decodeReferredUserCursor, encodeReferredUserCursor, type Page } from './table/cursor.ts';
import { transactWrite } from './table/transactions.ts';

/** Referred-user reads and writes; the item, its keys and decoding are `entities/referred-user.ts`. */
export { type ReferredUserFilter, type ReferredUserItem, toReferredUser } from './entities/referred-user.ts';

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

const filterName = (filter: ReferredUserFilter) =>
  filter.kind === 'link'
    ? `link:${filter.linkId}`
    : filter.kind === 'referrer'
      ? `referrer:${filter.referrerId}`
      : 'campaign';

/**
 * Endpoint 33: one page of a campaign's referred users, newest first, whole or one link's or one
 * referrer's: one Query of that list's index partition read backwards, beside the campaign's
 * existence, then the page's links (their counters are live, and in no index) in one eventually
 * consistent BatchGetItem per 100 distinct links. A referred user whose link is no longer a link
 * of this tenant (a purge ran meanwhile) is left out.
 *
 * As for the link lists, a page that stopped at 1 MB carries a cursor: every item is reachable.
 */
export async function listReferredUsers(
  tenant: string,
  campaignId: string,
  options: { filter: ReferredUserFilter; limit: number; cursor?: string },
): Promise<Page<ReferredUser>> {
  const scope = { tenant, campaignId, filter: filterName(options.filter) };
  const position = options.cursor ? decodeReferredUserCursor(scope, options.cursor) : undefined;
  const index = REFERRED_USER_LIST_INDEX[options.filter.kind];
  const partition = referredUserListPartition(tenant, campaignId, options.filter);
  const [page, exists] = await Promise.all([
    db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index.indexName,
        KeyConditionExpression: `${index.partitionKey} = :pk`,
        ExpressionAttributeValues: { ':pk': partition },
        ScanIndexForward: false,
        Limit: options.limit + 1,
        ExclusiveStartKey: position
          ? {
              ...referredUserKey(tenant, campaignId, position.referredUserId),
              [index.partitionKey]: partition,
              [index.sortKey]: position.sortKey,
            }
          : undefined,
      }),
    ),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const items = page.Items ?? [];
  const shown = items.slice(0, options.limit);
  const last = shown.at(-1);
  const more = items.length > options.limit || page.LastEvaluatedKey !== undefined;
  const listed = shown.map(listedReferredUserFromItem);
  const links = await linksByCode(
    tenant,
    listed.map((u) => u.referral_code),
  );
  return {
    items: listed.flatMap((user) => {
      const link = links.get(user.referral_code);
      return link ? [toReferredUser(user, link)] : [];
    }),
    nextCursor:
      more && last
        ? encodeReferredUserCursor(scope, {
            sortKey: String(last[index.sortKey]),
            referredUserId: listedReferredUserFromItem(last).referred_user_id,
          })
        : undefined,
  };
}

const LIST_LINK_ATTRIBUTES = ['type', ...LINK_INDEX_ATTRIBUTES, ...LINK_COUNTER_ATTRIBUTES];

/** This tenant's links of `codes` read by key (each code once), as fresh as an index copy. */
async function linksByCode(tenant: string, codes: string[]): Promise<Map<string, LinkItem>> {
  const distinct = [...new Set(codes)];
  if (distinct.length === 0) return new Map();
  const items = await getItems(
    distinct.map((code) => linkKey(code)),
    { consistent: false, attributes: LIST_LINK_ATTRIBUTES },
  );
  const found = new Map<string, LinkItem>();
  items.forEach((item, i) => {
    if (!isLinkItem(item)) return;
    const link = linkFromItem(item);
    if (link.tenant === tenant) found.set(distinct[i]!, link);
  });
  return found;
}
