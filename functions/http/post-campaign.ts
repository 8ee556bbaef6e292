import { createCampaign } from '../../lib/db/campaigns.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { campaignCreateInput } from '../../lib/domain/campaign-rules.ts';
import { CreateCampaignBody } from '../../lib/domain/schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler(
  { body: CreateCampaignBody, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => ({
    status: 201,
    body: await createCampaign(tenant, campaignCreateInput(body), idempotency),
  }),
);
