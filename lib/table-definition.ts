/**
 * The single table's shape, shared by the CDK stack and the local stack so that both create the
 * same keys, indexes, stream and TTL attribute. Plain data: no CDK or SDK imports here.
 *
 * Which items the table holds and how each is keyed is not described here: each entity module of
 * `lib/db/entities/` owns its keys (the one description of the key layout), and names the index
 * it reads through by the constants below.
 */
/**
 * The link attributes a read through an index returns besides the keys: what the API object needs
 * (`toLink`) and what its readers check (`tenant`, `id`), but the counters. Nothing else of a link
 * is copied into the indexes, so attributes that change with every interaction (its counters,
 * `last_action`) cost no index storage and no index write: a counter's update writes the link
 * item alone, where three index copies would bill three more write units each time. Index readers
 * read the counters from the items (`lib/db/links.ts`). `lib/db/entities/link.ts` derives the
 * types of a link as readers see it from these.
 */
export const LINK_INDEX_ATTRIBUTES = [
  'tenant',
  'id',
  'created_at',
  'referral_code',
  'campaign_id',
  'campaign_url',
  'referrer_id',
] as const;

/** A link's counters: on its item only, never in an index (see `LINK_INDEX_ATTRIBUTES`). */
export const LINK_COUNTER_ATTRIBUTES = [
  'total_clicks',
  'total_referrals',
  'total_conversions',
  'total_revenue',
] as const;

/**
 * The campaign attributes GSI2 also projects, for the tenant's campaign list
 * (`lib/db/entities/campaign.ts`): with the links' `id` and `created_at`, the API's campaign object
 * as first deployed (`campaignFromItem`; what it gained since is `CAMPAIGN_ITEM_ATTRIBUTES`).
 * The delivery state a campaign item also holds (slow lane, failing since, previous secret) is not
 * copied: the delivery writes it often, and an update that changes no projected attribute costs
 * no index write.
 */
export const CAMPAIGN_LIST_ATTRIBUTES = [
  'url',
  'name',
  'webhook_url',
  'webhook_secret',
  'webhook_events',
  'webhook_status',
  'webhook_disabled_reason',
] as const;

/**
 * Campaign attributes added after GSI2 was first deployed. An index's projection cannot change in
 * place (CloudFormation would have to delete and re-create the index in one update, which DynamoDB
 * refuses), so the projections above are frozen (`test/unit/index-projections.test.ts`) and the
 * campaign list reads these from the items: one BatchGetItem per 100 campaigns of a page.
 */
export const CAMPAIGN_ITEM_ATTRIBUTES = [
  'click_ids',
  'attribution_window_days',
  'currency',
  'reward_rule_sets',
  'review_signups_per_hour',
] as const;

/** What the api-key CLI lists through GSI1 (`lib/db/api-keys.ts`); `tenant`, `created_at` come with the links'. */
const API_KEY_INDEX_ATTRIBUTES = ['key_hash', 'revoked_at'] as const;

/** GSI1: a link by id (`lib/db/entities/link.ts`), and the api-key list (`api-key.ts`). */
export const GSI1 = {
  indexName: 'GSI1',
  partitionKey: 'GSI1PK',
  sortKey: 'GSI1SK',
  projectedAttributes: [...LINK_INDEX_ATTRIBUTES, ...API_KEY_INDEX_ATTRIBUTES],
} as const;

/**
 * GSI2, overloaded: a campaign's links, oldest first (the list and the purge), and, in partitions
 * of their own, a tenant's campaigns, newest first (the campaign list).
 */
export const GSI2 = {
  indexName: 'GSI2',
  partitionKey: 'GSI2PK',
  sortKey: 'GSI2SK',
  projectedAttributes: [...LINK_INDEX_ATTRIBUTES, ...CAMPAIGN_LIST_ATTRIBUTES],
} as const;

/** GSI3: a referrer's links in a campaign, oldest first (sparse: links with a referrer). */
export const GSI3 = {
  indexName: 'GSI3',
  partitionKey: 'GSI3PK',
  sortKey: 'GSI3SK',
  projectedAttributes: LINK_INDEX_ATTRIBUTES,
} as const;

export const tableDefinition = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Items with this epoch-seconds attribute are removed by DynamoDB TTL. */
  ttlAttribute: 'expires_at',
  /** Stream view type: the webhook pipeline needs the new image of inserted items. */
  streamViewType: 'NEW_IMAGE',
  /**
   * Every index projects the table's and its own keys plus `projectedAttributes` (INCLUDE), never
   * ALL. GSI1: a link by id, and the api-key list. GSI2: a campaign's links (list and purge), and
   * a tenant's campaigns. GSI3: a referrer's links. (GSI4, a campaign's rankings until issue 27,
   * is gone: a ranking is one item now, `lib/analytics/boards.ts`.)
   */
  globalSecondaryIndexes: [GSI1, GSI2, GSI3],
} as const;

export type IndexName = (typeof tableDefinition.globalSecondaryIndexes)[number]['indexName'];

/** The index named `N` as its readers use it: its name and its key attributes. */
export type TableIndex<N extends IndexName = IndexName> = Extract<
  (typeof tableDefinition.globalSecondaryIndexes)[number],
  { indexName: N }
>;
