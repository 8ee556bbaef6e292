/**
 * Analytics items: what the table stream's rollup consumer (`lib/analytics/rollups.ts`) derives
 * from the event items, and what endpoints 16 and 17 read.
 *
 *   series item     PK `T#<tenant>#C#<campaign>`  SK `AN#S#<scope>#<YYYY-MM-DD>`
 *   top item        PK `T#<tenant>#C#<campaign>`  SK `TOP#<by>#<metric>#<entity>`
 *     GSI4  `T#<tenant>#C#<campaign>#TOP#<by>#<metric>` / `<value, 15 digits>#<inverted reach ms>`
 *   checkpoint      PK `ROLLUP#<stream shard id>`  SK `CHECKPOINT`           TTL `expires_at`
 *
 * Series and top items sit in their campaign's partition, so the campaign's purge removes them
 * with the rest. A series item holds one UTC day of one scope, hour by hour: the campaign (`C`), a
 * link (`L<id>`) or a referrer (`R<hash>`). Each count is an attribute named by its hour and its
 * metric (`seriesAttribute`): `07v` is the visits of 07:00–08:00, `07t:purchase` the actions of
 * type `purchase`; only counts above zero exist. A day's point is the sum of its hours. So an
 * interaction updates one item per scope, not an hour item and a day item, and a range is one
 * Query between two sort keys: 7 days of hours are 8 items, not 168. The short names keep a busy
 * day's item under 1 KB (24 hours × 5 metrics at about 7 bytes each), one write unit.
 *
 * Referrer ids are any 1–256 characters, so their scope is a fixed-length hash (no separator inside
 * it can make one referrer's range hold another's items, and the key stays far below 1,024 bytes).
 *
 * Until issue 14's cost work, an hour (`AN#H#`) and a day (`AN#D#`) were items of their own, with
 * the counts under their metric names; nothing writes or reads those any more (the README's
 * decisions say what became of them).
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
/** A metric's letter in a series item's attribute names (`<hour><letter>`). */
const METRIC_LETTER: Record<SeriesMetric, string> = {
  visits: 'v',
  unique_visits: 'u',
  bot_visits: 'b',
  referred_users: 'r',
  actions: 'a',
};
const LETTER_METRIC = new Map(Object.entries(METRIC_LETTER).map(([m, l]) => [l, m as SeriesMetric]));
/** Actions by type are attributes of their own, `<hour>t:<action type>` (types are any 1–64 chars). */
export const ACTION_TYPE_PREFIX = 't:';

/** What a series item counts: one of the metrics, or the actions of one type. */
export type SeriesCount = SeriesMetric | { actionType: string };

/** The attribute of a series item that holds `count` for hour `hour` (0–23) of its day. */
export function seriesAttribute(hour: number, count: SeriesCount): string {
  const hh = String(hour).padStart(2, '0');
  return typeof count === 'string'
    ? `${hh}${METRIC_LETTER[count]}`
    : `${hh}${ACTION_TYPE_PREFIX}${count.actionType}`;
}

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

/** The bucket an instant falls in: `YYYY-MM-DDTHH` for hours, `YYYY-MM-DD` for days (UTC). */
export function bucketOf(at: Date, granularity: Granularity): string {
  const iso = at.toISOString();
  return granularity === 'hour' ? iso.slice(0, 13) : iso.slice(0, 10);
}

export const SERIES_SK_PREFIX = 'AN#S#';

/**
 * The update that adds `adds` (attribute name → count) to a series item, creating it when missing:
 * what the rollup consumer writes, and what the migration of the old layout writes.
 */
export function seriesUpdate(adds: Iterable<readonly [string, number]>) {
  const names: Record<string, string> = { '#type': 'type' };
  const values: Record<string, unknown> = { ':type': 'analytics_series' };
  const parts: string[] = [];
  for (const [name, n] of adds) {
    const i = parts.length;
    names[`#a${i}`] = name;
    values[`:a${i}`] = n;
    parts.push(`#a${i} :a${i}`);
  }
  return {
    UpdateExpression: `SET #type = :type${parts.length > 0 ? ` ADD ${parts.join(', ')}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** A series item's sort key: its scope and its day (`YYYY-MM-DD`). */
export function seriesSortKey(scope: Scope, day: string): string {
  return `${SERIES_SK_PREFIX}${scopeKey(scope)}#${day}`;
}

/** The series item of `scope` for `day` (`YYYY-MM-DD`). */
export function seriesKey(tenant: string, campaignId: string, scope: Scope, day: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: seriesSortKey(scope, day) };
}

/** One bucket's counts, as endpoint 16 adds them up. */
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

/** Every count of a point at zero. */
export const zeroCounts = (): Omit<SeriesPoint, 'bucket'> => ({
  visits: 0,
  unique_visits: 0,
  bot_visits: 0,
  referred_users: 0,
  actions: 0,
  actions_by_type: {},
});

/**
 * The points a series item holds: one per hour with counts (`hour`), or its day's sum (`day`).
 * A malformed count fails by name; attributes that are no count (keys, `type`) are skipped.
 */
export function seriesPointsFromItem(item: StoredItem, granularity: Granularity): SeriesPoint[] {
  const sk = seriesField.string(item, 'SK');
  const day = sk.slice(sk.lastIndexOf('#') + 1);
  const points = new Map<string, SeriesPoint>();
  for (const [name, value] of Object.entries(item)) {
    const hour = /^(\d{2})(.+)$/.exec(name);
    if (!hour) continue;
    const rest = hour[2]!;
    const metric = LETTER_METRIC.get(rest);
    const actionType = rest.startsWith(ACTION_TYPE_PREFIX)
      ? rest.slice(ACTION_TYPE_PREFIX.length)
      : undefined;
    if (metric === undefined && actionType === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) seriesField.fail(item, name, 'a number');
    const bucket = granularity === 'hour' ? `${day}T${hour[1]}` : day;
    let point = points.get(bucket);
    if (!point) {
      point = { bucket, ...zeroCounts() };
      points.set(bucket, point);
    }
    const n = value as number;
    if (metric !== undefined) point[metric] += n;
    else point.actions_by_type[actionType!] = (point.actions_by_type[actionType!] ?? 0) + n;
  }
  return [...points.values()].sort((a, b) => (a.bucket < b.bucket ? -1 : 1));
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
