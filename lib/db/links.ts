import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { generateReferralCode } from '../domain/link-rules.ts';
import type { ReferralLink } from '../domain/link-schemas.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { LINK_TOTALS } from './entities/analytics.ts';
import { campaignKey } from './entities/campaign.ts';
import {
  CAMPAIGN_LINKS_INDEX,
  CLEAR_LAST_ACTION,
  CODE_RESERVATION,
  campaignLinksPartition,
  type IndexedLink,
  indexedLinkFromItem,
  isLinkItem,
  LINK_BY_ID_INDEX,
  LINK_READ,
  type LinkItem,
  linkCountersOf,
  linkFromItem,
  linkIdPartition,
  linkKey,
  linkOrderOf,
  newLinkItem,
  REFERRER_LINKS_INDEX,
  referrerLinksPartition,
  toLink,
} from './entities/link.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { getItems } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { decodeCursor, encodeCursor, type Page } from './table/cursor.ts';
import { queryPage } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

/** Link reads and writes; the item, its keys, indexes and decoding are `entities/link.ts`. */
export { type LinkItem, newLinkItem, toLink };

export const linkNotFound = () => new ApiError('referral_link_not_found', 'No such referral link.');

const GENERATED_CODE_ATTEMPTS = 5;

/** Never used: the only free code for a generated one. */
const freeCode = { ConditionExpression: 'attribute_not_exists(PK)' };

/** Never used, or this tenant's own reservation. */
function freeForCustomCode(tenant: string) {
  return {
    ConditionExpression: 'attribute_not_exists(PK) OR (#type = :reservation AND #tenant = :tenant)',
    ExpressionAttributeNames: { '#type': 'type', '#tenant': 'tenant' },
    ExpressionAttributeValues: { ':reservation': CODE_RESERVATION, ':tenant': tenant },
  };
}

/**
 * Create a link: one strongly consistent campaign read (URL and existence) and one transaction
 * that writes the link only if its code is free and the campaign still exists. A generated code
 * that collides is retried with a new one; a custom code that is taken is a 409.
 *
 * A code is free when it was never used, and a custom code also when it is this tenant's own
 * reservation (left by the purge of a deleted campaign's link). A generated code takes only
 * never-used codes: an old printed link should stay dead rather than lead to an unrelated new one.
 */
export async function createLink(
  tenant: string,
  input: { campaignId: string; referrerId: string | null; customCode?: string },
  idempotency?: IdempotentRequest,
): Promise<ReferralLink> {
  const { Item: campaign } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, input.campaignId),
      ConsistentRead: true,
      ProjectionExpression: '#url',
      ExpressionAttributeNames: { '#url': 'url' },
    }),
  );
  if (!campaign) throw campaignNotFound(input.campaignId);
  const id = await nextId('link');
  const now = new Date();
  for (let attempt = 1; ; attempt++) {
    const code = input.customCode ?? generateReferralCode();
    const item = newLinkItem({
      tenant,
      campaignId: input.campaignId,
      campaignUrl: String(campaign.url),
      id,
      code,
      referrerId: input.referrerId,
      now,
    });
    const link = toLink(item);
    const result = await transactWrite(
      [
        {
          Put: {
            TableName: tableName,
            Item: item,
            ...(input.customCode !== undefined ? freeForCustomCode(tenant) : freeCode),
          },
        },
        campaignStillExists(tenant, input.campaignId),
      ],
      idempotency && rememberAnswer(idempotency, 201, link),
    );
    if (result.ok) return link;
    if (result.failed.has(1)) throw campaignNotFound(input.campaignId);
    if (input.customCode !== undefined) {
      throw new ApiError('referral_code_taken', `The referral code ${input.customCode} is already in use.`);
    }
    if (attempt >= GENERATED_CODE_ATTEMPTS) throw new Error('could not find a free referral code');
  }
}

/**
 * The stored link of a code, if it belongs to this tenant (anyone else's is "not found"). A code
 * reservation is no link: the reserved code answers like one never used.
 */
export async function findLinkByCode(code: string, tenant?: string): Promise<LinkItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: linkKey(code), ConsistentRead: true, ...LINK_READ }),
  );
  if (!isLinkItem(Item)) return undefined;
  const item = linkFromItem(Item);
  return tenant !== undefined && item.tenant !== tenant ? undefined : item;
}

/**
 * By id, through GSI1, without counters (the index projects none): for a write that gets the
 * counters from its own update. Index reads are eventually consistent; ids are immutable.
 */
export async function findIndexedLinkById(
  id: number,
  tenant: string | undefined,
): Promise<IndexedLink | undefined> {
  const { Items } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: LINK_BY_ID_INDEX.indexName,
      KeyConditionExpression: `${LINK_BY_ID_INDEX.partitionKey} = :pk`,
      ExpressionAttributeValues: { ':pk': linkIdPartition(id) },
      Limit: 1,
    }),
  );
  const item = Items?.[0] && indexedLinkFromItem(Items[0]);
  return item && item.tenant === tenant ? item : undefined;
}

/** By id, with its exact counters: the index gives the code, then the item is read by key. */
export async function findLinkById(id: number, tenant: string | undefined): Promise<LinkItem | undefined> {
  const indexed = await findIndexedLinkById(id, tenant);
  const link = indexed && (await findLinkByCode(indexed.referral_code, tenant));
  return link?.id === id ? link : undefined;
}

