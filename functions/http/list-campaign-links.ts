import { Type } from '@sinclair/typebox';
import { listLinks } from '../../lib/db/links.ts';
import { ListQuery } from '../../lib/domain/link-schemas.ts';
import { Uuid } from '../../lib/domain/schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { limitOf, listResult } from '../../lib/http/lists.ts';
import { compileValidator } from '../../lib/http/validate.ts';

const validatePath = compileValidator(Type.Object({ campaign_id: Uuid }));

export const handler = httpHandler({ query: ListQuery }, async ({ tenant, query, path, event }) => {
  const { campaign_id } = validatePath(path);
  const limit = limitOf(query);
  const page = await listLinks(tenant, campaign_id, { limit, cursor: query.cursor });
  return listResult(page, event.rawPath, limit);
});
