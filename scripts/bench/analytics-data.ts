/**
 * The analytics part's campaign: links, their visits and everything those visits leave in the
 * table, built with the writers' own item builders (`lib/db/entities/`), so the table holds what
 * the API and its stream consumers would have written for the same traffic:
 *
 * - a link item per link (`newLinkItem`), its `total_clicks` being its visits (what the rollup
 *   consumer's updates add up to);
 * - per visit, its visit item (`newVisitItem`: the action with its `action.created` event, in one
 *   of the campaign's 16 visit partitions) and its event in the events feed, in the order of the
 *   visits' times (action ids grow with it, as they would), `FEED_PACK` consecutive events per
 *   feed item (`newFeedPackItem`), numbered on from the first visit's time in microseconds (as a
 *   campaign's feed counter starts);
 * - the rollups the consumer derives from them: series items (`seriesKey`, with the attributes its
 *   UpdateItem sets: `type`, per hour its visits and unique visits, `seriesAttribute`, and their day
 *   totals, `dayTotalAttribute`) per campaign, link and referrer and day, and ranking items
 *   (`topKey`, `topAttributes`) per link and referrer for `visits` and `unique_visits`, their
 *   reach time the last visit counted. They are summed here rather than written through `applyRollups` (whose transactions of at most 99 items would take hours for a
 *   million visits spread over 100,000 links); the part checks this sum against the real consumer
 *   on a sample written through the table stream.
 *
 * Not written: the event lookup items (`T#<tenant>#EVT#<id>`, one per event, for redelivery), in
 * partitions of their own that no read measured here touches; they would double the events' writes.
 *
 * The traffic (deterministic, from a seeded generator): visits per link follow Zipf's law
 * (exponent 1: the top link gets about 1/H(n) of them); each link is shared once at a time uniform
 * over the last 29 days and its visits come after it, exponentially (mean 6 h); links belong to
 * referrers 4 by 4 (link i to referrer i mod n/4); 80 % of visits are unique.
 */

import {
  bucketOf,
  dayTotalAttribute,
  type Scope,
  seriesAttribute,
  seriesKey,
  type TopMetric,
} from '../../lib/db/entities/analytics.ts';
import { newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { type LinkItem, newLinkItem, type StoredLinkItem, toLink } from '../../lib/db/entities/link.ts';
import { newVisitItem } from '../../lib/db/entities/visit.ts';
import { formatSequence, newFeedPackItem } from '../../lib/db/entities/webhook-event.ts';
// TODO(issue 27): the analytics part still writes rankings in the layout before boards.
import { type TopEntity, topAttributes, topKey } from '../../lib/db/rankings-migration.ts';
import type { Campaign } from '../../lib/domain/schemas.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { type EventAttributes, WEBHOOK_EVENT_TYPES } from '../../lib/domain/webhook-events.ts';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;
export const ZIPF_EXPONENT = 1;
export const BURST_HOURS = 6;
export const LINKS_PER_REFERRER = 4;
export const UNIQUE_SHARE = 0.8;
/** Visits fall in the last 29 days: all of them inside a 30-day series asked for later, whatever the day. */
const SPAN_MS = 29 * DAY_MS;
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/** A seeded generator (mulberry32): the same traffic every run. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface CampaignSpec {
  tenant: string;
  campaignId: string;
  campaignUrl: string;
  links: number;
  events: number;
  /** Ids reserved from the table's sequences. */
  firstLinkId: number;
  firstActionId: number;
  /** Every visit falls in the 30 days before this. */
  nowMs: number;
  /** Makes the codes of this campaign's links unique in the table. */
  codeTag: string;
  seed?: number;
}

/** The traffic: visits per link, and per visit (in time order) its link, time and uniqueness. */
export interface Traffic {
  visits: Int32Array;
  link: Int32Array;
  at: Float64Array;
  unique: Uint8Array;
}

