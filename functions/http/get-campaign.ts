import { getCampaign } from '../../lib/db/campaigns.ts';
import { CampaignIdQuery } from '../../lib/domain/schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler(
  { requiredQuery: ['id'], query: CampaignIdQuery },
  async ({ tenant, query }) => ({
    status: 200,
    body: await getCampaign(tenant, query.id),
  }),
);
