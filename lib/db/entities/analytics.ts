/**
 * Analytics items: what the table stream's counting consumer (`lib/analytics/`) derives from the
 * event items, and what endpoints 16 and 17 read. All in their campaign's partition, so the
 * campaign's purge removes them with the rest.
 *
 *   series item        SK `AN#S#<scope>#<YYYY-MM-DD>`       a scope's day, hour by hour
 *   series types item  SK `AN#S#C#<YYYY-MM-DD>#T`            the campaign's actions by type that day
 *   type registry      SK `AN#TYPES`                         the campaign's first 100 action types
 *   referrer totals    SK `AN#RT#<referrer hash>`            a referrer's all-time counts
 *   ranking board      SK `AN#TOP#<by>#<metric>`             one ranking's top 100
 *
 * A series item holds one UTC day of one scope, hour by hour: the campaign (`C`), a link
 * (`L<id>`) or a referrer (`R<hash>`). Each count is an attribute named by its hour and its metric
 * (`seriesAttribute`): `07v` is the visits of 07:00–08:00; only counts above zero exist. The same
 * update keeps the day's totals beside its hours (`dayTotalAttribute`: `Dv`, `Du`, ...), so a
 * series by day reads those few attributes (`DAY_POINT_PROJECTION`) and not 24 hours of each day,
 * and a range is one Query between two sort keys: 7 days of hours are 8 items, not 168. Actions by
 * type: the hour's count of a type under a short hash of it (`hourlyTypeAttribute`, `07h<hash>`),
 * the day's in the map `Dt` keyed by the type's name; the campaign's own series keeps them in an
 * item of their own (written only by actions), a link's or referrer's in its day's item. Items
 * written before issue 27 name a type in full in its hour (`07t:<type>`); both are read.
 *
 * Every item is bounded whatever the input: 24 hours, 5 metrics, at most 101 types (the campaign's
 * first 100 and `(other)`), and the high-water marks of the stream's lanes of the last 25 hours
 * (`highWaterAttribute`).
 *
 * Referrer ids are any 1–256 characters, so their scope is a fixed-length hash (no separator inside
 * it can make one referrer's range hold another's items, and the key stays far below 1,024 bytes).
 *
 * Until issue 14's cost work, an hour (`AN#H#`) and a day (`AN#D#`) were items of their own; until
 * issue 27's, a ranking was an item per entity (`TOP#...`) sorted by an index (GSI4). Nothing
 * writes or reads those any more (`lib/db/migrations/series-migration.ts`,
 * `lib/db/migrations/rankings-migration.ts`).
 */
import { createHash } from 'node:crypto';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

export type Granularity = 'hour' | 'day';
/**
 * Series attributes: visits, unique visits, bot visits, referred users, actions (non-visit),
 * conversions and revenue (minor units, net: a refund subtracts in the hour it happens, so an
 * hour's revenue can be below zero).
 */
