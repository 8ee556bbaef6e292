/**
 * What each error code of the contract means, for the document's descriptions and examples. The
 * codes and their statuses come from `lib/domain/errors.ts`; a code added there without a line here
 * fails the type check.
 */
import type { ErrorCode } from '../domain/errors.ts';

export const errorMeanings: Record<ErrorCode, { when: string; example: string }> = {
  invalid_json: {
    when: 'The body is not parseable JSON, or not a JSON object.',
    example: 'The request body is not valid JSON.',
  },
  validation_failed: {
    when: 'A field or parameter is missing, of the wrong type, too long, malformed (including a malformed UUID) or unknown; `details` names each one.',
    example: 'The request is not valid.',
  },
  missing_parameter: {
    when: 'A required query parameter is absent.',
    example: 'Missing required query parameter: id.',
  },
  url_immutable: {
    when: 'The body of `PATCH /api/v1/campaign` contains `url`.',
    example: 'The url of a campaign cannot be changed.',
  },
  unauthorized: {
    when: 'The `api-key` header is missing, unknown or revoked (the same body in all three cases).',
    example: 'A valid api-key header is required.',
  },
  campaign_not_found: {
    when: 'No campaign with this id exists for the caller (a campaign of another tenant is not found either).',
    example: 'No campaign with id 3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a.',
  },
  referral_link_not_found: {
    when: 'No referral link with this id or code exists for the caller.',
    example: 'No referral link with code ABC623KC.',
  },
  event_not_found: {
    when: 'No event with this id exists for the caller: unknown, older than 30 days, of a deleted campaign or of another tenant.',
    example: 'No event with id evt_action_123.',
  },
  webhook_url_not_set: {
    when: 'The campaign has no `webhook_url` (nothing to send a test event to, no secret to rotate).',
    example: 'The campaign has no webhook_url: set one with PATCH /api/v1/campaign first.',
  },
  conversion_not_found: {
    when: 'No conversion with this id exists for the caller: unknown, malformed, of another tenant, or of a deleted campaign.',
    example: 'No such conversion.',
  },
  currency_locked: {
    when: "`PATCH /api/v1/campaign` changes `currency` after the campaign's first conversion.",
    example: 'The currency of a campaign cannot change once it has a conversion.',
  },
  reward_not_found: {
    when: 'No reward with this id exists for the caller: unknown, of another tenant, or of a deleted campaign.',
    example: 'No such reward.',
  },
  reward_paid: {
    when: 'The reward is paid: it cannot be voided (a refund of its sale claws it back instead) or approved.',
    example: 'This reward is paid; a paid reward cannot be voided.',
  },
  reward_voided: {
    when: 'The reward is voided: it can be neither approved nor voided again.',
    example: 'This reward is voided.',
  },
  reward_not_approvable: {
    when: 'Approve of a reward that is neither `in_review` nor `pending` (it is `approved` already).',
    example: 'This reward is approved already.',
  },
  adjustment_follows_reward: {
    when: 'Approve or void of an adjustment that moves with its reward: act on the reward (`adjusts`).',
    example: 'This adjustment follows its reward; approve or void the reward.',
  },
  nothing_to_pay: {
    when: "The recipient's approved rewards, net of clawbacks, come to nothing to pay (none approved, or clawbacks owed exceed them).",
    example: 'Nothing approved to pay to this recipient.',
  },
  conversion_exists: {
    when: 'The `external_id` is already used by a conversion of that campaign.',
    example: 'A conversion with this external_id already exists in the campaign.',
  },
  currency_mismatch: {
    when: "The conversion's `currency` is not its campaign's.",
    example: 'The campaign counts in EUR, not USD.',
  },
  refund_exceeds_amount: {
    when: 'The refund is more than what is left of the conversion (nothing is left of a refunded one); of simultaneous refunds, those that came too late.',
    example: 'Only 1500 of this conversion is left to refund.',
  },
  referred_user_not_found: {
    when: 'No referred user with this id exists in the campaign.',
    example: 'No referred user user-42 in this campaign.',
  },
  route_not_found: { when: 'No route matches the path.', example: 'No route matches this path.' },
  method_not_allowed: {
    when: 'The path exists but not with this method; the `allow` header lists the methods.',
    example: 'Method PUT is not allowed here.',
  },
  referral_code_taken: {
    when: "The custom `referral_code` is already in use, or stays reserved for the account that issued it: a deleted campaign's codes can be issued again only by their own account, once the campaign's background purge has run.",
    example: 'The referral code ABC623KC is already taken.',
  },
  referred_user_exists: {
    when: 'The `referred_user_id` already exists in that campaign.',
    example: 'The referred user user-42 already exists in this campaign.',
  },
  payload_too_large: {
    when: 'The body is over 32 KiB.',
    example: 'The request body must be at most 32768 bytes.',
  },
  request_headers_too_large: {
    when: 'The request line and headers together are too large (over 16 KiB locally; API Gateway answers its own error over its 10 KiB limit).',
    example: 'The request line and headers are too large.',
  },
  unsupported_media_type: {
    when: 'A body was sent without a JSON content type.',
    example: 'A request body must be sent with Content-Type: application/json.',
  },
  idempotency_key_in_progress: {
    when: 'A request with the same `Idempotency-Key` has been committed but its answer is not stored yet (a moment, for an action of a referred user); retry in a second.',
    example: 'A request with this Idempotency-Key is still being processed; retry later.',
  },
  idempotency_key_reused: {
    when: 'The `Idempotency-Key` was used before, within 24 hours, with another method, path or body.',
    example: 'This Idempotency-Key was used with another request.',
  },
  self_referral: {
    when: "The `referred_user_id` equals the link's `referrer_id`.",
    example: 'A referrer cannot refer themselves.',
  },
  click_not_found: {
    when: 'No click with this `click_id` exists for the caller: unknown, forged, truncated, of another account or of a deleted campaign.',
    example: 'No such click.',
  },
  click_expired: {
    when: "The click is older than its campaign's `attribution_window_days` at signup time: sign the user up by `referral_code` or `referral_link_id` instead, if you know it.",
    example: "The click is older than the campaign's attribution window of 90 days.",
  },
  rate_limited: {
    when: 'Too many requests on this route: its request-rate budget is spent for now. Retry after `retry-after` seconds. A deployed stage\'s throttling is answered by API Gateway itself, with its own body `{"message":"Too Many Requests"}` and no `retry-after`.',
    example: 'Too many requests.',
  },
  service_unavailable: {
    when: 'A dependency (DynamoDB, SQS) throttled, failed or did not answer in time; `Retry-After` says when to retry. The write may or may not have happened: retry with the same `Idempotency-Key`.',
    example: 'The service is unavailable right now; retry after 1 second.',
  },
  internal_error: {
    when: 'Anything unexpected; the message is generic and nothing internal is exposed.',
    example: 'An unexpected error occurred.',
  },
};
