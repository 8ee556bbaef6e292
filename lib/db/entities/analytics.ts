/**
 * Analytics items: what the table stream's rollup consumer (`lib/analytics/rollups.ts`) derives
 * from the event items, and what endpoints 16 and 17 read.
 *
 *   series item     PK `T#<tenant>#C#<campaign>`  SK `AN#<H|D>#<scope>#<bucket>`
 *   top item        PK `T#<tenant>#C#<campaign>`  SK `TOP#<by>#<metric>#<entity>`
 *     GSI4  `T#<tenant>#C#<campaign>#TOP#<by>#<metric>` / `<value, 15 digits>#<inverted reach ms>`
 *   checkpoint      PK `ROLLUP#<stream shard id>`  SK `CHECKPOINT`           TTL `expires_at`
 *
 * Series and top items sit in their campaign's partition, so the campaign's purge removes them
 * with the rest. A series item holds one hour (`H`, bucket `YYYY-MM-DDTHH`) or one day (`D`,
 * bucket `YYYY-MM-DD`) of one scope: the campaign (`C`), a link (`L<id>`) or a referrer
 * (`R<hash>`): a range of buckets is one Query between two sort keys. Referrer ids are any 1–256
 * characters, so their scope is a fixed-length hash (no separator inside it can make one
 * referrer's range hold another's items, and the key stays far below 1,024 bytes).
 *
 * A top item holds one all-time metric of one link or referrer; GSI4 sorts a campaign's items of
 * one ranking by value, then by earliest reach (the time the value was reached), so endpoint 17
 * is one Query, read in index order.
 */
import { createHash } from 'node:crypto';
import { GSI4 } from '../../table-definition.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

export type Granularity = 'hour' | 'day';
/** Series attributes: visits, unique visits, bot visits, referred users, actions (non-visit). */
export const SERIES_METRICS = ['visits', 'unique_visits', 'bot_visits', 'referred_users', 'actions'] as const;
export type SeriesMetric = (typeof SERIES_METRICS)[number];
/** Actions by type are attributes of their own, `t:<action type>` (types are any 1–64 chars). */
export const ACTION_TYPE_PREFIX = 't:';

export type Scope =
  | { kind: 'campaign' }
  | { kind: 'link'; linkId: number }
  | { kind: 'referrer'; referrerId: string };

export const referrerHash = (referrerId: string) =>
  createHash('sha256').update(referrerId, 'utf8').digest('base64url');

function scopeKey(scope: Scope): string {
  if (scope.kind === 'campaign') return 'C';
  if (scope.kind === 'link') return `L${scope.linkId}`;
  return `R${referrerHash(scope.referrerId)}`;
}

const GRANULARITY_KEY: Record<Granularity, string> = { hour: 'H', day: 'D' };

/** The bucket an instant falls in: `YYYY-MM-DDTHH` for hours, `YYYY-MM-DD` for days (UTC). */
export function bucketOf(at: Date, granularity: Granularity): string {
  const iso = at.toISOString();
  return granularity === 'hour' ? iso.slice(0, 13) : iso.slice(0, 10);
}

export const SERIES_SK_PREFIX = 'AN#';

export function seriesSortKey(scope: Scope, granularity: Granularity, bucket: string): string {
  return `${SERIES_SK_PREFIX}${GRANULARITY_KEY[granularity]}#${scopeKey(scope)}#${bucket}`;
}

export function seriesKey(
  tenant: string,
  campaignId: string,
  scope: Scope,
  granularity: Granularity,
  bucket: string,
) {
  return { PK: campaignPartition(tenant, campaignId), SK: seriesSortKey(scope, granularity, bucket) };
}

/** A series item as endpoint 16 reads it. */
export interface SeriesPoint {
  bucket: string;
  visits: number;
  unique_visits: number;
  bot_visits: number;
  referred_users: number;
  actions: number;
  actions_by_type: Record<string, number>;
}

const seriesField = decoder('analytics series');

export function seriesPointFromItem(item: StoredItem): SeriesPoint {
  const sk = seriesField.string(item, 'SK');
  const bucket = sk.slice(sk.lastIndexOf('#') + 1);
  const count = (name: string) => (item[name] === undefined ? 0 : seriesField.number(item, name));
  const byType: Record<string, number> = {};
  for (const [name, value] of Object.entries(item)) {
    if (!name.startsWith(ACTION_TYPE_PREFIX)) continue;
    if (typeof value !== 'number') seriesField.fail(item, name, 'a number');
    byType[name.slice(ACTION_TYPE_PREFIX.length)] = value as number;
  }
  return {
    bucket,
    visits: count('visits'),
    unique_visits: count('unique_visits'),
    bot_visits: count('bot_visits'),
    referred_users: count('referred_users'),
    actions: count('actions'),
    actions_by_type: byType,
  };
}

