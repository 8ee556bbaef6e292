/**
 * The campaign item.
 *
 *   PK `T#<tenant>#C#<campaign id>`   SK `CAMPAIGN`   no index keys
 *
 * The campaign's partition also holds its referred users and actions (their modules), so a
 * deleted campaign's records are one Query of the partition away (`lib/db/purge.ts`), and its
 * REMOVE stream record names the partition to purge (`parseCampaignPartition`).
 */
import type { Campaign } from '../../domain/schemas.ts';
import { decoder, type StoredItem } from './decode.ts';

/** The partition of a campaign and its records. Campaign ids are stored in lower case. */
export function campaignPartition(tenant: string, campaignId: string): string {
  return `T#${tenant}#C#${campaignId.toLowerCase()}`;
}

export const CAMPAIGN_SK = 'CAMPAIGN';

export function campaignKey(tenant: string, campaignId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: CAMPAIGN_SK } as const;
}

/** `T#<tenant>#C#<campaign>`: what a campaign's stream REMOVE record carries as its PK. */
export function parseCampaignPartition(pk: string): { tenant: string; campaignId: string } | undefined {
  const m = /^T#([A-Za-z0-9_.-]{1,64})#C#([0-9a-f-]{36})$/.exec(pk);
  return m ? { tenant: m[1]!, campaignId: m[2]! } : undefined;
}

/**
 * The stored campaign. `webhook_url` and `webhook_secret` are absent (not NULL) until first set:
 * `if_not_exists(webhook_secret, …)` in `updateCampaign` only fills a missing attribute. The
 * delivery keeps the slow-lane flag on the item too (`lib/webhooks/target.ts`): the URL it was set
 * for and since when.
 */
export interface CampaignItem extends Omit<Campaign, 'webhook_url' | 'webhook_secret'> {
  PK: string;
  SK: typeof CAMPAIGN_SK;
  type: 'campaign';
  tenant: string;
  webhook_url?: string | null;
  webhook_secret?: string;
  webhook_slow_lane_url?: string;
  webhook_slow_lane_since?: string;
}

/** A new campaign's item (it has no webhook yet). */
export function newCampaignItem(tenant: string, campaign: Campaign): CampaignItem {
  return {
    ...campaignKey(tenant, campaign.id),
    type: 'campaign',
    tenant,
    id: campaign.id,
    created_at: campaign.created_at,
    url: campaign.url,
    name: campaign.name,
  };
}

const field = decoder('campaign');

/** A stored campaign (whole, or `ALL_NEW` of an update) as the API object. */
export function campaignFromItem(item: StoredItem): Campaign {
  return {
    id: field.string(item, 'id'),
    created_at: field.string(item, 'created_at'),
    url: field.string(item, 'url'),
    name: field.string(item, 'name'),
    webhook_url: field.nullableString(item, 'webhook_url'),
    webhook_secret: field.nullableString(item, 'webhook_secret'),
  };
}

/**
 * The campaign's webhook as delivery reads it (a projection of the item): its URL and secret when
 * both are set, and whether that URL is the one in the slow lane.
 */
export function webhookOfItem(
  item: StoredItem | undefined,
): { url: string; secret: string; slowLane: boolean } | undefined {
  const url = item?.webhook_url;
  const secret = item?.webhook_secret;
  if (typeof url !== 'string' || url === '' || typeof secret !== 'string' || secret === '') return undefined;
  return { url, secret, slowLane: item?.webhook_slow_lane_url === url };
}
