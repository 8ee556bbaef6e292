/**
 * Conversion reads and writes (endpoints 23–26); the items, keys and decoding are
 * `entities/conversion.ts`.
 *
 * A conversion and its link's `total_conversions` / `total_revenue` change in one transaction, as a
 * signup and `total_referrals` do; so does a refund with the conversion's `refunded_amount` and
 * the link's `total_revenue`. Refunds are compare-and-set on `refunded_amount`: of simultaneous
 * refunds each commits against the amount it read or not at all, and a loser reads again, so their
 * sum can never pass the amount, and those that no longer fit get 422 `refund_exceeds_amount`.
 */

import { remainingMs } from '../aws/deadline.ts';
import type { Conversion } from '../domain/conversion-schemas.ts';
import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { conversionEventId, eventAttributesWithId } from '../domain/webhook-events.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { LINK_TOTALS } from './entities/analytics.ts';
import { CURRENCY_LOCK, campaignKey, currencyOfItem } from './entities/campaign.ts';
import {
  type ConversionItem,
  type ConversionRef,
  conversionFromItem,
  conversionKey,
  conversionListPosition,
  conversionListPrefix,
  conversionPointers,
  externalIdKey,
  newConversionItem,
  parseConversionId,
  pointerOf,
  refundKey,
  statusOf,
  toConversion,
} from './entities/conversion.ts';
import { CLEAR_LAST_ACTION, isLinkItem, type LinkItem, linkFromItem, linkKey } from './entities/link.ts';
import { referredUserFromItem, referredUserKey } from './entities/referred-user.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { findLinkByCode } from './links.ts';
import { referredUserNotFound } from './referred-users.ts';
import { getItems } from './table/batch.ts';
import { tableName } from './table/client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor, type Page } from './table/cursor.ts';
import { queryPage } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

export const conversionNotFound = () => new ApiError('conversion_not_found', 'No such conversion.');

const currencyMismatch = (campaign: string, sent: string) =>
  new ApiError('currency_mismatch', `The campaign counts in ${campaign}, not ${sent}.`);

const conversionExists = () =>
  new ApiError('conversion_exists', 'A conversion with this external_id already exists in the campaign.');

const refundExceeds = (left: number) =>
  new ApiError(
    'refund_exceeds_amount',
    left === 0
      ? 'Nothing is left of this conversion to refund.'
      : `Only ${left} of this conversion is left to refund.`,
  );

/** `currency` is the campaign's: a campaign stored before currencies has none and counts in USD. */
function currencyIs(currency: string) {
  return currency === 'USD'
    ? '(attribute_not_exists(#currency) OR #currency = :currency)'
    : '#currency = :currency';
}

/**
 * The campaign's part of a conversion's transaction: it still exists and still counts in the
 * conversion's currency; the first conversion also locks the currency (`currency_locked`), which
 * a PATCH of `currency` checks. Later ones only check, so they do not write the campaign item.
 */
