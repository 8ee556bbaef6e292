import { ApiError, validationError } from './errors.ts';
import { DEFAULT_CURRENCY } from './field-rules.ts';
import {
  type RewardRule,
  type RewardRuleInput,
  reviewSignupsPerHourInput,
  rewardRulesInput,
} from './reward-rules.ts';
import type { CreateCampaignBody, UpdateCampaignBody } from './schemas.ts';
import { checkHttpUrl, normalizeCampaignUrl } from './url.ts';
import type { WebhookEventType } from './webhook-events.ts';

/**
 * Apply the field rules to a schema-valid create body. The schema has checked the lengths and
 * characters (`schemas.ts`); what is left is the URL's syntax and the trimming.
 */
export interface CampaignCreateInput {
  url: string;
  name: string;
  currency: string;
  click_ids?: boolean;
  attribution_window_days?: number;
  reward_rules?: RewardRule[];
  review_signups_per_hour?: number;
}

/** The reward fields of a create or PATCH body, checked across fields (`reward-rules.ts`). */
function rewardFields(body: { reward_rules?: unknown; review_signups_per_hour?: number }) {
  return {
    ...(body.reward_rules !== undefined
      ? { reward_rules: rewardRulesInput(body.reward_rules as RewardRuleInput[]) }
      : {}),
    ...(body.review_signups_per_hour !== undefined
      ? { review_signups_per_hour: reviewSignupsPerHourInput(body.review_signups_per_hour) }
      : {}),
  };
}

export function campaignCreateInput(body: CreateCampaignBody): CampaignCreateInput {
  const url = normalizeCampaignUrl(body.url);
  if (!url.ok) throw validationError([{ field: 'url', message: url.message }]);
  return {
    url: url.url,
    name: body.name.trim(),
    currency: body.currency ?? DEFAULT_CURRENCY,
    ...(body.click_ids !== undefined ? { click_ids: body.click_ids } : {}),
    ...(body.attribution_window_days !== undefined
      ? { attribution_window_days: body.attribution_window_days }
      : {}),
    ...rewardFields(body),
  };
}

export const currencyLocked = () =>
  new ApiError('currency_locked', 'The currency of a campaign cannot change once it has a conversion.');

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
export interface CampaignChanges {
  name?: string;
  webhook_url?: string | null;
  webhook_events?: WebhookEventType[];
  webhook_status?: 'enabled' | 'disabled';
  click_ids?: boolean;
  attribution_window_days?: number;
  currency?: string;
  /** A new version of the rules (`withRuleSet`): events after it are rewarded by it. */
  reward_rules?: RewardRule[];
  review_signups_per_hour?: number;
}

export function campaignUpdateInput(body: UpdateCampaignBody, policy: WebhookUrlPolicy): CampaignChanges {
  const out: CampaignChanges = {};
  if (body.webhook_events !== undefined) {
    // The schema checked each type; what is left is the array as a whole.
    const events = body.webhook_events as WebhookEventType[];
    if (events.length === 0) {
      throw validationError([{ field: 'webhook_events', message: 'must name at least one event type' }]);
    }
    const repeated = events.find((t, i) => events.indexOf(t) !== i);
    if (repeated !== undefined) {
      throw validationError([{ field: 'webhook_events', message: `names ${repeated} more than once` }]);
    }
    out.webhook_events = events;
  }
  if (body.webhook_status !== undefined) out.webhook_status = body.webhook_status as 'enabled' | 'disabled';
  if (body.name !== undefined) out.name = body.name.trim();
  if (body.click_ids !== undefined) out.click_ids = body.click_ids;
  if (body.attribution_window_days !== undefined) out.attribution_window_days = body.attribution_window_days;
  if (body.currency !== undefined) out.currency = body.currency;
  Object.assign(out, rewardFields(body));
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
