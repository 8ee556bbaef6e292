/**
 * The referred user item (a signup through a link).
 *
 *   PK `T#<tenant>#C#<campaign>`   SK `RU#<referred_user_id>`
 *   GSI2 `T#<tenant>#C#<campaign>#RU`              / `<created ms, 15 digits>#<id, 16 digits>`
 *   GSI1 `T#<tenant>#C#<campaign>#RU#L<link id>`   / the same
 *   GSI3 `T#<tenant>#C#<campaign>#RU#R#<referrer>` / the same (only when the link has a referrer)
 *
 * In its campaign's partition, so a referred user id is unique per campaign and goes with the
 * campaign's purge (its index copies with it). It stores its own fields and its link's code and
 * id; the link object in the API answer is read live. The three index keys are the campaign's
 * referred-user list (endpoint 33) whole, per link and per referrer, each read backwards: newest
 * first in one Query. They overload the link indexes rather than adding one: every partition
 * starts `T#<tenant>#C#<campaign>#RU`, which no link, campaign or api-key partition can (see
 * docs/data-model.md). The indexes project `referral_code` (a link attribute), so the item keeps
 * its link's code under that name too: a list page reads the links by key without another lookup.
 */
import type { ReferredUser } from '../../domain/link-schemas.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { GSI1, GSI2, GSI3 } from '../../table-definition.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';
import { type LinkItem, linkOrder, toLink } from './link.ts';

/** Which referred users a list holds: the campaign's, one link's or one referrer's. */
export type ReferredUserFilter =
  | { kind: 'campaign' }
  | { kind: 'link'; linkId: number }
  | { kind: 'referrer'; referrerId: string };

export const REFERRED_USER_LIST_INDEX = { campaign: GSI2, link: GSI1, referrer: GSI3 } as const;

/** The index partition of one referred-user list (see the header). */
export function referredUserListPartition(tenant: string, campaignId: string, filter: ReferredUserFilter) {
  const base = `${campaignPartition(tenant, campaignId)}#RU`;
  if (filter.kind === 'link') return `${base}#L${filter.linkId}`;
  if (filter.kind === 'referrer') return `${base}#R#${filter.referrerId}`;
  return base;
}

/** A referred user's keys in the three lists: creation time then id, like the link lists. */
export function referredUserListKeys(
  tenant: string,
  campaignId: string,
  input: { id: number; createdMs: number; linkId: number; referrerId: string | null },
): Record<string, string> {
  const order = linkOrder(input.createdMs, input.id);
  const list = (filter: ReferredUserFilter) => referredUserListPartition(tenant, campaignId, filter);
  return {
    [GSI2.partitionKey]: list({ kind: 'campaign' }),
    [GSI2.sortKey]: order,
    [GSI1.partitionKey]: list({ kind: 'link', linkId: input.linkId }),
    [GSI1.sortKey]: order,
    ...(input.referrerId !== null
      ? {
          [GSI3.partitionKey]: list({ kind: 'referrer', referrerId: input.referrerId }),
          [GSI3.sortKey]: order,
        }
      : {}),
  };
}

export function referredUserKey(tenant: string, campaignId: string, referredUserId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: `RU#${referredUserId}` };
}

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
  /** Set on a signup by click id: the click id and its visit's time (contract timestamp). */
  click_id?: string;
  clicked_at?: string;
  /** The link's code again, under the name the indexes project (the list reads it there). */
  referral_code: string;
}

/** A referred user's click, as the item and the API object carry it. */
export type ReferredUserClick = Pick<ReferredUserItem, 'click_id' | 'clicked_at'>;

/** A new referred user of `link` (its campaign is the link's). */
export function newReferredUserItem(
  link: LinkItem,
  input: {
    id: number;
    referredUserId: string;
    now: Date;
    click?: { id: string; clickedAt: string; visitor?: string };
  },
): ReferredUserItem & Record<string, unknown> {
  return {
    ...referredUserKey(link.tenant, link.campaign_id, input.referredUserId),
    ...referredUserListKeys(link.tenant, link.campaign_id, {
      id: input.id,
      createdMs: input.now.getTime(),
      linkId: link.id,
      referrerId: link.referrer_id,
    }),
    type: 'referred_user',
    tenant: link.tenant,
    campaign_id: link.campaign_id,
    id: input.id,
    created_at: formatTimestamp(input.now),
    referred_user_id: input.referredUserId,
    link_code: link.referral_code,
    link_id: link.id,
    ...(input.click ? { click_id: input.click.id, clicked_at: input.click.clickedAt } : {}),
    // The click's visitor (the day's visitor hash), for the rewards' `repeat_visitor` signal.
    ...(input.click?.visitor ? { visitor: input.click.visitor } : {}),
    referral_code: link.referral_code,
  };
}

const field = decoder('referred user');

export function referredUserFromItem(item: StoredItem): ReferredUserItem {
  return {
    PK: field.string(item, 'PK'),
    SK: field.string(item, 'SK'),
    type: 'referred_user',
    tenant: field.string(item, 'tenant'),
    campaign_id: field.string(item, 'campaign_id'),
    id: field.number(item, 'id'),
    created_at: field.string(item, 'created_at'),
    referred_user_id: field.string(item, 'referred_user_id'),
    link_code: field.string(item, 'link_code'),
    link_id: field.number(item, 'link_id'),
    ...clickOf(item),
    // Items written before the list existed keep the code as `link_code` alone.
    referral_code:
      typeof item.referral_code === 'string' ? item.referral_code : field.string(item, 'link_code'),
  };
}

/**
 * A referred user read through a list index: its id, time and `referred_user_id` (the table's
 * sort key, which every index copy holds), and its link's code; its list position.
 */
export function listedReferredUserFromItem(item: StoredItem) {
  const sk = field.string(item, 'SK');
  if (!sk.startsWith('RU#')) field.fail(item, 'SK', 'a referred user key');
  return {
    id: field.number(item, 'id'),
    created_at: field.string(item, 'created_at'),
    referred_user_id: sk.slice('RU#'.length),
    referral_code: field.string(item, 'referral_code'),
  };
}

function clickOf(item: StoredItem): ReferredUserClick {
  const id = field.optionalString(item, 'click_id');
  const at = field.optionalString(item, 'clicked_at');
  return id !== undefined && at !== undefined ? { click_id: id, clicked_at: at } : {};
}

export function toReferredUser(
  item: Pick<ReferredUserItem, 'id' | 'created_at' | 'referred_user_id'> & ReferredUserClick,
  link: LinkItem,
  increments = {},
): ReferredUser {
  return {
    id: item.id,
    created_at: item.created_at,
    referral_link: toLink(link, increments),
    referred_user_id: item.referred_user_id,
    click_id: item.click_id ?? null,
    clicked_at: item.clicked_at ?? null,
  };
}
