import { Type } from '@sinclair/typebox';
import { listLinks } from '../../lib/db/links.ts';
import { ListQuery, USER_ID_PATTERN } from '../../lib/domain/link-schemas.ts';
import { Uuid } from '../../lib/domain/schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { compileValidator } from '../../lib/http/validate.ts';

const validatePath = compileValidator(
  Type.Object({
    campaign_id: Uuid,
    referrer_id: Type.String({
      pattern: USER_ID_PATTERN,
      description: '1-256 characters without control characters',
    }),
  }),
);

export const handler = httpHandler({ query: ListQuery }, async ({ tenant, query, path, event }) => {
  const { campaign_id, referrer_id } = validatePath(path);
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { referrerId: referrer_id, limit, cursor: query.cursor });
  return listResult(page, event.rawPath, limit);
});
