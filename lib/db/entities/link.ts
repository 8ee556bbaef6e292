/**
 * The referral link item, and the code reservation a purge leaves at its key.
 *
 *   referral link     PK `LINK#<code>`  SK `LINK`   (codes are unique across the deployment)
 *     GSI1  `LINKID#<id>` / `LINK`                                        a link by id
 *     GSI2  `T#<tenant>#C#<campaign>#LINKS` / `<created ms>#<id>`          a campaign's links, oldest first
 *     GSI3  `T#<tenant>#C#<campaign>#R#<referrer>` / `<created ms>#<id>`   a referrer's links (sparse)
 *   code reservation  PK `LINK#<code>`  SK `LINK`   no index keys
 *
 * Keys, item shapes, decoding and the link's indexes, with no I/O, so tools (tests, the bench) can
 * build and read items exactly as the API does; the reads and writes are `lib/db/links.ts`.
 */
import { config } from '../../config.ts';
import { stringifyJson } from '../../domain/json.ts';
import type { ReferralLink } from '../../domain/link-schemas.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { buildReferralLink, buildShareUrl } from '../../domain/url.ts';
import {
  GSI1,
  GSI2,
  GSI3,
  LINK_COUNTER_ATTRIBUTES,
  LINK_INDEX_ATTRIBUTES,
  type TableIndex,
} from '../../table-definition.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

export const LINK_SK = 'LINK';

export function linkKey(code: string) {
  return { PK: `LINK#${code}`, SK: LINK_SK } as const;
}

/** A link by id: GSI1's partition key. */
export const LINK_BY_ID_INDEX = GSI1;
export const linkIdPartition = (id: number) => `LINKID#${id}`;

/** A campaign's links: GSI2's partition key. */
export const CAMPAIGN_LINKS_INDEX = GSI2;
export const campaignLinksPartition = (tenant: string, campaignId: string) =>
  `${campaignPartition(tenant, campaignId)}#LINKS`;

/** A referrer's links in a campaign: GSI3's partition key. */
export const REFERRER_LINKS_INDEX = GSI3;
export const referrerLinksPartition = (tenant: string, campaignId: string, referrerId: string) =>
  `${campaignPartition(tenant, campaignId)}#R#${referrerId}`;

/** Sort key of both link lists: creation time, then id, so "oldest first" is the index order. */
export const linkOrder = (createdMs: number, id: number) => `${pad(createdMs, 15)}#${pad(id, 16)}`;

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** The stored link: the API object's fields plus what a write or a redirect needs without joins. */
export interface StoredLinkItem {
  PK: string;
  SK: typeof LINK_SK;
  type: 'link';
  tenant: string;
  id: number;
  created_at: string;
  created_ms: number;
  referral_code: string;
  campaign_id: string;
  /** Copy of the campaign's URL, which is immutable, so a redirect needs no campaign read. */
  campaign_url: string;
  referrer_id: string | null;
  total_clicks: number;
  total_referrals: number;
  /** Raised by each conversion with its amount (`total_revenue`, lowered by refunds), in its transaction. */
  total_conversions: number;
  total_revenue: number;
  GSI1PK: string;
  GSI1SK: typeof LINK_SK;
  GSI2PK: string;
  GSI2SK: string;
  GSI3PK?: string;
  GSI3SK?: string;
  /**
   * The last action recorded through this item (`POST /action/referred_user`, see
   * `lib/db/actions.ts`): the write that raised `total_clicks` carries it, so the item's stream
   * record is that action's commit record. Every other write of the link removes it
   * (`CLEAR_LAST_ACTION`), and the stream consumer does once the action has its own item when it
   * is big, so a link carries a big one only for a moment and a small one until its next write.
   */
  last_action?: StoredLinkAction;
}

/**
 * `last_action` as stored: the id (the stream filter selects on it) and the action as JSON text,
 * since its metadata is any JSON the client sent, which a DynamoDB map could not always hold.
 */
export interface StoredLinkAction {
  id: number;
  json: string;
}

export function storedLinkAction(action: LinkAction): StoredLinkAction {
  return { id: action.id, json: stringifyJson(action) };
}

/**
 * A link as a read through an index gets it: the attributes the indexes project
 * (`LINK_INDEX_ATTRIBUTES`) and the table's keys, and nothing else, so no reader can come to rely
 * on an attribute that an index read would lack. No counters: they are read from the item.
 */
export type IndexedLink = Pick<StoredLinkItem, 'PK' | 'SK' | (typeof LINK_INDEX_ATTRIBUTES)[number]>;

