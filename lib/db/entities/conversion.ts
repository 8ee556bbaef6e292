/**
 * Conversions (sales) and their refunds: all in their campaign's partition, so the campaign's
 * purge removes them with the rest, and a deleted campaign's conversion is gone at once (every read
 * reads the campaign beside it).
 *
 *   conversion         PK `T#<tenant>#C#<campaign>`  SK `CV#<created ms, 15>#<n, 16>`            the record
 *   by referred user   same PK                       SK `CVU#<sha256 of user>#<ms>#<n>`          list pointer
 *   by referrer        same PK                       SK `CVR#<sha256 of referrer>#<ms>#<n>`      list pointer
 *   external id        same PK                       SK `CVX#<sha256 of external_id>`            uniqueness
 *   refund             same PK                       SK `CVF#<ms>#<n>#<refund number, 6>`        event item
 *
 * The id the API shows (`cv_` + base64url of the campaign's UUID, the creation ms and `n`) names
 * the record's key, so endpoints 24 and 25, which get only the id, read it by key with no lookup
 * item and no index. The campaign's list is one Query of `CV#` backwards (newest first); a filtered
 * list one Query of a pointer prefix, whose pointers name the records (read in one batch with their
 * links). No new index: the single table's three stay as they are (see docs/decisions.md).
 *
 * The record carries the `conversion.created` event attributes from its Put (its INSERT is the
 * event); each refund is an item of its own carrying `conversion.refunded`, so the refund is an
 * INSERT too, for the webhook pipeline and for the rollups, which subtract it from the revenue in
 * the hour of the refund.
 */
import type { Conversion } from '../../domain/conversion-schemas.ts';
import { stringifyJson } from '../../domain/json.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { referrerHash } from './analytics.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';
import { type LinkItem, toLink } from './link.ts';
import { type ReferredUserItem, toReferredUser } from './referred-user.ts';

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const order = (createdMs: number, n: number) => `${pad(createdMs, 15)}#${pad(n, 16)}`;
const hashOf = referrerHash;

/** Where a conversion's record is: what its id names. */
export interface ConversionRef {
  campaignId: string;
  createdMs: number;
  n: number;
}

const ID_BYTES = 30;
const MAX_MS = 2 ** 48 - 1;

/** The API's id of a conversion: `cv_` and base64url of its campaign, creation ms and number. */
export function conversionId(ref: ConversionRef): string {
  const bytes = Buffer.alloc(ID_BYTES);
  Buffer.from(ref.campaignId.toLowerCase().replaceAll('-', ''), 'hex').copy(bytes, 0);
  bytes.writeUIntBE(ref.createdMs, 16, 6);
  bytes.writeBigUInt64BE(BigInt(ref.n), 22);
  return `cv_${bytes.toString('base64url')}`;
}

/** What an id names, or undefined for anything the API never made (then: not found). */
export function parseConversionId(id: string): ConversionRef | undefined {
  if (!/^cv_[A-Za-z0-9_-]{40}$/.test(id)) return undefined;
  const bytes = Buffer.from(id.slice(3), 'base64url');
  if (bytes.length !== ID_BYTES) return undefined;
  const hex = bytes.subarray(0, 16).toString('hex');
  const campaignId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const createdMs = bytes.readUIntBE(16, 6);
  const n = bytes.readBigUInt64BE(22);
  if (n < 1n || n > BigInt(Number.MAX_SAFE_INTEGER) || createdMs > MAX_MS) return undefined;
  return { campaignId, createdMs, n: Number(n) };
}

export const CONVERSION_SK_PREFIX = 'CV#';
export const conversionSortKey = (ref: ConversionRef) =>
  `${CONVERSION_SK_PREFIX}${order(ref.createdMs, ref.n)}`;

export function conversionKey(tenant: string, ref: ConversionRef) {
  return { PK: campaignPartition(tenant, ref.campaignId), SK: conversionSortKey(ref) };
}

/** The sort-key prefix of a campaign's conversions, all or of one referred user or referrer. */
export function conversionListPrefix(filter?: { referredUserId?: string; referrerId?: string }): string {
  if (filter?.referredUserId !== undefined) return `CVU#${hashOf(filter.referredUserId)}#`;
  if (filter?.referrerId !== undefined) return `CVR#${hashOf(filter.referrerId)}#`;
  return CONVERSION_SK_PREFIX;
}

/** A position in one of those lists: the prefix, then `<ms, 15>#<n, 16>`. */
export const conversionListPosition = (prefix: string) =>
  new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\d{15}#\\d{16}$`);

export function externalIdKey(tenant: string, campaignId: string, externalId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: `CVX#${hashOf(externalId)}` };
}

export function refundKey(tenant: string, ref: ConversionRef, refundNumber: number) {
  return {
    PK: campaignPartition(tenant, ref.campaignId),
    SK: `CVF#${order(ref.createdMs, ref.n)}#${pad(refundNumber, 6)}`,
  };
}

export type ConversionStatus = Conversion['status'];

export const statusOf = (amount: number, refunded: number): ConversionStatus =>
  refunded === 0 ? 'completed' : refunded >= amount ? 'refunded' : 'partially_refunded';

