import { decodeClickId, clickExpired as isClickExpired, sameSecret } from '../domain/click-ids.ts';
import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { clickExpired, clickNotFound, selfReferral } from '../domain/link-rules.ts';
import type { ReferredUser } from '../domain/link-schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { eventAttributes } from '../domain/webhook-events.ts';
import { LINK_COUNTER_ATTRIBUTES, LINK_INDEX_ATTRIBUTES } from '../table-definition.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { campaignKey, clickSettingsOf } from './entities/campaign.ts';
import { isLinkItem, type LinkItem, linkFromItem, linkKey } from './entities/link.ts';
import {
  listedReferredUserFromItem,
  newReferredUserItem,
  REFERRED_USER_LIST_INDEX,
  type ReferredUserClick,
  type ReferredUserFilter,
  referredUserFromItem,
  referredUserKey,
  referredUserListPartition,
  toReferredUser,
} from './entities/referred-user.ts';
import { clickOfVisitItem, visitKey } from './entities/visit.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { countOn, findLink, findLinkByCode, linkNotFound } from './links.ts';
import { getItems } from './table/batch.ts';
import { tableName } from './table/client.ts';
import { decodeReferredUserCursor, encodeReferredUserCursor, type Page } from './table/cursor.ts';
import { queryPage } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

/** Referred-user reads and writes; the item, its keys and decoding are `entities/referred-user.ts`. */
export { type ReferredUserFilter, type ReferredUserItem, toReferredUser } from './entities/referred-user.ts';

export const referredUserNotFound = () =>
  new ApiError('referred_user_not_found', 'No such referred user in this campaign.');

/**
 * Endpoint 10. Two round trips: the link read (by click id: the click's visit item, its campaign
 * and its link in one batch), then one transaction that writes the referred user only if the id is
 * new in the campaign, raises the link's `total_referrals`, checks the campaign still exists, and
 * carries the `referred_user.created` event for the webhook stream.
 */
export async function createReferredUser(
  tenant: string,
  target: { code: string } | { id: number } | { click: string },
  referredUserId: string,
  idempotency?: IdempotentRequest,
): Promise<ReferredUser> {
  const now = new Date();
  let link: LinkItem | undefined;
  let click: { id: string; clickedAt: string; visitor?: string } | undefined;
  if ('click' in target) {
    ({ link, click } = await findClick(tenant, target.click, now));
  } else {
    link = await findLink(target, tenant);
    if (!link) throw linkNotFound();
  }
  // A deleted campaign (or its link) is the click's 404 on that path, the link's on the others.
  const gone = click ? clickNotFound : linkNotFound;
  if (link.referrer_id !== null && link.referrer_id === referredUserId) {
    // Only on this error path: a link of a deleted campaign is 404, not 422 (the click path read it).
    if (!click && !(await campaignExists(tenant, link.campaign_id))) throw gone();
    throw selfReferral();
  }
  const id = await nextId('referred_user');
  const record = newReferredUserItem(link, { id, referredUserId, now, click });
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
    if (result.failed.has(1) || result.failed.has(2)) throw gone();
    throw new ApiError('referred_user_exists', 'This referred_user_id already exists in the campaign.');
  }
  return referredUser;
}

/**
 * The link a click id names, read with the click's visit item and its campaign in one strongly
 * consistent BatchGetItem: the id carries the campaign, the visit and the code, the api key the
 * tenant. Anything that does not add up is 404 `click_not_found`, told apart from nothing else:
 * a string the redirect did not make, a visit of another tenant (its key is in that tenant's
 * partition), a wrong secret, a deleted campaign (gone at once, before its purge), a code issued
 * again since. A click older than its campaign's window now is 422 `click_expired`.
 */
async function findClick(
  tenant: string,
  clickId: string,
  now: Date,
): Promise<{ link: LinkItem; click: { id: string; clickedAt: string; visitor?: string } }> {
  const named = decodeClickId(clickId);
  if (!named) throw clickNotFound();
  const [visitItem, campaignItem, linkItem] = await getItems([
    visitKey(tenant, named.campaignId, named.visitId),
    campaignKey(tenant, named.campaignId),
    linkKey(named.code),
  ]);
  const click = clickOfVisitItem(visitItem);
  if (!click || click.code !== named.code || !sameSecret(click.secret, named.secret)) throw clickNotFound();
  if (!campaignItem || !isLinkItem(linkItem)) throw clickNotFound();
  const link = linkFromItem(linkItem);
  if (link.tenant !== tenant || link.campaign_id !== named.campaignId) throw clickNotFound();
  const { windowDays } = clickSettingsOf(campaignItem);
  if (isClickExpired(click.clickedMs, windowDays, now.getTime())) throw clickExpired(windowDays);
  return {
    link,
    click: {
      id: clickId,
      clickedAt: formatTimestamp(new Date(click.clickedMs)),
      ...(click.visitor ? { visitor: click.visitor } : {}),
    },
  };
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
 * existence, then the page's links (their counters are live, and in no index) and its users' items
 * (their clicks) in one round trip of eventually consistent BatchGetItems, 100 keys each: 2 for a
 * full page of the default 100 users, so 4 calls (the route's budget). A referred user whose link is no longer a link
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
    queryPage({
      index,
      partition,
      limit: options.limit,
      newestFirst: true,
      after: position && {
        sortKey: position.sortKey,
        tableKey: referredUserKey(tenant, campaignId, position.referredUserId),
      },
    }),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const { items: shown, last, more } = page;
  const listed = shown.map(listedReferredUserFromItem);
  const { links, clicks } = await linksAndClicks(tenant, campaignId, listed);
  return {
    items: listed.flatMap((user) => {
      const link = links.get(user.referral_code);
      return link ? [toReferredUser({ ...user, ...clicks.get(user.referred_user_id) }, link)] : [];
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
const CLICK_ATTRIBUTES = ['click_id', 'clicked_at'];

/**
 * The page's links, by code (each code once; their counters are in no index), and the clicks of its
 * referred users, by id, read in the same batch: the indexes project no click (a projection cannot
 * change once deployed, see docs/data-model.md), so a signup's `click_id` and `clicked_at` come
 * from its item. Eventually consistent, as fresh as the index copy the page came from.
 */
async function linksAndClicks(
  tenant: string,
  campaignId: string,
  listed: Array<{ referral_code: string; referred_user_id: string }>,
) {
  const codes = [...new Set(listed.map((u) => u.referral_code))];
  const links = new Map<string, LinkItem>();
  const clicks = new Map<string, ReferredUserClick>();
  if (listed.length === 0) return { links, clicks };
  const users = listed.map((u) => referredUserKey(tenant, campaignId, u.referred_user_id));
  const items = await getItems([...codes.map((code) => linkKey(code)), ...users], {
    consistent: false,
    attributes: [...LIST_LINK_ATTRIBUTES, ...CLICK_ATTRIBUTES],
  });
  codes.forEach((code, i) => {
    const item = items[i];
    if (!isLinkItem(item)) return;
    const link = linkFromItem(item);
    if (link.tenant === tenant) links.set(code, link);
  });
  listed.forEach((user, i) => {
    const item = items[codes.length + i];
    if (typeof item?.click_id === 'string' && typeof item.clicked_at === 'string')
      clicks.set(user.referred_user_id, { click_id: item.click_id, clicked_at: item.clicked_at });
  });
  return { links, clicks };
}
