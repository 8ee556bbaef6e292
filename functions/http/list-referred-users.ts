import type { ReferredUserFilter } from '../../lib/db/referred-users.ts';
import { listReferredUsers } from '../../lib/db/referred-users.ts';
import { validationError } from '../../lib/domain/errors.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { ListReferredUsers } from '../../lib/operations/compiled.ts';
import { routeNamed } from '../../lib/routes.ts';

const route = routeNamed('ListReferredUsers');

/** Endpoint 33: a campaign's referred users, newest first, whole or one link's or referrer's. */
export const handler = httpHandler(ListReferredUsers, async ({ tenant, query, path }) => {
  const { campaign_id } = path;
  const { referral_link_id, referrer_id } = query;
  if (referral_link_id !== undefined && referrer_id !== undefined) {
    throw validationError([
      { field: 'referrer_id', message: 'give at most one of referral_link_id and referrer_id' },
    ]);
  }
  const filter: ReferredUserFilter =
    referral_link_id !== undefined
      ? { kind: 'link', linkId: Number(referral_link_id) }
      : referrer_id !== undefined
        ? { kind: 'referrer', referrerId: referrer_id }
        : { kind: 'campaign' };
  const limit = limitOf(query);
  const page = await listReferredUsers(tenant, campaign_id, { filter, limit, cursor: query.cursor });
  // The filter stays in the next page's URL: the cursor works only with it.
  const filters: Record<string, string> =
    referral_link_id !== undefined ? { referral_link_id } : referrer_id !== undefined ? { referrer_id } : {};
  return listResult(page, { path: route.path, params: { campaign_id } }, limit, filters);
});
