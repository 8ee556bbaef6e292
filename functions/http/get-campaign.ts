import { getCampaign } from '../../lib/db/campaigns.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetCampaign } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(GetCampaign, async ({ tenant, query }) => ({
  status: 200,
  body: await getCampaign(tenant, query.id),
}));
