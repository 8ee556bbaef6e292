import { isbot } from 'isbot';
import { findLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { markVisitor, recordBotVisit, recordVisit } from '../../lib/db/visits.ts';
import { toAsciiUrl } from '../../lib/domain/url.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent, metricsMiddleware } from '../../lib/observability/metrics.ts';
import { Visit } from '../../lib/operations/compiled.ts';

/** Header values kept in a visit's metadata are bounded, so metadata stays well under 8 KiB. */
const MAX_HEADER_CHARS = 1024;

/**
 * `GET /r/{referral_code}`, public: 302 to the link's URL, and a visit recorded as an item
 * (`lib/db/visits.ts`): a `visit` action for a person, a bot visit for bots (crawlers, link
 * previews, HTTP libraries, as the `isbot` list knows them) and HEAD requests, counted apart and
 * never in `total_clicks`. Unique visits are told by a keyed hash of IP address and user agent;
 * no IP address is stored. The `Location` is made from the link as read, so a visit is recorded
 * only for a request that gets its redirect. A malformed code is a 404 like an unknown one.
 */
// No `request` line for a redirect (`requestLog`): its access log line has the status and latency.
export const handler = httpHandler(
  { ...Visit, metrics: metricsMiddleware(), requestLog: 'errors' },
  async ({ event, path }) => {
    const code = path.referral_code;
    const userAgent = event.headers['user-agent'];
    const person = event.requestContext.http.method !== 'HEAD' && !isbot(userAgent);
    const now = new Date();
    // The visitor's marker is written beside the link read: a marker of an unknown code is harmless.
    const [link, unique] = await Promise.all([
      findLink({ code }, undefined),
      person ? markVisitor(code, event.requestContext.http.sourceIp, userAgent ?? '', now) : false,
    ]);
    if (!link) throw linkNotFound();
    const location = toAsciiUrl(toLink(link).referral_link ?? '');
    if (person) {
      const referer = event.headers.referer;
      const metadata: Record<string, string> = {};
      if (userAgent) metadata.user_agent = userAgent.slice(0, MAX_HEADER_CHARS);
      if (referer) metadata.referer = referer.slice(0, MAX_HEADER_CHARS);
      if (!(await recordVisit(link, metadata, unique))) throw linkNotFound();
      countEvent(BusinessMetric.VisitsRecorded);
    } else if (!(await recordBotVisit(link, now))) {
      // A deleted campaign's links are gone for everyone.
      throw linkNotFound();
    }
    return { status: 302, headers: { location, 'cache-control': 'no-store' } };
  },
);
