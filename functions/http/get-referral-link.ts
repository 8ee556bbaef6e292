import { getLiveLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetReferralLink } from '../../lib/operations/compiled.ts';

/** At least one of `id` and `referral_code` (the operation's rule, enforced by httpHandler). */
export const handler = httpHandler(GetReferralLink, async ({ tenant, query }) => {
  // Both given: the code finds the link, and the id must name the same one.
  const link = await getLiveLink(
    query.referral_code ? { code: query.referral_code } : { id: Number(query.id) },
    tenant,
  );
  if (query.id && query.referral_code && link.id !== Number(query.id)) throw linkNotFound();
  return { status: 200, body: toLink(link) };
});
