/**
 * The redirect's per-process cache of hot links: for a code this process serves often, the link as
 * read by code and the fact that its campaign existed, kept for at most `HOT_LINK_CACHE_MS`. A
 * viral link then costs each warm container one link read and one campaign read a second, not
 * one of each per visit on the same two items. Every other code is read fresh on every visit, so
 * an ordinary link of a deleted campaign answers 404 at once; a hot one may redirect for up to a
 * second more (docs/decisions.md, "The public redirect", says why that is acceptable).
 */
import type { ClickSettings } from './entities/campaign.ts';
import type { LinkItem } from './entities/link.ts';

/**
 * Visits of one code in the current or the previous whole second from which this process caches
 * it. In Lambda a container serves one request at a time, about 30 a second at most: 20 means the
 * code is most of that container's traffic, which is when its two reads a visit are worth saving.
 * An ordinary link (a few visits a minute) never gets there, so it keeps its exact reads.
 */
export const HOT_LINK_VISITS_PER_SECOND = 20;
/** How long a cached link and its campaign's existence are used, from the moment the campaign was read. */
export const HOT_LINK_CACHE_MS = 1_000;

interface Cached {
  link: LinkItem;
  /** Its campaign's click settings, as that read found them (a PATCH shows within the entry's age). */
  campaign: ClickSettings;
  /**
   * When the read that found its campaign was sent (epoch ms): its age counts from there. The link
   * was read before it, but a link's item changes only in its counters while its campaign lives
   * (it is replaced only by the purge of a deleted campaign), so the campaign read is what dates it.
   */
  readAt: number;
}

/**
 * Visits per code, and per campaign, in fixed one-second windows; only two are kept, so memory
 * follows the traffic.
 */
let windowStart = 0;
let current = new Map<string, number>();
let previous = new Map<string, number>();
const cached = new Map<string, Cached>();
/** Campaigns of hot traffic spread over their links: when their existence was last read, and their click settings. */
const liveCampaigns = new Map<string, { readAt: number; campaign: ClickSettings }>();

function roll(now: number): void {
  if (now - windowStart < 1_000) return;
  previous = now - windowStart < 2_000 ? current : new Map();
  current = new Map();
  windowStart = now - (now % 1_000);
  for (const [code, entry] of cached) if (now - entry.readAt >= HOT_LINK_CACHE_MS) cached.delete(code);
  for (const [campaign, { readAt }] of liveCampaigns)
    if (now - readAt >= HOT_LINK_CACHE_MS) liveCampaigns.delete(campaign);
}

function isHot(key: string): boolean {
  return (
    (current.get(key) ?? 0) >= HOT_LINK_VISITS_PER_SECOND ||
    (previous.get(key) ?? 0) >= HOT_LINK_VISITS_PER_SECOND
  );
}

/** A campaign's key among the codes (a campaign id is a UUID: no code looks like it). */
const campaignOf = (link: LinkItem) => `C ${link.tenant}\u0000${link.campaign_id}`;

/**
 * Count a visit of `link`'s campaign, and tell whether its existence was read less than
 * `HOT_LINK_CACHE_MS` ago while the campaign was hot in this process: traffic spread over many of
 * a campaign's links is as hot on its one campaign item as a viral link, so the existence check is
 * kept per campaign too (a link is still read per visit unless its own code is hot).
 */
export function campaignKnownLive(link: LinkItem, now: number): ClickSettings | undefined {
  roll(now);
  const campaign = campaignOf(link);
  current.set(campaign, (current.get(campaign) ?? 0) + 1);
  const entry = liveCampaigns.get(campaign);
  return entry !== undefined && isHot(campaign) && now - entry.readAt < HOT_LINK_CACHE_MS
    ? entry.campaign
    : undefined;
}

/**
 * Keep that `link`'s campaign was found to exist, with `campaign`'s click settings, by a read sent
 * at `readAt`, if the campaign is hot.
 */
export function rememberLiveCampaign(link: LinkItem, campaign: ClickSettings, readAt: number): void {
  if (isHot(campaignOf(link))) liveCampaigns.set(campaignOf(link), { readAt, campaign });
}

/**
 * Count a visit of `code` and return its cached link when the code is hot and the entry younger
 * than `HOT_LINK_CACHE_MS`; undefined means: read the link and its campaign.
 */
export function hotLinkFor(code: string, now: number): Omit<Cached, 'readAt'> | undefined {
  roll(now);
  current.set(code, (current.get(code) ?? 0) + 1);
  const entry = cached.get(code);
  if (!entry || !isHot(code)) return undefined;
  if (now - entry.readAt >= HOT_LINK_CACHE_MS) {
    cached.delete(code);
    return undefined;
  }
  return { link: entry.link, campaign: entry.campaign };
}

/**
 * Keep `link`, whose campaign was found to exist by a read sent at `readAt`, if its code is hot. Only links of live campaigns: an unknown code or a deleted campaign is never cached, so a
 * link created a moment ago cannot be answered 404 from here.
 */
export function rememberHotLink(link: LinkItem, campaign: ClickSettings, readAt: number): void {
  if (isHot(link.referral_code)) cached.set(link.referral_code, { link, campaign, readAt });
}
