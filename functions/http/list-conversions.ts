import { listConversions } from '../../lib/db/conversions.ts';
import { validationError } from '../../lib/domain/errors.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListConversions } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListConversions');

/** Endpoint 26: a campaign's conversions, newest first, all or of one referrer or referred user. */
export const handler = httpHandler(ListConversions, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const { referrer_id, referred_user_id } = query;
  if (referrer_id !== undefined && referred_user_id !== undefined) {
    throw validationError([
      { field: 'referred_user_id', message: 'give at most one of referrer_id and referred_user_id' },
    ]);
  }
  const limit = limitOf(query);
  const page = await listConversions(tenant, campaign_id, {
    limit,
    cursor: query.cursor,
    referrerId: referrer_id,
    referredUserId: referred_user_id,
  });
  const filters: Record<string, string> =
    referrer_id !== undefined ? { referrer_id } : referred_user_id !== undefined ? { referred_user_id } : {};
  return listResult(page, { path: route.path, params: { campaign_id } }, limit, filters);
});
