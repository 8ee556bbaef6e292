/**
 * The referral link item: its stored shape, how a new one is built, and how it becomes the API
 * object. No I/O here, so tools (tests, the bench) can build items exactly as the API writes them.
 */

import { stringifyJson } from '../domain/json.ts';
import type { ReferralLink } from '../domain/link-schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { buildReferralLink } from '../domain/url.ts';
import type { LINK_INDEX_ATTRIBUTES } from '../table-definition.ts';
import { keys } from './keys.ts';

/** The stored link: the API object's fields plus what a write or a redirect needs without joins. */
export interface StoredLinkItem {
  PK: string;
  SK: 'LINK';
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
  GSI1PK: string;
  GSI1SK: 'LINK';
  GSI2PK: string;
  GSI2SK: string;
  GSI3PK?: string;
  GSI3SK?: string;
  /**
   * The last action recorded through this item (`POST /action/referred_user`, see
   * `lib/db/actions.ts`): the write that raised `total_clicks` carries it, so the item's stream
   * record is that action's commit record. The stream consumer removes it once the action has its
   * own item, and so does every other write of the link, so a link carries it only for a moment.
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
 * A link as every reader gets it, by key or through an index: the attributes the indexes project
 * (`LINK_INDEX_ATTRIBUTES`) and the table's keys, and nothing else, so no reader can come to rely
 * on an attribute that an index read would lack.
 */
export type LinkItem = Pick<StoredLinkItem, 'PK' | 'SK' | (typeof LINK_INDEX_ATTRIBUTES)[number]>;

/**
 * What a purged link leaves at its key: the code stays reserved for the tenant that issued it, so
 * no other tenant can take it over and receive the visits of the links already printed with it.
 * No index keys (it leaves every index) and no counters; every reader treats it as no link.
 */
export interface CodeReservationItem {
  PK: string;
  SK: 'LINK';
  type: typeof CODE_RESERVATION;
  tenant: string;
  /** ISO-8601 time of the purge that left it. */
  reserved_at: string;
}

export const CODE_RESERVATION = 'code_reservation';

export function codeReservation(tenant: string, code: string, now: Date): CodeReservationItem {
  return { ...keys.link(code), type: CODE_RESERVATION, tenant, reserved_at: now.toISOString() };
}

/**
 * Every other write of a link item ends with this, so a stream record shows `last_action` only
 * for the write that recorded it (a leftover one would only cost an idempotent no-op).
 */
export const CLEAR_LAST_ACTION = 'REMOVE last_action';

/** An action as its link's item carries it: everything of the action but the link itself. */
export interface LinkAction {
  id: number;
  /** ISO-8601 time of the action; `created_at` and the webhook's `timestamp` derive from it. */
  at: string;
  action_type: string;
  metadata: Record<string, unknown>;
  referred_user: { id: number; created_at: string; referred_user_id: string } | null;
  /**
   * The request's `Idempotency-Key` (its hash) and request hash: the stream consumer stores the
   * answer under it with the action's item, and takes the key off the link's `idem_pending`.
   */
  idempotency?: { key_hash: string; request_hash: string };
}

export function toLink(
  item: LinkItem,
  increments: { clicks?: number; referrals?: number } = {},
): ReferralLink {
  return {
    id: item.id,
    created_at: item.created_at,
    referral_code: item.referral_code,
    campaign_id: item.campaign_id,
    referrer_id: item.referrer_id ?? null,
    referral_link: buildReferralLink(item.campaign_url, item.referral_code),
    total_clicks: item.total_clicks + (increments.clicks ?? 0),
    total_referrals: item.total_referrals + (increments.referrals ?? 0),
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
  const order = keys.linkOrder(now.getTime(), id);
  return {
    ...keys.link(code),
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
    GSI1PK: keys.linkById(id),
    GSI1SK: 'LINK',
    GSI2PK: keys.campaignLinks(tenant, campaignId),
    GSI2SK: order,
    ...(input.referrerId !== null
      ? { GSI3PK: keys.referrerLinks(tenant, campaignId, input.referrerId), GSI3SK: order }
      : {}),
  };
}