/** Rankings of endpoint 17. */
export const TOP_METRICS = ['referred_users', 'visits', 'unique_visits', 'actions'] as const;
export type TopMetric = (typeof TOP_METRICS)[number];
export type TopBy = 'referrer' | 'referral_link';

const TOP_BY_KEY: Record<TopBy, string> = { referrer: 'R', referral_link: 'L' };
const TOP_METRIC_KEY: Record<TopMetric, string> = {
  referred_users: 'r',
  visits: 'v',
  unique_visits: 'u',
  actions: 'a',
};

export type TopEntity =
  | { by: 'referrer'; referrerId: string }
  | { by: 'referral_link'; linkId: number; code: string; url: string | null };

const entityKey = (entity: TopEntity) =>
  entity.by === 'referrer' ? referrerHash(entity.referrerId) : String(entity.linkId);

export function topKey(tenant: string, campaignId: string, entity: TopEntity, metric: TopMetric) {
  return {
    PK: campaignPartition(tenant, campaignId),
    SK: `TOP#${TOP_BY_KEY[entity.by]}#${TOP_METRIC_KEY[metric]}#${entityKey(entity)}`,
  };
}

/** GSI4's partition: one ranking of one campaign. */
export function topRankingPartition(
  tenant: string,
  campaignId: string,
  by: TopBy,
  metric: TopMetric,
): string {
  return `${campaignPartition(tenant, campaignId)}#TOP#${TOP_BY_KEY[by]}#${TOP_METRIC_KEY[metric]}`;
}

export const TOP_INDEX = GSI4;
/** Reach times are inverted so that, read from the highest sort key down, earlier reach comes first. */
const REACH_LIMIT_MS = 9_999_999_999_999;

/** GSI4's sort key: the value, then the inverted reach time, both fixed-width digits. */
export function topScore(value: number, reachMs: number): string {
  return `${String(value).padStart(15, '0')}#${String(REACH_LIMIT_MS - reachMs).padStart(13, '0')}`;
}

/** The attributes a top item stores besides its keys (the labels endpoint 17 answers with). */
export function topAttributes(
  tenant: string,
  campaignId: string,
  entity: TopEntity,
  metric: TopMetric,
  value: number,
  reachMs: number,
) {
  return {
    type: 'analytics_top',
    value,
    reach_ms: reachMs,
    GSI4PK: topRankingPartition(tenant, campaignId, entity.by, metric),
    GSI4SK: topScore(value, reachMs),
    ...(entity.by === 'referrer'
      ? { referrer_id: entity.referrerId }
      : { link_id: entity.linkId, referral_code: entity.code, referral_link: entity.url }),
  };
}

/** A top item as endpoint 17 reads it from GSI4. */
export interface TopRow {
  value: number;
  referrer_id?: string;
  link_id?: number;
  referral_code?: string;
  referral_link?: string | null;
}

const topField = decoder('analytics top');

export function topRowFromItem(item: StoredItem): TopRow {
  const value = topField.number(item, 'value');
  const referrer = topField.optionalString(item, 'referrer_id');
  if (referrer !== undefined) return { value, referrer_id: referrer };
  return {
    value,
    link_id: topField.number(item, 'link_id'),
    referral_code: topField.string(item, 'referral_code'),
    referral_link: topField.nullableString(item, 'referral_link'),
  };
}

/** A top item's current value (0 when absent), as the consumer reads it before raising it. */
export function topValueOf(item: StoredItem | undefined): number {
  return item === undefined ? 0 : topField.number(item, 'value');
}

/**
 * The rollup consumer's checkpoint of one stream shard: the last sequence number whose
 * contribution is in the rollups. Written in the same transaction as that contribution, so a
 * stream batch Lambda delivers again (a retry, a restarted local stack) is counted once.
 * Stream records live 24 h; the checkpoint of a closed shard expires two days after its last use.
 */
export function checkpointKey(shardId: string) {
  return { PK: `ROLLUP#${shardId}`, SK: 'CHECKPOINT' } as const;
}
export const CHECKPOINT_TTL_SECONDS = 2 * 24 * 60 * 60;
/** Sequence numbers are digit strings of varying length: stored zero-padded so they compare as text. */
export const padSequence = (sequence: string) => sequence.padStart(40, '0');

const checkpointField = decoder('rollup checkpoint');
export function checkpointOf(item: StoredItem | undefined): string | undefined {
  return item === undefined ? undefined : checkpointField.string(item, 'sequence');
}