/**
 * The link a request names. `tenant` undefined is the public redirect, which knows only a code
 * (an id without a tenant never matches).
 */
export async function findLink(target: { code: string } | { id: number }, tenant: string | undefined) {
  return 'code' in target ? findLinkByCode(target.code, tenant) : findLinkById(target.id, tenant);
}

/** The link a request names, counters not needed: by id one index read fewer than `findLink`. */
export async function findIndexedLink(
  target: { code: string } | { id: number },
  tenant: string,
): Promise<IndexedLink | undefined> {
  return 'code' in target ? findLinkByCode(target.code, tenant) : findIndexedLinkById(target.id, tenant);
}

/**
 * The transaction item that counts one more click or referral on a link that was read: only that
 * very link (never a reservation left by a purge, or a link that re-issued its code since), and
 * it takes any recorded action off the link (see `CLEAR_LAST_ACTION`).
 */
export function countOn(
  link: LinkItem,
  counted: { counter: 'total_clicks'; actionType: string } | { counter: 'total_referrals' },
  atMs = Date.now(),
) {
  const totals = rankedTotal(counted.counter === 'total_clicks' ? counted.actionType : undefined);
  return {
    Update: {
      TableName: tableName,
      Key: linkKey(link.referral_code),
      UpdateExpression: `ADD ${counted.counter} :one${totals.count ? ', #total :one' : ''} SET #reach = :at ${CLEAR_LAST_ACTION}`,
      ConditionExpression: '#id = :link',
      ExpressionAttributeNames: {
        '#id': 'id',
        '#reach': totals.reach,
        ...(totals.count ? { '#total': totals.count } : {}),
      },
      ExpressionAttributeValues: { ':one': 1, ':link': link.id, ':at': atMs },
    },
  };
}

/**
 * The link's all-time count a write raises for its rankings (`LINK_TOTALS`), with its reach time:
 * an action raises `actions` (a `visit` posted through the API, `visits`); a referred user's count
 * is `total_referrals` itself, so only its reach time is set.
 */
export function rankedTotal(actionType: string | undefined): { count?: string; reach: string } {
  if (actionType === undefined) return { reach: LINK_TOTALS.referred_users.reach };
  return actionType === 'visit' ? LINK_TOTALS.visits : LINK_TOTALS.actions;
}

/**
 * A link is visible only while its campaign exists: deletion hides everything at once. Two round
 * trips either way: by code, the item and then the campaign; by id, the index and then the item
 * and the campaign in one BatchGetItem.
 */
export async function getLiveLink(
  target: { code: string } | { id: number },
  tenant: string | undefined,
): Promise<LinkItem> {
  if ('code' in target) {
    const item = await findLinkByCode(target.code, tenant);
    if (!item || !(await campaignExists(item.tenant, item.campaign_id))) throw linkNotFound();
    return item;
  }
  const indexed = await findIndexedLinkById(target.id, tenant);
  if (!indexed) throw linkNotFound();
  const [item, campaign] = await getItems([
    linkKey(indexed.referral_code),
    campaignKey(indexed.tenant, indexed.campaign_id),
  ]);
  if (!isLinkItem(item) || !campaign) throw linkNotFound();
  const link = linkFromItem(item);
  if (link.id !== target.id) throw linkNotFound();
  return link;
}

/**
 * One page of a campaign's (or a referrer's) links, oldest first: one Query (`queryPage`: limit + 1
 * items, a cursor also after a page cut at 1 MB) beside one campaign read, in parallel. The cost is
 * the same whatever the list's length. (When the 1 MB happened to end exactly at the last item, the
 * next page is empty and has none.)
 */
export async function listLinks(
  tenant: string,
  campaignId: string,
  options: { referrerId?: string; limit: number; cursor?: string },
): Promise<Page<ReferralLink>> {
  const scope = { tenant, campaignId, referrerId: options.referrerId };
  const position = options.cursor ? decodeCursor(scope, options.cursor) : undefined;
  const index = options.referrerId !== undefined ? REFERRER_LINKS_INDEX : CAMPAIGN_LINKS_INDEX;
  const partition =
    options.referrerId !== undefined
      ? referrerLinksPartition(tenant, campaignId, options.referrerId)
      : campaignLinksPartition(tenant, campaignId);
  const [page, exists] = await Promise.all([
    queryPage({
      index,
      partition,
      limit: options.limit,
      after: position && { sortKey: position.sortKey, tableKey: linkKey(position.code) },
    }),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const { items: shown, last, more } = page;
  const links = shown.map(indexedLinkFromItem);
  return {
    items: await withCounters(links),
    nextCursor:
      more && last
        ? encodeCursor(scope, {
            sortKey: linkOrderOf(last, index),
            code: indexedLinkFromItem(last).referral_code,
          })
        : undefined,
  };
}

/**
 * The API objects of links read through an index, with their counters, which no index projects:
 * one eventually consistent BatchGetItem of their items per 100 (as fresh as the index copies
 * were), of which only the counters are taken. A link whose item is no longer that link (a purge
 * ran meanwhile) is left out.
 */
async function withCounters(links: IndexedLink[]): Promise<ReferralLink[]> {
  if (links.length === 0) return [];
  const items = await getItems(
    links.map((l) => linkKey(l.referral_code)),
    { consistent: false },
  );
  return links.flatMap((link, i) => {
    const item = items[i];
    if (!isLinkItem(item) || item.id !== link.id) return [];
    return [toLink({ ...link, ...linkCountersOf(item) })];
  });
}
