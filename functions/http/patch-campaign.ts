import { config } from '../../lib/config.ts';
import { updateCampaign } from '../../lib/db/campaigns.ts';
import { campaignUpdateInput, urlImmutable } from '../../lib/domain/campaign-rules.ts';
import { CampaignIdQuery, UpdateCampaignBody } from '../../lib/domain/schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { checkWebhookDestination } from '../../lib/webhooks/ssrf.ts';

const policy = { allowPrivate: config.allowPrivateWebhooks };

export const handler = httpHandler(
  {
    requiredQuery: ['id'],
    query: CampaignIdQuery,
    body: UpdateCampaignBody,
    bodyOptional: true,
    refusedFields: { url: urlImmutable },
  },
  async ({ tenant, query, body }) => {
    const changes = campaignUpdateInput(body, policy);
    await checkWebhookDestination(changes.webhook_url, policy);
    return { status: 200, body: await updateCampaign(tenant, query.id, changes) };
  },
);
