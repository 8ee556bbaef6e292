import { getLiveLink, linkNotFound, toLink } from '../../lib/db/links.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { GetLinkQuery } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { compileValidator } from '../../lib/http/validate.ts';

const validateQuery = compileValidator(GetLinkQuery);

export const handler = httpHandler({}, async ({ tenant, event }) => {
  // An empty parameter counts as absent, as for every other required query parameter (`?id=`).
  const present = Object.fromEntries(
    Object.entries(event.queryStringParameters ?? {}).filter(([, v]) => typeof v === 'string' && v !== ''),
  );
  if (!present.id && !present.referral_code) {
    throw new ApiError('missing_parameter', 'Give id or referral_code.', [
      { field: 'id', message: 'id or referral_code is required' },
    ]);
  }
  const query = validateQuery(present);
  // Both given: the code finds the link, and the id must name the same one.
  const link = await getLiveLink(
    query.referral_code ? { code: query.referral_code } : { id: Number(query.id) },
    tenant,
  );
  if (query.id && query.referral_code && link.id !== Number(query.id)) throw linkNotFound();
  return { status: 200, body: toLink(link) };
});
