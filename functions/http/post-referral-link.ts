import { storedAnswer } from '../../lib/db/idempotency.ts';
import { createLink } from '../../lib/db/links.ts';
import { normalizeReferrer } from '../../lib/domain/link-rules.ts';
import { CreateLinkBody } from '../../lib/domain/link-schemas.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent } from '../../lib/http/metrics.ts';

export const handler = httpHandler(
  { body: CreateLinkBody, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => {
    const link = await createLink(
      tenant,
      {
        campaignId: body.campaign_id,
        referrerId: normalizeReferrer(body.referrer_id),
        customCode: body.referral_code,
      },
      idempotency,
    );
    countEvent(BusinessMetric.LinksCreated);
    return { status: 201, body: link };
  },
);