export const SERIES_METRICS = [
  'visits',
  'unique_visits',
  'bot_visits',
  'referred_users',
  'actions',
  'conversions',
  'revenue',
] as const;
export type SeriesMetric = (typeof SERIES_METRICS)[number];
/** A metric's letter in a series item's attribute names (`<hour><letter>`). */
const METRIC_LETTER: Record<SeriesMetric, string> = {
  visits: 'v',
  unique_visits: 'u',
  bot_visits: 'b',
  referred_users: 'r',
  actions: 'a',
  conversions: 'c',
  revenue: 'm',
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

/** The attribute of a series item that holds `metric`'s total for its whole day. */
export const dayTotalAttribute = (metric: SeriesMetric) => `D${METRIC_LETTER[metric]}`;
/**
 * The map of a series item that holds its day's actions by type: `t:<type>` → count. The prefix
 * keeps any type a plain key: a map key `__proto__` is lost by the SDK's marshalling.
 */
export const DAY_TYPES_ATTRIBUTE = 'Dt';
export const dayTypeKey = (type: string) => `${ACTION_TYPE_PREFIX}${type}`;

/**
 * What a series by day reads of each item (a ProjectionExpression): its sort key (the day) and
 * its day totals.
 */
export const DAY_POINT_PROJECTION = (() => {
  const names = ['SK', ...SERIES_METRICS.map(dayTotalAttribute), DAY_TYPES_ATTRIBUTE];
  return {
    ProjectionExpression: names.map((_, i) => `#d${i}`).join(', '),
    ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#d${i}`, name])),
  };
})();

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
 * what the migration of the old layout writes (hours only; `backfillSeriesDayTotals` then derives
 * the day totals), and, with `day`, what the rollup consumer writes: the day's totals by metric
 * (`dayTotalAttribute`) and its actions by type in the `Dt` map.
 *
 * A map's key can only be raised where the map exists, and an update cannot create the map and
 * raise a key in it at once: so the writer says which it believes (`typesMap`), and the update
 * carries the condition that makes a wrong belief fail rather than lose or overwrite counts:
 * `create` sets the map to `day.types` where there is none; `add` raises each type's key (from 0
 * where absent) in the map that is there.
 */
export function seriesUpdate(
  adds: Iterable<readonly [string, number]>,
  day?: {
    totals: Iterable<readonly [string, number]>;
    types: ReadonlyMap<string, number>;
    typesMap: 'create' | 'add';
  },
) {
  const names: Record<string, string> = { '#type': 'type' };
  const values: Record<string, unknown> = { ':type': 'analytics_series' };
  const sets = ['#type = :type'];
  const parts: string[] = [];
  const add = (name: string, n: number) => {
    const i = parts.length;
    names[`#a${i}`] = name;
    values[`:a${i}`] = n;
    parts.push(`#a${i} :a${i}`);
  };
  for (const [name, n] of adds) add(name, n);
  let condition: string | undefined;
  if (day) {
    for (const [name, n] of day.totals) add(name, n);
    if (day.types.size > 0) {
      names['#dt'] = DAY_TYPES_ATTRIBUTE;
      if (day.typesMap === 'create') {
        values[':dt'] = Object.fromEntries([...day.types].map(([type, n]) => [dayTypeKey(type), n]));
        sets.push('#dt = :dt');
        condition = 'attribute_not_exists(#dt)';
      } else {
        values[':zero'] = 0;
        let i = 0;
        for (const [type, n] of day.types) {
          names[`#t${i}`] = dayTypeKey(type);
          values[`:t${i}`] = n;
          sets.push(`#dt.#t${i} = if_not_exists(#dt.#t${i}, :zero) + :t${i}`);
          i++;
        }
        condition = 'attribute_exists(#dt)';
      }
    }
  }
  return {
    UpdateExpression: `SET ${sets.join(', ')}${parts.length > 0 ? ` ADD ${parts.join(', ')}` : ''}`,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(condition === undefined ? {} : { ConditionExpression: condition }),
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

/**
 * The campaign scope's actions by type for `day`, apart from its other counts: the campaign's
 * series item is written by every stream batch (within 2 s), and visits, most of them, need not
 * rewrite the types. It sorts right after its day's item, so a range of days reads both.
 */
export const TYPES_ITEM_SUFFIX = '#T';
export function seriesTypesKey(tenant: string, campaignId: string, day: string) {
  return {
    PK: campaignPartition(tenant, campaignId),
    SK: `${seriesSortKey({ kind: 'campaign' }, day)}${TYPES_ITEM_SUFFIX}`,
  };
}

/** The day (`YYYY-MM-DD`) a series item's sort key names, whichever kind of series item it is. */
export function seriesDayOf(sk: string): string {
  const day = /#(\d{4}-\d{2}-\d{2})(?:#T)?$/.exec(sk)?.[1];
  if (!day) throw new Error(`not a series item's sort key: ${sk}`);
  return day;
}

/**
 * An hour's count of one action type is named by a short hash of the type (`07h<hash>`), not the
 * type itself: a type is up to 64 characters (256 bytes), and 24 hours of 101 types named in full
 * would pass DynamoDB's 400 KB item limit. The day's map `Dt` keys each type by its name, and is
 * where a reader finds the name of a hash (`typeNamesByHash`). 48 bits: a collision among a
 * campaign's 101 types has odds of about 1 in 10^10.
 */
export const HOURLY_TYPE_MARK = 'h';
export const typeHash = (type: string) =>
  createHash('sha256').update(type, 'utf8').digest('base64url').slice(0, 8);
export const hourlyTypeAttribute = (hour: number, type: string) =>
  `${String(hour).padStart(2, '0')}${HOURLY_TYPE_MARK}${typeHash(type)}`;

function typeNamesByHash(item: StoredItem): Map<string, string> {
  const names = new Map<string, string>();
  const types = item[DAY_TYPES_ATTRIBUTE];
  if (typeof types === 'object' && types !== null && !Array.isArray(types))
    for (const key of Object.keys(types))
      if (key.startsWith(ACTION_TYPE_PREFIX)) {
        const type = key.slice(ACTION_TYPE_PREFIX.length);
        names.set(typeHash(type), type);
      }
  return names;
}

/**
 * A campaign's action types counted by name: its first `NAMED_TYPES_MAX` distinct types (a
 * string set, `names`); every later type counts under `OTHER_TYPE`, so that no input can grow a
 * rollup without bound (the contract's Analytics section).
 */
export const NAMED_TYPES_MAX = 100;
export const OTHER_TYPE = '(other)';
export const TYPE_REGISTRY_NAMES = 'names';
export const TYPE_REGISTRY_TYPE = 'analytics_types';
export function typeRegistryKey(tenant: string, campaignId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: 'AN#TYPES' } as const;
}
/** The types a registry item names (none for no item). */
export const registeredTypes = (item: StoredItem | undefined): Set<string> => {
  const value = item?.[TYPE_REGISTRY_NAMES];
  return value instanceof Set ? new Set([...value].map(String)) : new Set();
};

/** A referrer's all-time counts in a campaign (what its rankings read), per metric with its reach time. */
export function referrerTotalsKey(tenant: string, campaignId: string, referrerId: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: `AN#RT#${referrerHash(referrerId)}` };
}

