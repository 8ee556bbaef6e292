/**
 * The campaign item.
 *
 *   PK `T#<tenant>#C#<campaign id>`   SK `CAMPAIGN`
 *     GSI2  `T#<tenant>#CAMPAIGNS` / `<created ms>#<campaign id>`   the tenant's campaigns (newest first read backwards)
 *
 * The campaign's partition also holds its referred users and actions (their modules), so a
 * deleted campaign's records are one Query of the partition away (`lib/db/purge.ts`), and its
 * REMOVE stream record names the partition to purge (`parseCampaignPartition`).
 *
 * GSI2 is shared with the links (`T#<tenant>#C#<campaign>#LINKS`): a tenant name holds no `#`, so
 * the two kinds of partition can never meet. A campaign written before the list existed has no
 * GSI2 keys until `lib/db/migrations/campaign-list-backfill.ts` gives it its `campaignListKeys`.
 */
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS } from '../../domain/click-ids.ts';
import { DEFAULT_CURRENCY } from '../../domain/field-rules.ts';
import {
  DEFAULT_REVIEW_SIGNUPS_PER_HOUR,
  type RewardRule,
  type RuleSet,
  rulesInForce,
} from '../../domain/reward-rules.ts';
import type { Campaign } from '../../domain/schemas.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../domain/webhook-events.ts';
import { GSI2 } from '../../table-definition.ts';
import { decoder, type StoredItem } from './decode.ts';

/** The partition of a campaign and its records. Campaign ids are stored in lower case. */
export function campaignPartition(tenant: string, campaignId: string): string {
  return `T#${tenant}#C#${campaignId.toLowerCase()}`;
}

export const CAMPAIGN_SK = 'CAMPAIGN';

export function campaignKey(tenant: string, campaignId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: CAMPAIGN_SK } as const;
}

/** A tenant's campaigns: GSI2's partition key on campaign items. */
export const CAMPAIGN_LIST_INDEX = GSI2;
export const campaignListPartition = (tenant: string) => `T#${tenant}#CAMPAIGNS`;

/**
 * Sort key of the campaign list: creation time in milliseconds, then the id, so that a Query read
 * backwards (`ScanIndexForward: false`) is newest first, and campaigns of the same millisecond keep
 * one stable order.
 */
export const campaignOrder = (createdMs: number, campaignId: string) =>
  `${String(createdMs).padStart(15, '0')}#${campaignId.toLowerCase()}`;

/** What `campaignOrder` makes, and so what a campaign-list cursor may hold. */
export const CAMPAIGN_ORDER = /^(\d{15})#([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The campaign id at the end of a list position (`campaignOrder`). */
export function campaignIdOfOrder(order: string): string | undefined {
  return CAMPAIGN_ORDER.exec(order)?.[2];
}

/** The GSI2 keys that put a campaign in its tenant's list. */
export function campaignListKeys(tenant: string, campaignId: string, createdMs: number) {
  return {
    [CAMPAIGN_LIST_INDEX.partitionKey]: campaignListPartition(tenant),
    [CAMPAIGN_LIST_INDEX.sortKey]: campaignOrder(createdMs, campaignId),
  };
}

/** `T#<tenant>#C#<campaign>`: what a campaign's stream REMOVE record carries as its PK. */
export function parseCampaignPartition(pk: string): { tenant: string; campaignId: string } | undefined {
  const m = /^T#([A-Za-z0-9_.-]{1,64})#C#([0-9a-f-]{36})$/.exec(pk);
  return m ? { tenant: m[1]!, campaignId: m[2]! } : undefined;
}

/**
 * The stored campaign. `webhook_url` and `webhook_secret` are absent (not NULL) until first set:
 * `if_not_exists(webhook_secret, …)` in `updateCampaign` only fills a missing attribute. The
 * delivery keeps the slow-lane flag on the item too (`lib/db/webhook-targets.ts`): the URL it was set
 * for and since when.
 */
