/** The analytics part's campaign and its items, built with the writers' builders; the rollups summed here. */
import * as an from '../../lib/db/entities/analytics.ts';
import { newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { newLinkItem, type StoredLinkItem } from '../../lib/db/entities/link.ts';
import { newVisitItem } from '../../lib/db/entities/visit.ts';
import { formatSequence, newFeedPackItem } from '../../lib/db/entities/webhook-event.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import type { EventAttributes } from '../../lib/domain/webhook-events.ts';
import { random } from './stats.ts';
import { BROWSER, codeOf } from './traffic.ts';

const [HOUR_MS, DAY_MS] = [3_600_000, 86_400_000];
const [BURST_HOURS, LINKS_PER_REFERRER, UNIQUE_SHARE] = [6, 4, 0.8];
/** Visits fall in the last 29 days: all inside a 30-day series asked for later, whatever the day. */
const SPAN_MS = 29 * DAY_MS;
/** Events per feed item: what one feed write takes from a stream batch at a few hundred visits a second. */
export const FEED_PACK = 50;
/** The `type` of each rollup item (`lib/analytics/`, not importable here: it loads the table client); the sample check catches a drift. */
const TYPES = { series: 'analytics_series', referrer: 'analytics_referrer', board: 'analytics_board' };
/** First ids reserved from the table's sequences, visits in the 30 days before `nowMs`, codes unique by `codeTag`. */
export type CampaignSpec = Record<'tenant' | 'campaignId' | 'campaignUrl' | 'codeTag', string> & Counts;
type Counts = Record<'links' | 'events' | 'firstLinkId' | 'firstActionId' | 'nowMs' | 'seed', number>;

/** Visits per link, and per visit (in time order) its link, time and uniqueness. */
export type Traffic = { visits: Int32Array; link: Int32Array; at: Float64Array; unique: Uint8Array };
export function traffic(spec: CampaignSpec): Traffic {
  const rnd = random(spec.seed);
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
  const [link, at] = [Int32Array.from(order, (j) => linkOf[j]!), Float64Array.from(order, (j) => atOf[j]!)];
  return { visits, link, at, unique };
}

export function campaignOf(spec: CampaignSpec) {
  const created = new Date(spec.nowMs - SPAN_MS - DAY_MS);
  const campaign = { id: spec.campaignId, created_at: formatTimestamp(created), url: spec.campaignUrl };
  const webhooks = { webhook_url: null, webhook_secret: null, webhook_events: [] };
  const status = { webhook_status: 'enabled', webhook_disabled_reason: null } as const;
  return newCampaignItem(spec.tenant, { ...campaign, name: 'Analytics', ...webhooks, ...status }, created);
}

const referrers = (links: number) => Math.max(1, Math.floor(links / LINKS_PER_REFERRER));
const referrerOf = (i: number, links: number) => `referrer-${i % referrers(links)}`;
/** Link `i`'s item as `createLink` builds it. */
export function linkItemOf(spec: CampaignSpec, i: number): StoredLinkItem {
  const [id, code, referrerId] = [spec.firstLinkId + i, codeOf(spec.codeTag, i), referrerOf(i, spec.links)];
  const now = new Date(spec.nowMs - SPAN_MS - DAY_MS + i);
  return newLinkItem({ ...spec, id, code, referrerId, now });
}

/** Visit and feed items of visits `from` (a multiple of `FEED_PACK`) to `to`; `clicks`: each link's so far. */
export function eventItems(spec: CampaignSpec, t: Traffic, from: number, to: number, clicks: Int32Array) {
  const [visits, feed, events]: [object[], object[], EventAttributes[]] = [[], [], []];
  const metadata = { user_agent: BROWSER, referer: 'https://news.example.org/post/1' };
  for (let j = from; j < to; j++) {
    const i = t.link[j]!;
    const link = { ...linkItemOf(spec, i), total_clicks: ++clicks[i]! };
    const at = new Date(t.at[j]!).toISOString();
    const action = { id: spec.firstActionId + j, at, metadata, action_type: 'visit', referred_user: null };
    const { item } = newVisitItem(link, action, !!t.unique[j]);
    visits.push(item);
    events.push(item);
    if (events.length === FEED_PACK || j === to - 1) {
      const first = feedSequenceOf(t, j - events.length + 1);
      feed.push(newFeedPackItem(events, first, Math.floor(spec.nowMs / 1000)));
      events.length = 0;
    }
  }
  return { visits, feed };
}

/** The feed sequence of event `j`: the campaign's feed counter started at the first event's time in µs. */
const feedSequenceOf = (t: Traffic, j: number) => t.at[0]! * 1000 + 1 + j;
export const feedCursorSequenceOf = (t: Traffic, j: number) => formatSequence(feedSequenceOf(t, j));
const METRICS = ['visits', 'unique_visits'] as const;
type Metric = (typeof METRICS)[number];
/** All-time counts of entities (links or referrers) by metric, each with its reach: its last raise. */
type Totals = Record<Metric, { count: Int32Array; reach: Float64Array }>;
const totals = (n: number): Totals => ({
  visits: { count: new Int32Array(n), reach: new Float64Array(n) },
  unique_visits: { count: new Int32Array(n), reach: new Float64Array(n) },
});
const raise = (of: Totals[Metric], i: number, at: number) => {
  of.count[i]! += 1;
  of.reach[i] = at;
};
/** Entity `i`'s attributes under `names` (`LINK_TOTALS`, `REFERRER_TOTALS`): counts above zero only, as `ADD` leaves them. */
function attributesOf(t: Totals, i: number, names: typeof an.LINK_TOTALS) {
  const out: Record<string, number> = {};
  for (const m of METRICS) {
    if (!t[m].count[i]) continue;
    out[names[m].count] = t[m].count[i]!;
    out[names[m].reach] = t[m].reach[i]!;
  }
  return out;
}

/** The counting consumer's items for these visits, summed (`lib/analytics/rollup-items.ts`). */
export function rollups(spec: CampaignSpec, t: Traffic) {
  const { tenant, campaignId } = spec;
  const mark = { [an.highWaterAttribute('bench')]: an.highWaterValue('1', spec.nowMs) };
  // Per series item its key (built once: a referrer's is a SHA-256) and counts, by scope and day.
  const series = new Map<string, { key: { PK: string; SK: string }; counts: Record<string, number> }>();
  const [links, refs] = [totals(spec.links), totals(referrers(spec.links))];
  for (let j = 0; j < t.link.length; j++) {
    const [i, at] = [t.link[j]!, new Date(t.at[j]!)];
    const [r, day, hour] = [i % referrers(spec.links), an.bucketOf(at, 'day'), at.getUTCHours()];
    const metrics = t.unique[j] ? METRICS : METRICS.slice(0, 1);
    const scopes: Array<[string, an.Scope]> = [
      ['C', { kind: 'campaign' }],
      [`L${i}`, { kind: 'link', linkId: spec.firstLinkId + i }],
      [`R${r}`, { kind: 'referrer', referrerId: referrerOf(i, spec.links) }],
    ];
    for (const [tag, scope] of scopes) {
      const id = `${tag}|${day}`;
      if (!series.has(id)) series.set(id, { key: an.seriesKey(tenant, campaignId, scope, day), counts: {} });
      const { counts } = series.get(id)!;
      for (const name of metrics.flatMap((m) => [an.seriesAttribute(hour, m), an.dayTotalAttribute(m)]))
        counts[name] = (counts[name] ?? 0) + 1;
    }
    for (const m of metrics) {
      raise(links[m], i, t.at[j]!);
      raise(refs[m], r, t.at[j]!);
    }
  }
  /** One ranking's board: its first `BOARD_SIZE` entities (those counted), as `mergeBoards` leaves it. */
  const board = (by: an.TopBy, m: Metric, of: Totals, entry: (i: number) => { k: string; label: string }) => {
    const entries = Array.from(of[m].count, (value, i) => ({ ...entry(i), value, reachMs: of[m].reach[i]! }));
    const counted = entries.filter((e) => e.value > 0);
    const top = counted.sort(an.compareBoardEntries).slice(0, an.BOARD_SIZE);
    const item = { ...an.boardKey(tenant, campaignId, by, m), type: TYPES.board, version: 1 };
    return top.length ? [{ ...item, entries: an.storedBoardEntries(top) }] : [];
  };
  const referrerId = (r: number) => `referrer-${r}`;
  const link = (i: number) => ({ k: `L${spec.firstLinkId + i}`, label: codeOf(spec.codeTag, i) });
  const referrer = (r: number) => ({ k: `R${an.referrerHash(referrerId(r))}`, label: referrerId(r) });
  const boards = METRICS.flatMap((m) =>
    board('referral_link', m, links, link).concat(board('referrer', m, refs, referrer)),
  );
  return {
    series: series.size,
    referrers: refs.visits.count.filter((n) => n > 0).length,
    boards: boards.length,
    linkItem(i: number): Record<string, unknown> {
      const added = links.visits.count[i] ? { total_clicks: links.visits.count[i], ...mark } : {};
      return { ...linkItemOf(spec, i), ...added, ...attributesOf(links, i, an.LINK_TOTALS) };
    },
    /** The rollup items of the campaign's partition (a million visits make about a million). */
    *items(): Generator<Record<string, unknown>> {
      for (const { key, counts } of series.values()) yield { ...key, type: TYPES.series, ...counts, ...mark };
      for (let r = 0; r < refs.visits.count.length; r++) {
        if (!refs.visits.count[r]) continue;
        const key = an.referrerTotalsKey(tenant, campaignId, referrerId(r));
        yield { ...key, type: TYPES.referrer, ...attributesOf(refs, r, an.REFERRER_TOTALS), ...mark };
      }
      yield* boards;
    },
  };
}
