import { getConversion } from '../../lib/db/conversions.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetConversion } from '../../lib/operations/compiled.ts';

/** Endpoint 25. */
export const handler = httpHandler(GetConversion, async ({ tenant, query }) => ({
  status: 200,
  body: await getConversion(tenant, query.id),
}));
