import { createCampaign } from '../../lib/db/campaigns.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { campaignCreateInput } from '../../lib/domain/campaign-rules.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { CreateCampaign } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...CreateCampaign, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => ({
    status: 201,
    body: await createCampaign(tenant, campaignCreateInput(body), idempotency),
  }),
);
