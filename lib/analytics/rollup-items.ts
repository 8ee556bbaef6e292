/**
 * What each interaction adds to which rollup item: pure, no I/O. Two sets of items, by how fresh
 * the contract wants them (its Analytics section):
 *
 * - within 2 s, every stream batch (`fastItems`): the link's `total_clicks` for a visit (with the
 *   link's all-time visit counts, same write), and the campaign's own series (its counts, and its
 *   actions by type in an item of their own, so that a visit does not rewrite the types);
 * - within 60 s, summed in the counting consumer's window first (`windowItems`): series by link
 *   and by referrer, and the referrers' all-time counts behind the rankings. A link or referrer
 *   with many interactions a minute is written once for all of them, which is what keeps a visit
 *   cheap when traffic is spread over many links.
 */

import type { CountedItem, CountedPart } from '../db/counted-update.ts';
import {
  bucketOf,
  dayTotalAttribute,
  hourlyTypeAttribute,
  LINK_TOTALS,
  REFERRER_TOTALS,
  referrerTotalsKey,
  type Scope,
  type SeriesMetric,
  seriesAttribute,
  seriesKey,
  seriesTypesKey,
  type TopMetric,
} from '../db/entities/analytics.ts';
import { CLEAR_LAST_ACTION_ATTRIBUTE, linkKey } from '../db/entities/link.ts';
import { keyString } from '../db/table/batch.ts';
import type { Contribution } from './contributions.ts';

type Key = { PK: string; SK: string };

/** A contribution whose action type has its counted name (`type-registry.ts`). */
export type Counted = Contribution & { typeName?: string };

export const SERIES_ITEM_TYPE = 'analytics_series';

function seriesMetricsOf(c: Counted): SeriesMetric[] {
  switch (c.kind) {
    case 'visit':
      return c.unique ? ['visits', 'unique_visits'] : ['visits'];
    case 'bot_visit':
      return ['bot_visits'];
    case 'referred_user':
      return ['referred_users'];
    case 'action':
      return ['actions'];
    case 'conversion':
      return ['conversions', 'revenue'];
    case 'refund':
      return ['revenue'];
  }
}

/** What an interaction adds to `metric`: one, or (revenue) its amount, below zero for a refund. */
function amountOf(c: Counted, metric: SeriesMetric | TopMetric): number {
  if (metric !== 'revenue') return 1;
  return c.kind === 'refund' ? -(c.amount ?? 0) : (c.amount ?? 0);
}

/** The rankings an interaction raises (bot visits rank nowhere). */
export function topMetricsOf(c: Counted): TopMetric[] {
  switch (c.kind) {
    case 'visit':
      return c.unique ? ['visits', 'unique_visits'] : ['visits'];
    case 'referred_user':
      return ['referred_users'];
    case 'action':
      return ['actions'];
    case 'conversion':
      return ['conversions', 'revenue'];
    case 'refund':
      return ['revenue'];
    case 'bot_visit':
      return [];
  }
}

const hourOf = (c: Counted) => new Date(c.atMs).getUTCHours();
const dayOf = (c: Counted) => bucketOf(new Date(c.atMs), 'day');

/** A series item's share of one interaction: its hour's and its day's counts, and its type. */
function seriesPart(c: Counted, withMetrics: boolean, withTypes: boolean): CountedPart {
  const adds: Record<string, number> = {};
  const hour = hourOf(c);
  if (withMetrics)
    for (const metric of seriesMetricsOf(c)) {
      adds[seriesAttribute(hour, metric)] = amountOf(c, metric);
      adds[dayTotalAttribute(metric)] = amountOf(c, metric);
    }
  const part: CountedPart = { seq: String(c.sequence), adds };
  if (withTypes && c.kind === 'action' && c.typeName !== undefined) {
    adds[hourlyTypeAttribute(hour, c.typeName)] = 1;
    part.types = { [c.typeName]: 1 };
  }
  return part;
}