/** A link as a read by key (or an update's `ALL_NEW`, or a stream image) gets it: with its counters. */
export type LinkItem = IndexedLink & Pick<StoredLinkItem, (typeof LINK_COUNTER_ATTRIBUTES)[number]>;

/** A read by key returns what `LinkItem` holds, whatever else the item holds. */
export const LINK_READ = (() => {
  const attributes = ['PK', 'SK', 'type', ...LINK_INDEX_ATTRIBUTES, ...LINK_COUNTER_ATTRIBUTES];
  return {
    ProjectionExpression: attributes.map((_, i) => `#a${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(attributes.map((name, i) => [`#a${i}`, name])),
  };
})();

/** Whether an item at a link's key is a link (not a code reservation). */
export const isLinkItem = (item: StoredItem | undefined): item is StoredItem => item?.type === 'link';

const field = decoder('link');

/** A link's position in the list it was read from: that index's sort key (`linkOrder`). */
export function linkOrderOf(item: StoredItem, index: TableIndex): string {
  return field.string(item, index.sortKey);
}

/**
 * A link read through an index, as `IndexedLink`: the attributes every reader uses, checked.
 * (Index reads lack `type`, so it is not checked here: `isLinkItem` tells a link from a
 * reservation where both can be read.)
 */
export function indexedLinkFromItem(item: StoredItem): IndexedLink {
  return {
    PK: field.string(item, 'PK'),
    SK: field.string(item, 'SK') === LINK_SK ? LINK_SK : field.fail(item, 'SK', `"${LINK_SK}"`),
    tenant: field.string(item, 'tenant'),
    id: field.number(item, 'id'),
    created_at: field.string(item, 'created_at'),
    referral_code: field.string(item, 'referral_code'),
    campaign_id: field.string(item, 'campaign_id'),
    campaign_url: field.string(item, 'campaign_url'),
    referrer_id: field.nullableString(item, 'referrer_id'),
  };
}

/** A counter a link written before it existed lacks: zero until its first raise (`ADD` starts at 0). */
const laterCounter = (item: StoredItem, attribute: string) =>
  item[attribute] === undefined ? 0 : field.number(item, attribute);

/** A link's counters, read from its item (no index has them), checked. */
export function linkCountersOf(
  item: StoredItem,
): Pick<LinkItem, 'total_clicks' | 'total_referrals' | 'total_conversions' | 'total_revenue'> {
  return {
    total_clicks: field.number(item, 'total_clicks'),
    total_referrals: field.number(item, 'total_referrals'),
    total_conversions: laterCounter(item, 'total_conversions'),
    total_revenue: laterCounter(item, 'total_revenue'),
  };
}

/** A link read by key, as an update's `ALL_NEW` or a stream image, as `LinkItem`, checked. */
export function linkFromItem(item: StoredItem): LinkItem {
  return { ...indexedLinkFromItem(item), ...linkCountersOf(item) };
}

/**
 * What a purged link leaves at its key: the code stays reserved for the tenant that issued it, so
 * no other tenant can take it over and receive the visits of the links already printed with it.
 * No index keys (it leaves every index) and no counters; every reader treats it as no link.
 */
export interface CodeReservationItem {
  PK: string;
  SK: typeof LINK_SK;
  type: typeof CODE_RESERVATION;
  tenant: string;
  /** ISO-8601 time of the purge that left it. */
  reserved_at: string;
}

export const CODE_RESERVATION = 'code_reservation';

export function codeReservation(tenant: string, code: string, now: Date): CodeReservationItem {
  return { ...linkKey(code), type: CODE_RESERVATION, tenant, reserved_at: now.toISOString() };
}

/**
 * Every other write of a link item ends with this, so a stream record shows `last_action` only
 * for the write that recorded it (a leftover one would only cost an idempotent no-op).
 */
export const CLEAR_LAST_ACTION_ATTRIBUTE = 'last_action';
export const CLEAR_LAST_ACTION = `REMOVE ${CLEAR_LAST_ACTION_ATTRIBUTE}`;

/** An action as its link's item carries it: everything of the action but the link itself. */
export interface LinkAction {
  id: number;
  /** ISO-8601 time of the action; `created_at` and the webhook's `timestamp` derive from it. */
  at: string;
  action_type: string;
  metadata: Record<string, unknown>;
  referred_user: {
    id: number;
    created_at: string;
    referred_user_id: string;
    click_id?: string;
    clicked_at?: string;
  } | null;
  /**
   * The request's `Idempotency-Key` (its hash) and request hash: the stream consumer stores the
   * answer under it with the action's item, and takes the key off the link's `idem_pending`.
   */
  idempotency?: { key_hash: string; request_hash: string };
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The action a link image carries in `last_action`, checked. Items written before the action was
 * stored as JSON text carry its fields as a map, read the same way.
 */
export function linkActionFromItem(item: StoredItem): LinkAction {
  const stored = item.last_action;
  if (!isObject(stored)) return field.fail(item, 'last_action', 'an object');
  let action: unknown = stored;
  if (stored.json !== undefined) {
    try {
      action = typeof stored.json === 'string' ? JSON.parse(stored.json) : undefined;
    } catch {
      action = undefined;
    }
  }
  if (!isObject(action)) return field.fail(item, 'last_action.json', 'a JSON object');
  const at = (name: string) => `last_action.${name}`;
  const { id, action_type, metadata, referred_user: user, idempotency: keyed } = action;
  if (typeof id !== 'number') return field.fail(item, at('id'), 'a number');
  if (typeof action.at !== 'string') return field.fail(item, at('at'), 'a string');
  if (typeof action_type !== 'string') return field.fail(item, at('action_type'), 'a string');
  if (!isObject(metadata)) return field.fail(item, at('metadata'), 'an object');
  let referredUser: LinkAction['referred_user'] = null;
  if (user !== null && user !== undefined) {
    if (
      !isObject(user) ||
      typeof user.id !== 'number' ||
      typeof user.created_at !== 'string' ||
      typeof user.referred_user_id !== 'string'
    ) {
      return field.fail(item, at('referred_user'), 'a referred user or null');
    }
    referredUser = { id: user.id, created_at: user.created_at, referred_user_id: user.referred_user_id };
    // A signup by click id: both are there, or neither (`newAction`).
    if (typeof user.click_id === 'string' && typeof user.clicked_at === 'string') {
      referredUser.click_id = user.click_id;
      referredUser.clicked_at = user.clicked_at;
    }
  }
  const decoded: LinkAction = { id, at: action.at, action_type, metadata, referred_user: referredUser };
  if (keyed !== undefined) {
    if (!isObject(keyed) || typeof keyed.key_hash !== 'string' || typeof keyed.request_hash !== 'string') {
      return field.fail(item, at('idempotency'), 'a key and request hash');
    }
    decoded.idempotency = { key_hash: keyed.key_hash, request_hash: keyed.request_hash };
  }
  return decoded;
}

export function toLink(
  item: LinkItem,
  increments: { clicks?: number; referrals?: number; conversions?: number; revenue?: number } = {},
): ReferralLink {
  return {
    id: item.id,
    created_at: item.created_at,
    referral_code: item.referral_code,
    campaign_id: item.campaign_id,
    referrer_id: item.referrer_id ?? null,
    referral_link: buildReferralLink(item.campaign_url, item.referral_code),
    share_url: buildShareUrl(config.publicBaseUrl, item.referral_code),
    total_clicks: item.total_clicks + (increments.clicks ?? 0),
    total_referrals: item.total_referrals + (increments.referrals ?? 0),
    total_conversions: item.total_conversions + (increments.conversions ?? 0),
    total_revenue: item.total_revenue + (increments.revenue ?? 0),
  };
}

/** A new link's stored item with its index keys: the one place that shapes a link item. */
export function newLinkItem(input: {
  tenant: string;
  campaignId: string;
  campaignUrl: string;
  id: number;
  code: string;
  referrerId: string | null;
  now: Date;
}): StoredLinkItem {
  const { tenant, id, code, now } = input;
  const campaignId = input.campaignId.toLowerCase();
  const order = linkOrder(now.getTime(), id);
  return {
    ...linkKey(code),
    type: 'link',
    tenant,
    id,
    created_at: formatTimestamp(now),
    created_ms: now.getTime(),
    referral_code: code,
    campaign_id: campaignId,
    campaign_url: input.campaignUrl,
    referrer_id: input.referrerId,
    total_clicks: 0,
    total_referrals: 0,
    total_conversions: 0,
    total_revenue: 0,
    GSI1PK: linkIdPartition(id),
    GSI1SK: LINK_SK,
    GSI2PK: campaignLinksPartition(tenant, campaignId),
    GSI2SK: order,
    ...(input.referrerId !== null
      ? { GSI3PK: referrerLinksPartition(tenant, campaignId, input.referrerId), GSI3SK: order }
      : {}),
  };
}