function campaignCountsIn(tenant: string, campaignId: string, currency: string, locked: boolean) {
  const check = {
    TableName: tableName,
    Key: campaignKey(tenant, campaignId),
    ConditionExpression: `attribute_exists(PK) AND ${currencyIs(currency)}`,
    ExpressionAttributeNames: { '#currency': 'currency' },
    ExpressionAttributeValues: { ':currency': currency },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  if (locked) return { ConditionCheck: check };
  return {
    Update: {
      ...check,
      UpdateExpression: 'SET #locked = :true',
      ExpressionAttributeNames: { ...check.ExpressionAttributeNames, '#locked': CURRENCY_LOCK },
      ExpressionAttributeValues: { ...check.ExpressionAttributeValues, ':true': true },
    },
  };
}

/** The link's counters moved by a conversion (`conversions` 1 or 0) and a revenue (or refund). */
function moveLinkCounters(link: LinkItem, change: { conversions: 0 | 1; revenue: number }, atMs: number) {
  const conversions = LINK_TOTALS.conversions;
  const revenue = LINK_TOTALS.revenue;
  return {
    Update: {
      TableName: tableName,
      Key: linkKey(link.referral_code),
      UpdateExpression: `ADD ${change.conversions ? '#conversions :one, ' : ''}#revenue :revenue SET ${
        change.conversions ? '#conversionsAt = :at, ' : ''
      }#revenueAt = :at ${CLEAR_LAST_ACTION}`,
      ConditionExpression: '#id = :link',
      ExpressionAttributeNames: {
        '#id': 'id',
        '#revenue': revenue.count,
        '#revenueAt': revenue.reach,
        ...(change.conversions
          ? { '#conversions': conversions.count, '#conversionsAt': conversions.reach }
          : {}),
      },
      ExpressionAttributeValues: {
        ':link': link.id,
        ':revenue': change.revenue,
        ':at': atMs,
        ...(change.conversions ? { ':one': 1 } : {}),
      },
    },
  };
}

/**
 * Endpoint 23. Three round trips: the referred user and the campaign (one batch read), the link
 * (its counters for the answer), then one transaction: the record (with its `conversion.created`
 * event), its list pointers, its external id (unique per campaign), the link's counters and the
 * campaign's check (and currency lock), with the stored answer for an `Idempotency-Key`.
 */
export async function createConversion(
  tenant: string,
  input: {
    campaignId: string;
    referredUserId: string;
    amount: number;
    currency?: string;
    externalId?: string;
    metadata: Record<string, unknown>;
  },
  idempotency?: IdempotentRequest,
): Promise<Conversion> {
  const campaignId = input.campaignId.toLowerCase();
  const [userItem, campaign] = await getItems([
    referredUserKey(tenant, campaignId, input.referredUserId),
    campaignKey(tenant, campaignId),
  ]);
  if (!campaign) throw campaignNotFound(input.campaignId);
  if (!userItem) throw referredUserNotFound();
  const currency = currencyOfItem(campaign);
  if (input.currency !== undefined && input.currency !== currency)
    throw currencyMismatch(currency, input.currency);
  const referredUser = referredUserFromItem(userItem);
  const link = await findLinkByCode(referredUser.link_code, tenant);
  if (!link || link.id !== referredUser.link_id) throw referredUserNotFound();
  const n = await nextId('conversion');
  const now = new Date();
  const ref: ConversionRef = { campaignId, createdMs: now.getTime(), n };
  const item = newConversionItem({
    ref,
    tenant,
    referredUser,
    link,
    amount: input.amount,
    currency,
    externalId: input.externalId,
    metadata: input.metadata,
  });
  const conversion = toConversion(item, link, { conversions: 1, revenue: input.amount });
  const external =
    input.externalId !== undefined
      ? [
          {
            Put: {
              TableName: tableName,
              Item: {
                ...externalIdKey(tenant, campaignId, input.externalId),
                type: 'conversion_external_id',
                conversion_id: item.id,
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
        ]
      : [];
  const items = [
    {
      Put: {
        TableName: tableName,
        Item: {
          ...item,
          ...eventAttributesWithId(
            'conversion.created',
            conversionEventId(item.id),
            tenant,
            campaignId,
            conversion,
            now,
          ),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    },
    moveLinkCounters(link, { conversions: 1, revenue: input.amount }, now.getTime()),
    campaignCountsIn(tenant, campaignId, currency, campaign[CURRENCY_LOCK] === true),
    ...external,
    ...conversionPointers(item).map((pointer) => ({ Put: { TableName: tableName, Item: pointer } })),
  ];
  const result = await transactWrite(items, idempotency && rememberAnswer(idempotency, 201, conversion));
  if (result.ok) return conversion;
  // A campaign that is gone wins; then a currency changed since the read; then the external id.
  if (result.failed.has(2)) {
    const old = result.old.get(2);
    if (!old) throw campaignNotFound(input.campaignId);
    throw currencyMismatch(currencyOfItem(old), currency);
  }
  if (result.failed.has(1)) throw referredUserNotFound();
  if (external.length > 0 && result.failed.has(3)) throw conversionExists();
  throw new Error('conversion transaction failed on an item that cannot fail');
}

/** A conversion and its campaign (one strongly consistent batch read); 404 unless both exist. */
async function readConversion(
  tenant: string,
  id: string,
): Promise<{ ref: ConversionRef; item: ConversionItem }> {
  const ref = parseConversionId(id);
  if (!ref) throw conversionNotFound();
  const [stored, campaign] = await getItems([
    conversionKey(tenant, ref),
    campaignKey(tenant, ref.campaignId),
  ]);
  if (!stored || !campaign) throw conversionNotFound();
  const item = conversionFromItem(stored);
  if (item.id !== id) throw conversionNotFound();
  return { ref, item };
}

/** The conversion's link, as it is now (404 if the link is no longer that link: a purge ran). */
async function linkOf(tenant: string, item: ConversionItem): Promise<LinkItem> {
  const link = await findLinkByCode(item.link_code, tenant);
  if (!link || link.id !== item.link_id) throw conversionNotFound();
  return link;
}

/** Endpoint 25: the conversion and its campaign (one batch read), then its link. */
export async function getConversion(tenant: string, id: string): Promise<Conversion> {
  const { item } = await readConversion(tenant, id);
  return toConversion(item, await linkOf(tenant, item));
}

/** Refund attempts that lost a race before giving up (each loser reads again; the deadline bounds it too). */
const MAX_REFUND_ATTEMPTS = 50;

/**
 * Endpoint 24: refund `amount` (all that is left when undefined). Each attempt reads the
 * conversion, its campaign and its link, then commits in one transaction: the conversion's new
 * `refunded_amount` and status if `refunded_amount` is still what was read, the refund's own item
 * (its `conversion.refunded` event), the link's `total_revenue` lowered, and the campaign's check.
 */
export async function refundConversion(
  tenant: string,
  id: string,
  amount: number | undefined,
  idempotency?: IdempotentRequest,
): Promise<Conversion> {
  for (let attempt = 1; ; attempt++) {
    const { ref, item } = await readConversion(tenant, id);
    const left = item.amount - item.refunded_amount;
    const refund = amount ?? left;
    if (left === 0 || refund > left) throw refundExceeds(left);
    const link = await linkOf(tenant, item);
    const now = new Date();
    const refunded = item.refunded_amount + refund;
    const number = item.refund_count + 1;
    const after: ConversionItem = {
      ...item,
      refunded_amount: refunded,
      refund_count: number,
      status: statusOf(item.amount, refunded),
    };
    const conversion = toConversion(after, link, { revenue: -refund });
    const result = await transactWrite(
      [
        {
          Update: {
            TableName: tableName,
            Key: { PK: item.PK, SK: item.SK },
            UpdateExpression: 'SET refunded_amount = :after, refund_count = :number, #status = :status',
            ConditionExpression: 'refunded_amount = :before',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':after': refunded,
              ':before': item.refunded_amount,
              ':number': number,
              ':status': after.status,
            },
          },
        },
        {
          Put: {
            TableName: tableName,
            Item: {
              ...refundKey(tenant, ref, number),
              type: 'conversion_refund',
              conversion_id: item.id,
              refund_amount: refund,
              link_code: item.link_code,
              link_id: item.link_id,
              ...eventAttributesWithId(
                'conversion.refunded',
                conversionEventId(item.id, number),
                tenant,
                item.campaign_id,
                conversion,
                now,
              ),
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          },
        },
        moveLinkCounters(link, { conversions: 0, revenue: -refund }, now.getTime()),
        campaignStillExists(tenant, item.campaign_id),
      ],
      idempotency && rememberAnswer(idempotency, 200, conversion),
    );
    if (result.ok) return conversion;
    if (result.failed.has(2) || result.failed.has(3)) throw conversionNotFound();
    // Another refund committed since the read: read again and see what is left.
    const deadline = remainingMs();
    if (attempt >= MAX_REFUND_ATTEMPTS || (deadline !== undefined && deadline < 500))
      throw new Error(`refund of ${id}: ${attempt} attempts in a row lost a race`);
  }
}

/**
 * Endpoint 26: a page of the campaign's conversions, newest first, all or of one referred user or
 * referrer. One Query (of the records, or of the filter's pointers) beside the campaign's
 * existence, then one batch read: the page's links (their counters), with the records too for a
 * filtered page. No index: the records and pointers are in the campaign's partition.
 */
export async function listConversions(
  tenant: string,
  campaignId: string,
  options: { referrerId?: string; referredUserId?: string; limit: number; cursor?: string },
): Promise<Page<Conversion>> {
  const filter = { referrerId: options.referrerId, referredUserId: options.referredUserId };
  const prefix = conversionListPrefix(filter);
  const filterName =
    options.referredUserId !== undefined
      ? `u:${options.referredUserId}`
      : options.referrerId !== undefined
        ? `r:${options.referrerId}`
        : undefined;
  const scope = { kind: 'conversions' as const, tenant, campaignId, filter: filterName };
  const after = options.cursor
    ? decodeSortKeyCursor(scope, options.cursor, conversionListPosition(prefix))
    : undefined;
  const partition = campaignKey(tenant, campaignId).PK;
  const [page, exists] = await Promise.all([
    queryPage({
      partition,
      sortKeyPrefix: prefix,
      limit: options.limit,
      newestFirst: true,
      after: after ? { sortKey: after } : undefined,
    }),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const { items: shown, last, more } = page;
  const filtered = prefix !== conversionListPrefix();
  const pointers = filtered ? shown.map(pointerOf) : [];
  const codes = [
    ...new Set(filtered ? pointers.map((p) => p.linkCode) : shown.map((r) => String(r.link_code))),
  ];
  // One batch: the records of a filtered page, and every link of the page (eventually consistent,
  // as the link lists read their counters).
  const recordKeys = pointers.map((p) => ({ PK: partition, SK: p.sk }));
  const keys = [...recordKeys, ...codes.map(linkKey)];
  const read = keys.length > 0 ? await getItems(keys, { consistent: false }) : [];
  const records = read.slice(0, recordKeys.length);
  const links = read.slice(recordKeys.length);
  const linkByCode = new Map<string, LinkItem>();
  codes.forEach((code, i) => {
    const l = links[i];
    if (isLinkItem(l)) linkByCode.set(code, linkFromItem(l));
  });
  const items = (filtered ? records : shown).flatMap((stored) => {
    if (!stored) return [];
    const item = conversionFromItem(stored);
    const link = linkByCode.get(item.link_code);
    return link && link.id === item.link_id ? [toConversion(item, link)] : [];
  });
  return {
    items,
    nextCursor: more && last ? encodeSortKeyCursor(scope, String(last.SK)) : undefined,
  };
}