/** Items by key, each with its parts in stream order. */
class ItemsByKey {
  readonly items = new Map<string, CountedItem>();
  add(key: Key, part: CountedPart, base: Omit<CountedItem, 'key' | 'parts'> = {}) {
    if (Object.keys(part.adds).length === 0 && !part.types) return;
    const id = keyString(key);
    const item = this.items.get(id);
    if (item) item.parts.push(part);
    else this.items.set(id, { key, parts: [part], ...base });
  }
}

const seriesBase = { sets: { type: SERIES_ITEM_TYPE } };

/**
 * The writes of a batch that must be visible within 2 s. A visit's click is counted here only
 * for a visit recorded by `/r/{code}` (API writes count their own, in their own write); the link
 * update counts only on the very link the visit was of (a code purged and re-issued since is
 * another link: the click is dropped).
 */
export function fastItems(contributions: readonly Counted[]): CountedItem[] {
  const out = new ItemsByKey();
  for (const c of contributions) {
    const day = dayOf(c);
    out.add(
      seriesKey(c.tenant, c.campaignId, { kind: 'campaign' }, day),
      seriesPart(c, true, false),
      seriesBase,
    );
    if (c.kind === 'action')
      out.add(seriesTypesKey(c.tenant, c.campaignId, day), seriesPart(c, false, true), seriesBase);
    if (c.countsClick) {
      const adds: Record<string, number> = { total_clicks: 1, [LINK_TOTALS.visits.count]: 1 };
      const latest: Record<string, number> = { [LINK_TOTALS.visits.reach]: c.atMs };
      if (c.unique) {
        adds[LINK_TOTALS.unique_visits.count] = 1;
        latest[LINK_TOTALS.unique_visits.reach] = c.atMs;
      }
      out.add(
        linkKey(c.link.code),
        { seq: String(c.sequence), adds, latest },
        {
          removes: [CLEAR_LAST_ACTION_ATTRIBUTE],
          guard: { attribute: 'id', equals: c.link.id },
        },
      );
    }
  }
  return [...out.items.values()];
}

/** What the window sums for one item: its key, how to write it, and one part per interaction. */
export interface WindowItem {
  key: Key;
  kind: 'series' | 'referrer';
  /** The campaign's partition key and the entity, for the rankings once it is written. */
  campaign: { tenant: string; campaignId: string };
  entity: { by: 'referral_link'; linkId: number; code: string } | { by: 'referrer'; referrerId: string };
  part: CountedPart;
}

/** The writes of one interaction that may wait up to a minute, summed in the window first. */
export function windowItems(c: Counted): WindowItem[] {
  const campaign = { tenant: c.tenant, campaignId: c.campaignId };
  const day = dayOf(c);
  const link = { by: 'referral_link' as const, linkId: c.link.id, code: c.link.code };
  const scopes: Array<[Scope, WindowItem['entity']]> = [[{ kind: 'link', linkId: c.link.id }, link]];
  if (c.link.referrerId !== null)
    scopes.push([
      { kind: 'referrer', referrerId: c.link.referrerId },
      { by: 'referrer', referrerId: c.link.referrerId },
    ]);
  const out: WindowItem[] = scopes.map(([scope, entity]) => ({
    key: seriesKey(c.tenant, c.campaignId, scope, day),
    kind: 'series',
    campaign,
    entity,
    part: seriesPart(c, true, true),
  }));
  const metrics = topMetricsOf(c);
  if (c.link.referrerId !== null && metrics.length > 0) {
    const adds: Record<string, number> = {};
    const latest: Record<string, number> = {};
    for (const metric of metrics) {
      adds[REFERRER_TOTALS[metric].count] = amountOf(c, metric);
      latest[REFERRER_TOTALS[metric].reach] = c.atMs;
    }
    out.push({
      key: referrerTotalsKey(c.tenant, c.campaignId, c.link.referrerId),
      kind: 'referrer',
      campaign,
      entity: { by: 'referrer', referrerId: c.link.referrerId },
      part: { seq: String(c.sequence), adds, latest },
    });
  }
  return out;
}

export const REFERRER_TOTALS_TYPE = 'analytics_referrer';
