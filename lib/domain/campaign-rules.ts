import { ApiError, validationError } from './errors.ts';
import type { CreateCampaignBody, UpdateCampaignBody } from './schemas.ts';
import { checkHttpUrl, normalizeCampaignUrl } from './url.ts';

/**
 * Apply the field rules to a schema-valid create body. The schema has checked the lengths and
 * characters (`schemas.ts`); what is left is the URL's syntax and the trimming.
 */
export function campaignCreateInput(body: CreateCampaignBody): { url: string; name: string } {
  const url = normalizeCampaignUrl(body.url);
  if (!url.ok) throw validationError([{ field: 'url', message: url.message }]);
  return { url: url.url, name: body.name.trim() };
}

export interface WebhookUrlPolicy {
  /** Local stack only: allow `http` and private addresses. */
  allowPrivate: boolean;
}

export const urlImmutable = () =>
  new ApiError('url_immutable', 'The url of a campaign cannot be changed; create a new campaign instead.');

/**
 * Apply the field rules to a schema-valid PATCH body. A `url` in it never gets here: the handler
 * refuses the field (`refusedFields`, 400 `url_immutable`) before the body is validated.
 */
export function campaignUpdateInput(
  body: UpdateCampaignBody,
  policy: WebhookUrlPolicy,
): { name?: string; webhook_url?: string | null } {
  const out: { name?: string; webhook_url?: string | null } = {};
  if (body.name !== undefined) out.name = body.name.trim();
  if (body.webhook_url === null) out.webhook_url = null;
  else if (body.webhook_url !== undefined) {
    const check = checkWebhookUrl(body.webhook_url, policy);
    if (!check.ok) throw validationError([{ field: 'webhook_url', message: check.message }]);
    out.webhook_url = check.url;
  }
  return out;
}

/**
 * Webhook URL syntax and scheme. Deployed stages take `https` only; the address checks (private,
 * loopback, metadata ranges, after DNS resolution) are `checkWebhookDestination` of
 * `lib/webhooks/ssrf.ts`, which the delivery shares, on the ranges of `address-ranges.ts`.
 */
export function checkWebhookUrl(raw: string, policy: WebhookUrlPolicy) {
  const url = raw.trim();
  const check = checkHttpUrl(url);
  if (!check.ok) return check;
  if (!policy.allowPrivate && !url.toLowerCase().startsWith('https://')) {
    return { ok: false as const, message: 'must be an https URL' };
  }
  return check;
}