/**
 * One ranking of endpoint 17 as one item: its first `BOARD_SIZE` entries, best first. Counts only
 * grow, and every raise of an entity's count is offered to its boards with the new count, so the
 * board is always the exact top (an entity that leaves it can only come back through a raise).
 */
export const BOARD_SIZE = 100;
export function boardKey(tenant: string, campaignId: string, by: TopBy, metric: TopMetric) {
  return {
    PK: campaignPartition(tenant, campaignId),
    SK: `AN#TOP#${TOP_BY_KEY[by]}#${TOP_METRIC_KEY[metric]}`,
  };
}

/** A board's entry: the entity's key (link id or referrer hash), its label, value and reach time. */
export interface BoardEntry {
  /** `L<link id>` or `R<referrer hash>`. */
  k: string;
  /** The referral code of a link, the referrer id of a referrer. */
  label: string;
  value: number;
  reachMs: number;
}

/** Best first: higher value, then earlier reach, then key (a stable order for equal entries). */
export function compareBoardEntries(a: BoardEntry, b: BoardEntry): number {
  return b.value - a.value || a.reachMs - b.reachMs || (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
}

/**
 * `board` with `entries` merged in: each entity at the higher of its two counts (ties keep the
 * earlier reach); with `replace` (a ranking whose counts can fall, `FALLING_TOP_METRICS`), at the
 * count offered, which is read after the write that changed it, and off the board at 0 or below.
 */
export function mergedEntries(
  board: readonly BoardEntry[],
  entries: readonly BoardEntry[],
  replace = false,
): BoardEntry[] {
  const byKey = new Map(board.map((e) => [e.k, e]));
  for (const entry of entries) {
    const before = byKey.get(entry.k);
    if (replace) {
      if (entry.value > 0) byKey.set(entry.k, entry);
      else byKey.delete(entry.k);
    } else if (!before || entry.value > before.value) byKey.set(entry.k, entry);
  }
  return [...byKey.values()].sort(compareBoardEntries).slice(0, BOARD_SIZE);
}

export const sameEntries = (a: readonly BoardEntry[], b: readonly BoardEntry[]) =>
  a.length === b.length &&
  a.every((e, i) => {
    const f = b[i]!;
    return e.k === f.k && e.value === f.value && e.reachMs === f.reachMs && e.label === f.label;
  });

const boardField = decoder('analytics board');
export function boardEntriesOf(item: StoredItem | undefined): BoardEntry[] {
  if (item === undefined) return [];
  const entries = item.entries;
  if (!Array.isArray(entries)) return boardField.fail(item, 'entries', 'a list');
  return entries.map((e, i) => {
    if (
      !Array.isArray(e) ||
      typeof e[0] !== 'string' ||
      typeof e[1] !== 'string' ||
      typeof e[2] !== 'number' ||
      typeof e[3] !== 'number'
    )
      return boardField.fail(item, `entries[${i}]`, 'a [key, label, value, reach] entry');
    return { k: e[0], label: e[1], value: e[2], reachMs: e[3] };
  });
}
/** Entries stored as short lists: a board of 100 stays a few KB. */
export const storedBoardEntries = (entries: readonly BoardEntry[]) =>
  entries.map((e) => [e.k, e.label, e.value, e.reachMs]);

export const BOARD_TYPE = 'analytics_board';
/** A board item: its `version` is raised by every write, the condition of the next. */
export const newBoardItem = (
  key: { PK: string; SK: string },
  version: number,
  entries: readonly BoardEntry[],
) => ({ ...key, type: BOARD_TYPE, version, entries: storedBoardEntries(entries) });

/**
 * A window mark: the last record a stream shard's (a lane's) ended windows summed and wrote
 * (`lib/analytics/window.ts`). Stream records live 24 h: a closed shard's mark is kept a day more,
 * then expires.
 */
export const windowMarkKey = (lane: string) => ({ PK: `WINDOW#${lane}`, SK: 'MARK' });
export const newWindowMarkItem = (lane: string, last: string, nowMs: number) => ({
  ...windowMarkKey(lane),
  type: 'window_mark',
  last,
  position: padSequence(last),
  expires_at: Math.floor(nowMs / 1000) + 2 * 24 * 60 * 60,
});

/**
 * Exactly once without transactions: an item the stream's counting consumer raises records, per
 * reader of the stream (a shard, or a parked piece of work), the last stream record it applied:
 * `hw_<lane hash>` = `<sequence, 40 digits>|<epoch seconds of the write>`. A write carries the
 * condition that its first record is past that mark, so a batch handed over again (a Lambda
 * retry, a restart) adds nothing twice. One conditional write costs 1 WRU per KB where a
 * transaction costs 2. Marks older than the stream's 24 h retention (plus an hour) can never
 * match a record again and are removed by a later write of the item (`staleMarks`).
 */
export const HIGH_WATER_PREFIX = 'hw_';
export const highWaterAttribute = (lane: string) =>
  `${HIGH_WATER_PREFIX}${createHash('sha256').update(lane, 'utf8').digest('base64url').slice(0, 10)}`;
export const highWaterValue = (sequence: string, nowMs: number) =>
  `${padSequence(sequence)}|${Math.floor(nowMs / 1000)}`;
/** Sequence numbers are digit strings of varying length: zero-padded so they compare as text. */
export const padSequence = (sequence: string) => sequence.padStart(40, '0');
/** The sequence a mark holds (zero-padded), or undefined for no mark. */
export function markedSequence(value: unknown): string | undefined {
  return typeof value === 'string'
    ? value.slice(0, value.indexOf('|') === -1 ? undefined : value.indexOf('|'))
    : undefined;
}
export const MARK_LIFETIME_SECONDS = 25 * 60 * 60;
/** The marks of `item` no record can match any more. */
export function staleMarks(item: StoredItem | undefined, nowMs: number): string[] {
  if (!item) return [];
  const cutoff = Math.floor(nowMs / 1000) - MARK_LIFETIME_SECONDS;
  return Object.keys(item).filter((name) => {
    if (!name.startsWith(HIGH_WATER_PREFIX)) return false;
    const value = item[name];
    const at = typeof value === 'string' ? Number(value.slice(value.indexOf('|') + 1)) : Number.NaN;
    return Number.isFinite(at) && at < cutoff;
  });
}

/** One bucket's counts, as endpoint 16 adds them up. */
export interface SeriesPoint {
  bucket: string;
  visits: number;
  unique_visits: number;
  bot_visits: number;
  referred_users: number;
  actions: number;
  conversions: number;
  revenue: number;
  actions_by_type: Record<string, number>;
}

const seriesField = decoder('analytics series');

const isDigit = (code: number) => code >= 48 && code <= 57;

/**
 * Adds `n` to the count of action type `type` in `counts`. Types are any 1–64 characters, so a
 * type may be named `constructor` or `__proto__`: only the record's own properties count, and a
 * count is defined, never assigned (assigning `__proto__` would replace the prototype instead).
 */
export function addTypeCount(counts: Record<string, number>, type: string, n: number): void {
  const before = Object.hasOwn(counts, type) ? counts[type]! : 0;
  Object.defineProperty(counts, type, {
    value: before + n,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

/** The count of action type `type` in `counts` (own properties only; see `addTypeCount`). */
export const typeCountOf = (counts: Record<string, number>, type: string): number | undefined =>
  Object.hasOwn(counts, type) ? counts[type] : undefined;

/** Every count of a point at zero. */
export const zeroCounts = (): Omit<SeriesPoint, 'bucket'> => ({
  visits: 0,
  unique_visits: 0,
  bot_visits: 0,
  referred_users: 0,
  actions: 0,
  conversions: 0,
  revenue: 0,
  actions_by_type: {},
});

/**
 * The points a series item holds: one per hour with counts (`hour`), or its day's sum (`day`).
 * A malformed count fails by name; attributes that are no count (keys, `type`) are skipped.
 */
export function seriesPointsFromItem(item: StoredItem, granularity: Granularity): SeriesPoint[] {
  const day = seriesDayOf(seriesField.string(item, 'SK'));
  const points = new Map<string, SeriesPoint>();
  let hashed: Map<string, string> | undefined;
  for (const name in item) {
    // `<hour><letter>`, `<hour>h<type hash>` or (older items) `<hour>t:<type>`: two digits first
    // (no regex: a week is 400 attributes).
    if (name.length < 3 || !isDigit(name.charCodeAt(0)) || !isDigit(name.charCodeAt(1))) continue;
    const rest = name.slice(2);
    const metric = LETTER_METRIC.get(rest);
    let actionType = rest.startsWith(ACTION_TYPE_PREFIX) ? rest.slice(ACTION_TYPE_PREFIX.length) : undefined;
    if (metric === undefined && actionType === undefined && rest.startsWith(HOURLY_TYPE_MARK)) {
      hashed ??= typeNamesByHash(item);
      actionType = hashed.get(rest.slice(HOURLY_TYPE_MARK.length));
      if (actionType === undefined) seriesField.fail(item, name, 'a type named in its Dt map');
    }
    if (metric === undefined && actionType === undefined) continue;
    const value = item[name];
    if (typeof value !== 'number' || !Number.isFinite(value)) seriesField.fail(item, name, 'a number');
    const bucket = granularity === 'hour' ? `${day}T${name.slice(0, 2)}` : day;
    let point = points.get(bucket);
    if (!point) {
      point = { bucket, ...zeroCounts() };
      points.set(bucket, point);
    }
    const n = value as number;
    if (metric !== undefined) point[metric] += n;
    else addTypeCount(point.actions_by_type, actionType!, n);
  }
  return [...points.values()].sort((a, b) => (a.bucket < b.bucket ? -1 : 1));
}

/**
 * A series item's day point from its day totals (read through `DAY_POINT_PROJECTION`). A
 * malformed count fails by name.
 */
export function dayPointFromItem(item: StoredItem): SeriesPoint {
  const point: SeriesPoint = { bucket: seriesDayOf(seriesField.string(item, 'SK')), ...zeroCounts() };
  for (const metric of SERIES_METRICS) {
    const name = dayTotalAttribute(metric);
    const value = item[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value)) seriesField.fail(item, name, 'a number');
    point[metric] = value as number;
  }
  const types = item[DAY_TYPES_ATTRIBUTE];
  if (types !== undefined) {
    if (typeof types !== 'object' || types === null || Array.isArray(types))
      seriesField.fail(item, DAY_TYPES_ATTRIBUTE, 'a map of counts');
    for (const [key, value] of Object.entries(types as Record<string, unknown>)) {
      if (!key.startsWith(ACTION_TYPE_PREFIX) || typeof value !== 'number' || !Number.isFinite(value))
        seriesField.fail(item, `${DAY_TYPES_ATTRIBUTE}.${key}`, 'a number under t:<type>');
      addTypeCount(point.actions_by_type, key.slice(ACTION_TYPE_PREFIX.length), value as number);
    }
  }
  return point;
}

/** Rankings of endpoint 17. */
export const TOP_METRICS = [
  'referred_users',
  'visits',
  'unique_visits',
  'actions',
  'conversions',
  'revenue',
] as const;
/**
 * Rankings whose counts can also fall (a refund lowers a revenue): an offered count replaces the
 * board's instead of only raising it (`mergedEntries`).
 */
export const FALLING_TOP_METRICS: ReadonlySet<TopMetric> = new Set(['revenue']);
export type TopMetric = (typeof TOP_METRICS)[number];
export type TopBy = 'referrer' | 'referral_link';

export const TOP_BY_KEY: Record<TopBy, string> = { referrer: 'R', referral_link: 'L' };
export const TOP_METRIC_KEY: Record<TopMetric, string> = {
  referred_users: 'r',
  visits: 'v',
  unique_visits: 'u',
  actions: 'a',
  conversions: 'c',
  revenue: 'm',
};

/** A ranking's entry as endpoint 17 answers it (`readTop`). */
export interface TopRow {
  value: number;
  referrer_id?: string;
  link_id?: number;
  referral_code?: string;
  referral_link?: string | null;
}

/**
 * A link's all-time counts of its rankings, on its own item (`lib/db/entities/link.ts`), each with
 * the time it was last raised (its reach, for ties): visits and unique visits raised by the
 * stream's counting consumer with `total_clicks`, actions (every type but `visit`) by the write
 * that records one; `total_referrals` is its referred users.
 */
export const LINK_TOTALS: Record<TopMetric, { count: string; reach: string }> = {
  visits: { count: 'an_v', reach: 'an_vt' },
  unique_visits: { count: 'an_u', reach: 'an_ut' },
  actions: { count: 'an_a', reach: 'an_at' },
  referred_users: { count: 'total_referrals', reach: 'an_rt' },
  conversions: { count: 'total_conversions', reach: 'an_ct' },
  revenue: { count: 'total_revenue', reach: 'an_mt' },
};
/** A referrer's all-time counts on its totals item (`referrerTotalsKey`), likewise. */
export const REFERRER_TOTALS: Record<TopMetric, { count: string; reach: string }> = {
  visits: { count: 'v', reach: 'vt' },
  unique_visits: { count: 'u', reach: 'ut' },
  actions: { count: 'a', reach: 'at' },
  referred_users: { count: 'r', reach: 'rt' },
  conversions: { count: 'c', reach: 'ct' },
  revenue: { count: 'm', reach: 'mt' },
};
