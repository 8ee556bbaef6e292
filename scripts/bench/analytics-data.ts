/**
 * The analytics part's campaign and everything its visits leave in the table, built with the
 * writers' own item builders (`lib/db/entities/`), so the table holds what the API and its stream
 * consumers would have written for the same traffic: link items (`total_clicks` their visits),
 * per visit its visit item and its event in the events feed (`FEED_PACK` events per feed item,
 * numbered on from the first visit's time in microseconds, as a campaign's feed counter starts),
 * and the rollups: series items per campaign, link, referrer and day and ranking items per link
 * and referrer, summed here rather than written by `applyRollups` (whose transactions would take
 * hours for a million visits); the part checks this sum against the real consumer on a sample.
 * Not written: the event lookup items, in partitions that no read measured here touches.
 *
 * The traffic, deterministic (a seeded generator): visits per link by Zipf's law (exponent 1);
 * each link shared once at a time uniform over the last 29 days and visited after it,
 * exponentially (mean 6 h); links belong to referrers 4 by 4; 80 % of visits unique.
 */
import * as analytics from '../../lib/db/entities/analytics.ts';
import { newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { newLinkItem, type StoredLinkItem, toLink } from '../../lib/db/entities/link.ts';
import { newVisitItem } from '../../lib/db/entities/visit.ts';
import { formatSequence, newFeedPackItem } from '../../lib/db/entities/webhook-event.ts';
// The analytics part writes rankings in the layout before boards (issue 27: still to move).
import { type TopEntity, topAttributes, topKey } from '../../lib/db/migrations/rankings-migration.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { type EventAttributes, WEBHOOK_EVENT_TYPES } from '../../lib/domain/webhook-events.ts';
import { random } from './stats.ts';
import { BROWSER, codeOf } from './traffic.ts';

const [HOUR_MS, DAY_MS] = [3_600_000, 86_400_000];
const [BURST_HOURS, LINKS_PER_REFERRER, UNIQUE_SHARE] = [6, 4, 0.8];
/** Visits fall in the last 29 days: all of them inside a 30-day series asked for later, whatever the day. */
const SPAN_MS = 29 * DAY_MS;
/** Events per feed item: what one feed transaction writes from a stream batch at a few hundred visits a second. */
export const FEED_PACK = 50;

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
export type Traffic = { visits: Int32Array; link: Int32Array; at: Float64Array; unique: Uint8Array };

export function traffic(spec: CampaignSpec): Traffic {
  const rnd = random(spec.seed ?? 14);
  const weights = Array.from({ length: spec.links }, (_, i) => 1 / (i + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  const visits = Int32Array.from(weights, (w) => Math.floor((spec.events * w) / total));
  let left = spec.events - visits.reduce((a, b) => a + b, 0);
  for (let i = 0; left > 0; i = (i + 1) % spec.links, left--) visits[i]! += 1;
  const [linkOf, atOf] = [new Int32Array(spec.events), new Float64Array(spec.events)];
  for (let i = 0, e = 0; i < spec.links; i++) {
    const shared = spec.nowMs - SPAN_MS + rnd() * (SPAN_MS - HOUR_MS);
    const room = spec.nowMs - 1 - shared;
    for (let k = 0; k < visits[i]!; k++, e++) {
      linkOf[e] = i;
      atOf[e] = Math.floor(shared + ((-Math.log(1 - rnd()) * BURST_HOURS * HOUR_MS) % room));
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
  const webhooks = {
    webhook_url: null,
    webhook_secret: null,
    webhook_status: 'enabled' as const,
    webhook_disabled_reason: null,
  };
  const campaign = {
    id: spec.campaignId,
    created_at: formatTimestamp(created),
    url: spec.campaignUrl,
    name: 'Analytics at scale',
  };
  return newCampaignItem(
    spec.tenant,
    { ...campaign, ...webhooks, webhook_events: [...WEBHOOK_EVENT_TYPES] },
    created,
  );
}

const referrerOf = (i: number, links: number) =>
  `referrer-${i % Math.max(1, Math.floor(links / LINKS_PER_REFERRER))}`;

/** Link `i`'s item as `createLink` builds it, with the clicks its visits leave. */
export function linkItemOf(spec: CampaignSpec, t: Traffic, i: number): StoredLinkItem {
  const { tenant, campaignId, campaignUrl } = spec;
  const [id, code, referrerId] = [spec.firstLinkId + i, codeOf(spec.codeTag, i), referrerOf(i, spec.links)];
  const now = new Date(spec.nowMs - SPAN_MS - DAY_MS + i);
  return {
    ...newLinkItem({ tenant, campaignId, campaignUrl, id, code, referrerId, now }),
    total_clicks: t.visits[i]!,
  };
}

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
  const [visits, feed, events]: [object[], object[], EventAttributes[]] = [[], [], []];
  const metadata = { user_agent: BROWSER, referer: 'https://news.example.org/post/1' };
  for (let j = from; j < to; j++) {
    const i = t.link[j]!;
    state.clicks[i]! += 1;
    const link = { ...linkItemOf(spec, t, i), total_clicks: state.clicks[i]! };
    const action = {
      id: spec.firstActionId + j,
      at: new Date(t.at[j]!).toISOString(),
      action_type: 'visit',
      metadata,
    };
    const { item } = newVisitItem(link, { ...action, referred_user: null }, t.unique[j] === 1);
    visits.push(item);
    events.push(item);
    if (events.length === FEED_PACK || j === to - 1) {
      feed.push(
        newFeedPackItem(events, feedSequenceOf(t, j - events.length + 1), Math.floor(spec.nowMs / 1000)),
      );
      events.length = 0;
    }
  }
  return { visits, feed };
}

/** The feed sequence of event `j` (in time order): the campaign's feed counter started at the first event's time in microseconds. */
const feedSequenceOf = (t: Traffic, j: number) => t.at[0]! * 1000 + 1 + j;
/** The same, as a cursor holds it. */
export const feedCursorSequenceOf = (t: Traffic, j: number) => formatSequence(feedSequenceOf(t, j));

/**
 * The series and ranking items the rollup consumer derives from the visits, summed: how many of
 * each, and the items themselves, built as they are written (a million visits make about a
 * million of them; only their counts are held meanwhile).
 */
export function rollups(spec: CampaignSpec, t: Traffic) {
  // Per series item: its key (built once: a SHA-256 per referrer key) and its counts by attribute,
  // held by a cheap key of scope and day.
  const series = new Map<string, { key: { PK: string; SK: string }; counts: Record<string, number> }>();
  type Top = { entity: TopEntity; metric: analytics.TopMetric; value: number; reach: number };
  const tops = new Map<string, Top>();
  const add = (counts: Record<string, number>, name: string) => {
    counts[name] = (counts[name] ?? 0) + 1;
  };
  for (let j = 0; j < t.link.length; j++) {
    const [i, at, unique] = [t.link[j]!, new Date(t.at[j]!), t.unique[j] === 1];
    const referrerId = referrerOf(i, spec.links);
    const day = analytics.bucketOf(at, 'day');
    const scopes: Array<[string, analytics.Scope]> = [
      ['C', { kind: 'campaign' }],
      [`L${i}`, { kind: 'link', linkId: spec.firstLinkId + i }],
      [`R${referrerId}`, { kind: 'referrer', referrerId }],
    ];
    for (const [tag, scope] of scopes) {
      if (!series.has(`${tag}|${day}`))
        series.set(`${tag}|${day}`, {
          key: analytics.seriesKey(spec.tenant, spec.campaignId, scope, day),
          counts: {},
        });
      const { counts } = series.get(`${tag}|${day}`)!;
      for (const metric of unique ? (['visits', 'unique_visits'] as const) : (['visits'] as const)) {
        add(counts, analytics.seriesAttribute(at.getUTCHours(), metric));
        add(counts, analytics.dayTotalAttribute(metric));
      }
    }
    const entityOf = (tag: string): TopEntity => {
      if (tag.startsWith('R')) return { by: 'referrer', referrerId };
      const stored = linkItemOf(spec, t, i);
      return {
        by: 'referral_link',
        linkId: stored.id,
        code: stored.referral_code,
        url: toLink(stored).referral_link,
      };
    };
    for (const tag of [`L${i}`, `R${referrerId}`])
      for (const metric of unique ? (['visits', 'unique_visits'] as const) : (['visits'] as const)) {
        if (!tops.has(`${tag}|${metric}`))
          tops.set(`${tag}|${metric}`, { entity: entityOf(tag), metric, value: 0, reach: 0 });
        const entry = tops.get(`${tag}|${metric}`)!;
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
      for (const { entity, metric, value, reach } of tops.values())
        yield {
          ...topKey(spec.tenant, spec.campaignId, entity, metric),
          ...topAttributes(spec.tenant, spec.campaignId, entity, metric, value, reach),
        };
    },
  };
}
