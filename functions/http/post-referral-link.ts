import { storedAnswer } from '../../lib/db/idempotency.ts';
import { createLink } from '../../lib/db/links.ts';
import { normalizeReferrer } from '../../lib/domain/link-rules.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { BusinessMetric, countEvent, metricsMiddleware } from '../../lib/observability/metrics.ts';
import { CreateReferralLink } from '../../lib/operations/compiled.ts';

export const handler = httpHandler(
  { ...CreateReferralLink, storedAnswers: storedAnswer, metrics: metricsMiddleware() },
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
