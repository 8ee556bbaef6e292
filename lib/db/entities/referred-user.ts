/**
 * The referred user item (a signup through a link).
 *
 *   PK `T#<tenant>#C#<campaign>`   SK `RU#<referred_user_id>`   no index keys
 *
 * In its campaign's partition, so a referred user id is unique per campaign and goes with the
 * campaign's purge. It stores its own fields and its link's code and id; the link object in the
 * API answer is read live.
 */
import type { ReferredUser } from '../../domain/link-schemas.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';
import { type LinkItem, toLink } from './link.ts';

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
}

/** A referred user's click, as the item and the API object carry it. */
export type ReferredUserClick = Pick<ReferredUserItem, 'click_id' | 'clicked_at'>;

/** A new referred user of `link` (its campaign is the link's). */
export function newReferredUserItem(
  link: LinkItem,
  input: { id: number; referredUserId: string; now: Date; click?: { id: string; clickedAt: string } },
): ReferredUserItem {
  return {
    ...referredUserKey(link.tenant, link.campaign_id, input.referredUserId),
    type: 'referred_user',
    tenant: link.tenant,
    campaign_id: link.campaign_id,
    id: input.id,
    created_at: formatTimestamp(input.now),
    referred_user_id: input.referredUserId,
    link_code: link.referral_code,
    link_id: link.id,
    ...(input.click ? { click_id: input.click.id, clicked_at: input.click.clickedAt } : {}),
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
