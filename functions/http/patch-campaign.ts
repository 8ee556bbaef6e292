import { config } from '../../lib/config.ts';
import { updateCampaign } from '../../lib/db/campaigns.ts';
import { campaignUpdateInput } from '../../lib/domain/campaign-rules.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { UpdateCampaign } from '../../lib/operations/compiled.ts';
import { checkWebhookDestination } from '../../lib/webhooks/ssrf.ts';

const policy = { allowPrivate: config.allowPrivateWebhooks };

export const handler = httpHandler(UpdateCampaign, async ({ tenant, query, body }) => {
  const changes = campaignUpdateInput(body, policy);
  await checkWebhookDestination(changes.webhook_url, policy);
  return { status: 200, body: await updateCampaign(tenant, query.id, changes) };
});
