import { createLink } from '../../lib/db/links.ts';
import { normalizeReferrer } from '../../lib/domain/link-rules.ts';
import { CreateLinkBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';

export const handler = httpHandler({ body: CreateLinkBody }, async ({ tenant, body }) => ({
  status: 201,
  body: await createLink(tenant, {
    campaignId: body.campaign_id,
    referrerId: normalizeReferrer(body.referrer_id),
    customCode: body.referral_code,
  }),
}));
