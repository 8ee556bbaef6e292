import { getLiveLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { GetLinkQuery } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler({ query: GetLinkQuery }, async ({ tenant, query }) => {
  if (!query.id && !query.referral_code) {
    throw new ApiError('missing_parameter', 'Give id or referral_code.', [
      { field: 'id', message: 'id or referral_code is required' },
    ]);
  }
  // Both given: the code finds the link, and the id must name the same one.
  const link = await getLiveLink(
    query.referral_code ? { code: query.referral_code } : { id: Number(query.id) },
    tenant,
  );
  if (query.id && query.referral_code && link.id !== Number(query.id)) throw linkNotFound();
  return { status: 200, body: toLink(link) };
});