/** The stored conversion: its own fields, its referred user's and its link's code and id. */
export interface ConversionItem {
  PK: string;
  SK: string;
  type: 'conversion';
  tenant: string;
  campaign_id: string;
  id: string;
  n: number;
  created_at: string;
  created_ms: number;
  amount: number;
  refunded_amount: number;
  /** How many refunds it had: the next one's number (its item's key). */
  refund_count: number;
  currency: string;
  external_id: string | null;
  /** As JSON text: any JSON the client sent, which a DynamoDB map could not always hold. */
  metadata_json: string;
  status: ConversionStatus;
  referred_user_id: string;
  referred_user_record_id: number;
  referred_user_created_at: string;
  link_code: string;
  link_id: number;
  referrer_id: string | null;
}

export function newConversionItem(input: {
  ref: ConversionRef;
  tenant: string;
  referredUser: ReferredUserItem;
  link: LinkItem;
  amount: number;
  currency: string;
  externalId?: string;
  metadata: Record<string, unknown>;
}): ConversionItem {
  const { ref, tenant, referredUser, link } = input;
  return {
    ...conversionKey(tenant, ref),
    type: 'conversion',
    tenant,
    campaign_id: ref.campaignId,
    id: conversionId(ref),
    n: ref.n,
    created_at: formatTimestamp(new Date(ref.createdMs)),
    created_ms: ref.createdMs,
    amount: input.amount,
    refunded_amount: 0,
    refund_count: 0,
    currency: input.currency,
    external_id: input.externalId ?? null,
    metadata_json: stringifyJson(input.metadata),
    status: 'completed',
    referred_user_id: referredUser.referred_user_id,
    referred_user_record_id: referredUser.id,
    referred_user_created_at: referredUser.created_at,
    link_code: link.referral_code,
    link_id: link.id,
    referrer_id: link.referrer_id,
  };
}

/**
 * The list pointers of a conversion: by referred user always, by referrer when its link has one.
 * Keys, the record's sort key and its link's code only: written once, never changed by a refund.
 */
export function conversionPointers(item: ConversionItem) {
  const at = item.SK.slice(CONVERSION_SK_PREFIX.length);
  const pointer = (prefix: string) => ({
    PK: item.PK,
    SK: `${prefix}${at}`,
    type: 'conversion_pointer',
    conversion_sk: item.SK,
    link_code: item.link_code,
  });
  return [
    pointer(conversionListPrefix({ referredUserId: item.referred_user_id })),
    ...(item.referrer_id !== null ? [pointer(conversionListPrefix({ referrerId: item.referrer_id }))] : []),
  ];
}

const field = decoder('conversion');
const pointerField = decoder('conversion pointer');

/** A pointer's record key and its link's code. */
export function pointerOf(item: StoredItem): { sk: string; linkCode: string } {
  return { sk: pointerField.string(item, 'conversion_sk'), linkCode: pointerField.string(item, 'link_code') };
}

export function conversionFromItem(item: StoredItem): ConversionItem {
  const status = field.string(item, 'status');
  if (status !== 'completed' && status !== 'partially_refunded' && status !== 'refunded')
    return field.fail(item, 'status', 'a conversion status');
  return {
    PK: field.string(item, 'PK'),
    SK: field.string(item, 'SK'),
    type: 'conversion',
    tenant: field.string(item, 'tenant'),
    campaign_id: field.string(item, 'campaign_id'),
    id: field.string(item, 'id'),
    n: field.number(item, 'n'),
    created_at: field.string(item, 'created_at'),
    created_ms: field.number(item, 'created_ms'),
    amount: field.number(item, 'amount'),
    refunded_amount: field.number(item, 'refunded_amount'),
    refund_count: field.number(item, 'refund_count'),
    currency: field.string(item, 'currency'),
    external_id: field.nullableString(item, 'external_id'),
    metadata_json: field.string(item, 'metadata_json'),
    status,
    referred_user_id: field.string(item, 'referred_user_id'),
    referred_user_record_id: field.number(item, 'referred_user_record_id'),
    referred_user_created_at: field.string(item, 'referred_user_created_at'),
    link_code: field.string(item, 'link_code'),
    link_id: field.number(item, 'link_id'),
    referrer_id: field.nullableString(item, 'referrer_id'),
  };
}

function metadataOf(item: ConversionItem): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(item.metadata_json);
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      return value as Record<string, unknown>;
  } catch {
    // reported below
  }
  return field.fail(item as unknown as StoredItem, 'metadata_json', 'a JSON object');
}

/** The API object: the record with its link as read (plus what the write that answers adds). */
export function toConversion(
  item: ConversionItem,
  link: LinkItem,
  increments: { conversions?: number; revenue?: number } = {},
): Conversion {
  const referralLink = toLink(link, increments);
  const referredUser = toReferredUser(
    {
      id: item.referred_user_record_id,
      created_at: item.referred_user_created_at,
      referred_user_id: item.referred_user_id,
    },
    link,
    increments,
  );
  return {
    id: item.id,
    created_at: item.created_at,
    campaign_id: item.campaign_id,
    referred_user: { ...referredUser, referral_link: referralLink },
    referral_link: referralLink,
    amount: item.amount,
    refunded_amount: item.refunded_amount,
    currency: item.currency,
    external_id: item.external_id,
    metadata: metadataOf(item),
    status: item.status,
  };
}
