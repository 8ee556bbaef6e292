import { deleteCampaign } from '../../lib/db/campaigns.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { DeleteCampaign } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(DeleteCampaign, async ({ tenant, query }) => {
  await deleteCampaign(tenant, query.id);
  return { status: 204 };
});