export function traffic(spec: CampaignSpec): Traffic {
  const rnd = random(spec.seed ?? 14);
  const n = spec.links;
  const weights = Array.from({ length: n }, (_, i) => (i + 1) ** -ZIPF_EXPONENT);
  const total = weights.reduce((a, b) => a + b, 0);
  const visits = Int32Array.from(weights, (w) => Math.floor((spec.events * w) / total));
  let left = spec.events - visits.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % n, left--) visits[i]! += 1;
  const linkOf = new Int32Array(spec.events);
  const atOf = new Float64Array(spec.events);
  const start = spec.nowMs - SPAN_MS;
  let e = 0;
  for (let i = 0; i < n; i++) {
    const shared = start + rnd() * (SPAN_MS - HOUR_MS);
    const room = spec.nowMs - 1 - shared;
    for (let k = 0; k < visits[i]!; k++) {
      const after = -Math.log(1 - rnd()) * BURST_HOURS * HOUR_MS;
      linkOf[e] = i;
      atOf[e] = Math.floor(shared + (after % room));
      e++;
    }
  }
  const order = Int32Array.from({ length: spec.events }, (_, j) => j).sort((a, b) => atOf[a]! - atOf[b]!);
  const unique = Uint8Array.from({ length: spec.events }, () => (rnd() < UNIQUE_SHARE ? 1 : 0));
  return {
    visits,
    link: Int32Array.from(order, (j) => linkOf[j]!),
    at: Float64Array.from(order, (j) => atOf[j]!),
    unique,
  };
}

export function campaignOf(spec: CampaignSpec) {
  const created = new Date(spec.nowMs - SPAN_MS - DAY_MS);
  const campaign: Campaign = {
    id: spec.campaignId,
    created_at: formatTimestamp(created),
    url: spec.campaignUrl,
    name: 'Analytics at scale',
    webhook_url: null,
    webhook_secret: null,
    webhook_events: [...WEBHOOK_EVENT_TYPES],
    webhook_status: 'enabled',
    webhook_disabled_reason: null,
  };
  return newCampaignItem(spec.tenant, campaign, created);
}

export const codeOf = (spec: CampaignSpec, i: number): string =>
  (i < 32 ? spec.codeTag : codeOf(spec, Math.floor(i / 32))) + CODE_ALPHABET[i % 32];
export const referrerOf = (i: number, links: number) =>
  `referrer-${i % Math.max(1, Math.floor(links / LINKS_PER_REFERRER))}`;

/** Link `i`'s item as `createLink` builds it, with the clicks its visits leave. */
export function linkItemOf(spec: CampaignSpec, t: Traffic, i: number): StoredLinkItem {
  return {
    ...newLinkItem({
      tenant: spec.tenant,
      campaignId: spec.campaignId,
      campaignUrl: spec.campaignUrl,
      id: spec.firstLinkId + i,
      code: codeOf(spec, i),
      referrerId: referrerOf(i, spec.links),
      now: new Date(spec.nowMs - SPAN_MS - DAY_MS + i),
    }),
    total_clicks: t.visits[i]!,
  };
}

/** Events per feed item: what one feed transaction writes from a stream batch at a few hundred visits a second. */
export const FEED_PACK = 50;

/**
 * The visit items and feed items of visits `from` to `to` (in time order; `from` a multiple of
 * `FEED_PACK`), as the visit request and the feed writer build them; `clicks` holds each link's
 * visits so far (the link's counter in each event). Call in order.
 */
export function eventItems(
  spec: CampaignSpec,
  t: Traffic,
  from: number,
  to: number,
  state: { clicks: Int32Array },
) {
  const visits: object[] = [];
  const feed: object[] = [];
  const events: EventAttributes[] = [];
  const nowSeconds = Math.floor(spec.nowMs / 1000);
  for (let j = from; j < to; j++) {
    const i = t.link[j]!;
    const at = t.at[j]!;
    state.clicks[i]! += 1;
    const link: LinkItem = { ...linkItemOf(spec, t, i), total_clicks: state.clicks[i]! };
    const action = {
      id: spec.firstActionId + j,
      at: new Date(at).toISOString(),
      action_type: 'visit',
      metadata: { user_agent: AGENT, referer: 'https://news.example.org/post/1' },
      referred_user: null,
    };
    const { item } = newVisitItem(link, action, t.unique[j] === 1);
    visits.push(item);
    events.push(item);
    if (events.length === FEED_PACK || j === to - 1) {
      feed.push(newFeedPackItem(events, feedSequenceOf(t, j - events.length + 1), nowSeconds));
      events.length = 0;
    }
  }
  return { visits, feed };
}