export interface CampaignItem
  extends Omit<
    Campaign,
    | 'webhook_url'
    | 'webhook_secret'
    | 'webhook_events'
    | 'webhook_status'
    | 'webhook_disabled_reason'
    | 'click_ids'
    | 'attribution_window_days'
    | 'reward_rules'
    | 'review_signups_per_hour'
  > {
  PK: string;
  SK: typeof CAMPAIGN_SK;
  type: 'campaign';
  tenant: string;
  /** The campaign list's keys (`campaignListKeys`); absent on a campaign not yet backfilled. */
  GSI2PK?: string;
  GSI2SK?: string;
  webhook_url?: string | null;
  webhook_secret?: string;
  webhook_slow_lane_url?: string;
  webhook_slow_lane_since?: string;
  /** The event types sent; absent: all of them. */
  webhook_events?: WebhookEventType[];
  /** Absent: enabled. */
  webhook_status?: 'disabled';
  webhook_disabled_reason?: string;
  /** The secret a rotation replaced, signed with as well until `webhook_previous_secret_expires_at` (ISO). */
  webhook_previous_secret?: string;
  webhook_previous_secret_expires_at?: string;
  /** The URL that has failed every attempt since `webhook_failing_since` (ISO); cleared by a success. */
  webhook_failing_url?: string;
  webhook_failing_since?: string;
  /** Absent on campaigns made before click ids: off, and a window of 90 days (`clickSettingsOf`). */
  click_ids?: boolean;
  attribution_window_days?: number;
  /**
   * Set by the campaign's first conversion, in its transaction (`lib/db/conversions.ts`): from then
   * on a PATCH of `currency` is 409. Not projected into GSI2, so setting it writes no index copy.
   */
  currency_locked?: true;
  /**
   * The reward rules' history (`withRuleSet`): each version and when it took effect, so a signup
   * or conversion replayed after a PATCH is rewarded by the rules of its commit. Absent: no rules.
   */
  reward_rule_sets?: RuleSet[];
  /** Absent on campaigns made before rewards: the default. */
  review_signups_per_hour?: number;
}

/** The attribute the first conversion sets: `currency` may change only while it is absent. */
export const CURRENCY_LOCK = 'currency_locked';

/** A stored campaign's currency: a campaign stored before currencies existed counts in the default. */
export const currencyOfItem = (item: StoredItem): string =>
  typeof item.currency === 'string' ? item.currency : DEFAULT_CURRENCY;

/**
 * A new campaign's item (it has no webhook yet), created at `now` (`created_at` is its second).
 * Settings left out (click ids, the window, the currency) are the defaults, and are stored so.
 */
export function newCampaignItem(
  tenant: string,
  campaign: Omit<
    Campaign,
    'click_ids' | 'attribution_window_days' | 'currency' | 'reward_rules' | 'review_signups_per_hour'
  > &
    Partial<
      Pick<
        Campaign,
        'click_ids' | 'attribution_window_days' | 'currency' | 'reward_rules' | 'review_signups_per_hour'
      >
    >,
  now: Date,
): CampaignItem {
  const rules = (campaign.reward_rules ?? []) as RewardRule[];
  return {
    ...campaignKey(tenant, campaign.id),
    ...campaignListKeys(tenant, campaign.id, now.getTime()),
    type: 'campaign',
    tenant,
    id: campaign.id,
    created_at: campaign.created_at,
    url: campaign.url,
    name: campaign.name,
    click_ids: campaign.click_ids ?? false,
    attribution_window_days: campaign.attribution_window_days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS,
    currency: campaign.currency ?? DEFAULT_CURRENCY,
    ...(rules.length > 0 ? { reward_rule_sets: [{ from_ms: now.getTime(), rules }] } : {}),
    review_signups_per_hour: campaign.review_signups_per_hour ?? DEFAULT_REVIEW_SIGNUPS_PER_HOUR,
  };
}

/**
 * The stored rule history, decoded defensively (it is the item's own data, but a stored rule that
 * does not read is a bug to see, not a reward to guess): undefined attribute, no rules.
 */
export function ruleSetsOfItem(item: StoredItem): RuleSet[] {
  const stored = item.reward_rule_sets;
  if (stored === undefined) return [];
  if (!Array.isArray(stored)) return field.fail(item, 'reward_rule_sets', 'a list of rule sets');
  return stored.map((set: unknown) => {
    const s = set as { from_ms?: unknown; rules?: unknown };
    if (typeof s?.from_ms !== 'number' || !Array.isArray(s.rules))
      return field.fail(item, 'reward_rule_sets', 'a list of rule sets');
    return { from_ms: s.from_ms, rules: s.rules.map((r) => ruleOf(item, r)) };
  });
}

function ruleOf(item: StoredItem, value: unknown): RewardRule {
  const r = value as Record<string, unknown>;
  const ok =
    typeof r?.id === 'string' &&
    (r.on === 'referred_user' || r.on === 'conversion') &&
    (r.recipient === 'referrer' || r.recipient === 'referred_user') &&
    (r.type === 'flat' || r.type === 'percent') &&
    typeof r.amount === 'number' &&
    typeof r.hold_days === 'number' &&
    (r.first_conversions === undefined || typeof r.first_conversions === 'number');
  if (!ok) return field.fail(item, 'reward_rule_sets', 'reward rules');
  return {
    id: r.id as string,
    on: r.on as RewardRule['on'],
    recipient: r.recipient as RewardRule['recipient'],
    type: r.type as RewardRule['type'],
    amount: r.amount as number,
    ...(r.first_conversions !== undefined ? { first_conversions: r.first_conversions as number } : {}),
    hold_days: r.hold_days as number,
  };
}

