import { isbot } from 'isbot';
import { recordLinkAction } from '../../lib/db/actions.ts';
import { campaignExists } from '../../lib/db/campaigns.ts';
import { findLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { toAsciiUrl } from '../../lib/domain/url.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent, metricsMiddleware } from '../../lib/observability/metrics.ts';
import { Visit } from '../../lib/operations/compiled.ts';

/** Header values kept in a visit's metadata are bounded, so metadata stays well under 8 KiB. */
const MAX_HEADER_CHARS = 1024;

/**
 * `GET /r/{referral_code}`, public: 302 to the link's URL and a `visit` action. HEAD requests and
 * bots (crawlers, link previews, HTTP libraries, as the `isbot` list knows them) are redirected
 * without being counted. No IP address is stored. The `Location` is made from the link as read,
 * before the visit is written, so a visit is counted only for a request that gets its redirect.
 * A malformed code is a 404 like an unknown one (the operation's `pathNotFound`).
 */
export const handler = httpHandler({ ...Visit, metrics: metricsMiddleware() }, async ({ event, path }) => {
  const code = path.referral_code;
  const link = await findLink({ code }, undefined);
  if (!link) throw linkNotFound();
  const location = toAsciiUrl(toLink(link).referral_link ?? '');
  const userAgent = event.headers['user-agent'];
  if (event.requestContext.http.method === 'HEAD' || isbot(userAgent)) {
    // Not counted, but a deleted campaign's links are gone for everyone.
    if (!(await campaignExists(link.tenant, link.campaign_id))) throw linkNotFound();
  } else {
    const referer = event.headers.referer;
    const metadata: Record<string, string> = {};
    if (userAgent) metadata.user_agent = userAgent.slice(0, MAX_HEADER_CHARS);
    if (referer) metadata.referer = referer.slice(0, MAX_HEADER_CHARS);
    await recordLinkAction(link, { actionType: 'visit', metadata });
    countEvent(BusinessMetric.VisitsRecorded);
  }
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
});
