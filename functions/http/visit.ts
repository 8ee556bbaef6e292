import { createLinkAction } from '../../lib/db/actions.ts';
import { getLiveLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { isBot } from '../../lib/domain/link-rules.ts';
import { CODE_PATTERN } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

const codePattern = new RegExp(CODE_PATTERN);
/** Header values kept in a visit's metadata are bounded, so metadata stays well under 8 KiB. */
const MAX_HEADER_CHARS = 1024;

/**
 * `GET /r/{referral_code}`, public: 302 to the link's URL and a `visit` action. HEAD requests and
 * crawlers or link previews are redirected without being counted. No IP address is stored.
 */
export const handler = httpHandler({ auth: false }, async ({ event, path }) => {
  const code = path.referral_code ?? '';
  if (!codePattern.test(code)) throw linkNotFound();
  const userAgent = event.headers['user-agent'];
  const referer = event.headers.referer;
  let location: string;
  if (event.requestContext.http.method === 'HEAD' || isBot(userAgent)) {
    location = toLink(await getLiveLink({ code }, undefined)).referral_link ?? '';
  } else {
    const metadata: Record<string, string> = {};
    if (userAgent) metadata.user_agent = userAgent.slice(0, MAX_HEADER_CHARS);
    if (referer) metadata.referer = referer.slice(0, MAX_HEADER_CHARS);
    const action = await createLinkAction(undefined, { code }, { actionType: 'visit', metadata });
    countEvent(BusinessMetric.VisitsRecorded);
    location = action.referral_link.referral_link ?? '';
  }
  return { status: 302, headers: { location, 'cache-control': 'no-store' } };
});