/** The feed sequence of event `j` (in time order): the campaign's feed counter started at the first event's time in microseconds. */
export const feedSequenceOf = (t: Traffic, j: number) => t.at[0]! * 1000 + 1 + j;
/** The same, as a cursor holds it. */
export const feedCursorSequenceOf = (t: Traffic, j: number) => formatSequence(feedSequenceOf(t, j));

/**
 * The series and ranking items the rollup consumer derives from the visits, summed: how many of
 * each, and the items themselves, built as they are written (a million visits make about a
 * million of them; only their counts are held meanwhile).
 */
export function rollups(spec: CampaignSpec, t: Traffic) {
  // Per series item: its key (built once, when first met) and its counts by attribute. Held by a
  // cheap key of scope and day, so the builders (a SHA-256 per referrer key) run once per item.
  const series = new Map<string, { key: { PK: string; SK: string }; counts: Record<string, number> }>();
  const tops = new Map<string, { entity: TopEntity; metric: TopMetric; value: number; reach: number }>();
  const linkEntities = new Map<number, TopEntity>();
  for (let j = 0; j < t.link.length; j++) {
    const i = t.link[j]!;
    const at = new Date(t.at[j]!);
    const unique = t.unique[j] === 1;
    const referrerId = referrerOf(i, spec.links);
    const scopes: Array<[string, Scope]> = [
      ['C', { kind: 'campaign' }],
      [`L${i}`, { kind: 'link', linkId: spec.firstLinkId + i }],
      [`R${referrerId}`, { kind: 'referrer', referrerId }],
    ];
    const day = bucketOf(at, 'day');
    const visits = seriesAttribute(at.getUTCHours(), 'visits');
    const uniques = seriesAttribute(at.getUTCHours(), 'unique_visits');
    const dayVisits = dayTotalAttribute('visits');
    const dayUniques = dayTotalAttribute('unique_visits');
    for (const [tag, scope] of scopes) {
      const k = `${tag}|${day}`;
      let entry = series.get(k);
      if (!entry) {
        entry = { key: seriesKey(spec.tenant, spec.campaignId, scope, day), counts: {} };
        series.set(k, entry);
      }
      entry.counts[visits] = (entry.counts[visits] ?? 0) + 1;
      entry.counts[dayVisits] = (entry.counts[dayVisits] ?? 0) + 1;
      if (unique) {
        entry.counts[uniques] = (entry.counts[uniques] ?? 0) + 1;
        entry.counts[dayUniques] = (entry.counts[dayUniques] ?? 0) + 1;
      }
    }
    let linkEntity = linkEntities.get(i);
    if (!linkEntity) {
      const stored = linkItemOf(spec, t, i);
      linkEntity = {
        by: 'referral_link',
        linkId: stored.id,
        code: stored.referral_code,
        url: toLink(stored).referral_link,
      };
      linkEntities.set(i, linkEntity);
    }
    const entities: Array<[string, TopEntity]> = [
      [`L${i}`, linkEntity],
      [`R${referrerId}`, { by: 'referrer', referrerId }],
    ];
    const metrics: TopMetric[] = unique ? ['visits', 'unique_visits'] : ['visits'];
    for (const [tag, entity] of entities)
      for (const metric of metrics) {
        const k = `${tag}|${metric}`;
        let entry = tops.get(k);
        if (!entry) {
          entry = { entity, metric, value: 0, reach: 0 };
          tops.set(k, entry);
        }
        entry.value += 1;
        entry.reach = Math.max(entry.reach, t.at[j]!);
      }
  }
  return {
    series: series.size,
    rankings: tops.size,
    *items(): Generator<Record<string, unknown>> {
      // As the consumer writes them: `SET type ADD` what it counted (no attribute where nothing was).
      for (const { key, counts } of series.values()) yield { ...key, type: 'analytics_series', ...counts };
      for (const e of tops.values())
        yield {
          ...topKey(spec.tenant, spec.campaignId, e.entity, e.metric),
          ...topAttributes(spec.tenant, spec.campaignId, e.entity, e.metric, e.value, e.reach),
        };
    },
  };
}