/** The rules of the latest version: what the campaign shows, and what rewards events from now on. */
export const currentRulesOfItem = (item: StoredItem): RewardRule[] =>
  rulesInForce(ruleSetsOfItem(item), Number.MAX_SAFE_INTEGER);

export const reviewSignupsPerHourOf = (item: StoredItem): number => {
  const value = item.review_signups_per_hour;
  return typeof value === 'number' && Number.isInteger(value) ? value : DEFAULT_REVIEW_SIGNUPS_PER_HOUR;
};

/** What the redirect and a signup by click id need of a campaign (`click_ids`, the window). */
export interface ClickSettings {
  clickIds: boolean;
  windowDays: number;
}

/** The campaign attributes `clickSettingsOf` reads: a read's projection. */
export const CLICK_SETTINGS_ATTRIBUTES = ['click_ids', 'attribution_window_days'] as const;

/** A campaign item's click settings; an item written before they existed has the defaults. */
export function clickSettingsOf(item: StoredItem): ClickSettings {
  const days = item.attribution_window_days;
  return {
    clickIds: item.click_ids === true,
    windowDays: typeof days === 'number' && Number.isInteger(days) ? days : DEFAULT_ATTRIBUTION_WINDOW_DAYS,
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
    webhook_events: webhookEventsOf(item),
    webhook_status: item.webhook_status === 'disabled' ? 'disabled' : 'enabled',
    webhook_disabled_reason:
      item.webhook_status === 'disabled'
        ? (field.nullableString(item, 'webhook_disabled_reason') ?? null)
        : null,
    click_ids: clickSettingsOf(item).clickIds,
    attribution_window_days: clickSettingsOf(item).windowDays,
    currency: currencyOfItem(item),
    reward_rules: currentRulesOfItem(item),
    review_signups_per_hour: reviewSignupsPerHourOf(item),
  };
}

/** The subscribed event types, in the API's order; all of them when the item names none. */
function webhookEventsOf(item: StoredItem): WebhookEventType[] {
  const stored = item.webhook_events;
  if (!Array.isArray(stored) || stored.length === 0) return [...WEBHOOK_EVENT_TYPES];
  return WEBHOOK_EVENT_TYPES.filter((t) => stored.includes(t));
}

/** The campaign attributes delivery reads (`webhookOfItem`), one GetItem's projection. */
export const WEBHOOK_TARGET_ATTRIBUTES = [
  'webhook_url',
  'webhook_secret',
  'webhook_slow_lane_url',
  'webhook_events',
  'webhook_status',
  'webhook_previous_secret',
  'webhook_previous_secret_expires_at',
  'webhook_failing_url',
  'webhook_failing_since',
] as const;

/**
 * The secrets a delivery at `now` signs with: the current one, and the one a rotation replaced
 * while it has not expired.
 */
export function signingSecretsOf(item: StoredItem | undefined, now = new Date()): string[] {
  const secret = item?.webhook_secret;
  if (typeof secret !== 'string' || secret === '') return [];
  const previous = item?.webhook_previous_secret;
  const until = item?.webhook_previous_secret_expires_at;
  const current =
    typeof previous === 'string' && typeof until === 'string' && Date.parse(until) > now.getTime();
  return current ? [secret, previous] : [secret];
}

/**
 * The campaign's webhook as delivery reads it (a projection of the item): its URL and secret when
 * both are set, and whether that URL is the one in the slow lane.
 */
export function webhookOfItem(
  item: StoredItem | undefined,
  now = new Date(),
):
  | {
      url: string;
      secret: string;
      secrets: string[];
      slowLane: boolean;
      events: WebhookEventType[];
      disabled: boolean;
      failingSince?: string;
    }
  | undefined {
  const url = item?.webhook_url;
  const secret = item?.webhook_secret;
  if (!item || typeof url !== 'string' || url === '' || typeof secret !== 'string' || secret === '')
    return undefined;
  const failingSince =
    item.webhook_failing_url === url && typeof item.webhook_failing_since === 'string'
      ? item.webhook_failing_since
      : undefined;
  return {
    url,
    secret,
    secrets: signingSecretsOf(item, now),
    slowLane: item.webhook_slow_lane_url === url,
    events: webhookEventsOf(item),
    disabled: item.webhook_status === 'disabled',
    ...(failingSince ? { failingSince } : {}),
  };
}
