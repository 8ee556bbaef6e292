import { isbot } from 'isbot';
import { newAction } from '../../lib/db/actions.ts';
import type { ClickSettings } from '../../lib/db/entities/campaign.ts';
import {
  campaignKnownLive,
  hotLinkFor,
  rememberHotLink,
  rememberLiveCampaign,
} from '../../lib/db/hot-links.ts';
import { findLink, type LinkItem, linkNotFound, toLink } from '../../lib/db/links.ts';
import { isUniqueVisit, markVisitor, recordBotVisit, recordVisit } from '../../lib/db/visits.ts';
import { CLICK_ID_PARAM, encodeClickId, newClickSecret } from '../../lib/domain/click-ids.ts';
import { toAsciiUrl, withParamAfterRfa } from '../../lib/domain/url.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { Visit } from '../../lib/operations/compiled.ts';

/** Header values kept in a visit's metadata are bounded, so metadata stays well under 8 KiB. */
const MAX_HEADER_CHARS = 1024;

/**
 * `GET /r/{referral_code}`, public: 302 to the link's URL, and a visit recorded as an item
 * (`lib/db/visits.ts`): a `visit` action for a person, a bot visit for bots (crawlers, link
 * previews, HTTP libraries, as the `isbot` list knows them) and HEAD requests, counted apart and
 * never in `total_clicks`. Unique visits are told by a keyed hash of IP address and user agent;
 * no IP address is stored. A malformed code is a 404 like an unknown one. A visit is unique when
 * no written visit of the same visitor and link came in the hour before (`isUniqueVisit`).
 *
 * Every human visit item is also a click (it keeps a secret); when its campaign has `click_ids`
 * on, the `Location` names it (`rfclid`). The setting comes from the campaign read the visit makes
 * anyway, beside its Put (or from the hot-link cache): no call more.
 */
// No `request` line for a redirect (`requestLog`): its access log line has the status and latency.
export const handler = httpHandler({ ...Visit, requestLog: 'errors' }, async ({ event, path }) => {
  const code = path.referral_code;
  const userAgent = event.headers['user-agent'];
  const person = event.requestContext.http.method !== 'HEAD' && !isbot(userAgent);
  const now = new Date();
  // A hot code's link and campaign as read less than a second ago (`lib/db/hot-links.ts`).
  const hot = hotLinkFor(code, now.getTime());
  if (person) {
    const referer = event.headers.referer;
    const metadata: Record<string, string> = {};
    if (userAgent) metadata.user_agent = userAgent.slice(0, MAX_HEADER_CHARS);
    if (referer) metadata.referer = referer.slice(0, MAX_HEADER_CHARS);
    // The id first: the marker names the visit by it.
    const action = await newAction('visit', metadata, null);
    const visit = { at: now.getTime(), vid: action.id };
    // The visitor's marker is written beside the link read: a marker of an unknown code is harmless.
    const [link, before] = await Promise.all([
      hot?.link ?? readLink(code),
      markVisitor(code, event.requestContext.http.sourceIp, userAgent ?? '', visit, now),
    ]);
    if (!link) throw linkNotFound();
    const unique = await isUniqueVisit(link, before, visit);
    // The campaign's existence is read from here (unless its link or itself is hot): what a
    // cached entry's age counts from.
    const known = hot?.campaign ?? campaignKnownLive(link, now.getTime());
    const checkedAt = Date.now();
    const secret = newClickSecret();
    const campaign = await recordVisit(link, action, unique, known, secret, before.visitor);
    if (!campaign) throw linkNotFound();
    remember(link, hot !== undefined, known, campaign, checkedAt);
    const clickId = campaign.clickIds
      ? encodeClickId({ campaignId: link.campaign_id, visitId: action.id, code: link.referral_code, secret })
      : undefined;
    return redirectTo(link, clickId);
  }
  const link = hot?.link ?? (await readLink(code));
  if (!link) throw linkNotFound();
  const known = hot?.campaign ?? campaignKnownLive(link, now.getTime());
  const checkedAt = Date.now();
  // A deleted campaign's links are gone for everyone.
  const campaign = await recordBotVisit(link, now, known);
  if (!campaign) throw linkNotFound();
  remember(link, hot !== undefined, known, campaign, checkedAt);
  return redirectTo(link);
});

/** What a visit that read its link or its campaign keeps for the next visits (`lib/db/hot-links.ts`). */
function remember(
  link: LinkItem,
  hot: boolean,
  known: ClickSettings | undefined,
  campaign: ClickSettings,
  checkedAt: number,
) {
  if (hot) return;
  rememberHotLink(link, campaign, checkedAt);
  if (!known) rememberLiveCampaign(link, campaign, checkedAt);
}

/**
 * The link by code, strongly consistent. An eventually consistent read (half a read unit) with a
 * strongly consistent one again on a miss would save 0.5 RRU, about $0.06 per million visits of
 * ordinary links (hot ones are not read per visit at all), some 2 % of a visit: too little for
 * what it opens. A code issued again after its campaign's purge could read as the old link of the
 * deleted campaign, and answer 404 for a live link unless a second read followed that case too.
 */
function readLink(code: string) {
  return findLink({ code }, undefined);
}

/**
 * The `Location` is made from the link as read, so a visit is recorded only for a request that gets
 * its redirect; a click id goes right after `rfa`.
 */
function redirectTo(link: LinkItem, clickId?: string) {
  const referralLink = toLink(link).referral_link ?? '';
  const target = clickId ? withParamAfterRfa(referralLink, CLICK_ID_PARAM, clickId) : referralLink;
  const location = toAsciiUrl(target);
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
}
