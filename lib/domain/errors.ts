/** Error codes of the contract, each with its HTTP status. */
export const errorStatus = {
  invalid_json: 400,
  validation_failed: 400,
  missing_parameter: 400,
  url_immutable: 400,
  unauthorized: 401,
  campaign_not_found: 404,
  referral_link_not_found: 404,
  referred_user_not_found: 404,
  event_not_found: 404,
  click_not_found: 404,
  conversion_not_found: 404,
  reward_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  referral_code_taken: 409,
  referred_user_exists: 409,
  webhook_url_not_set: 409,
  currency_locked: 409,
  conversion_exists: 409,
  reward_paid: 409,
  reward_voided: 409,
  reward_not_approvable: 409,
  adjustment_follows_reward: 409,
  idempotency_key_in_progress: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  request_headers_too_large: 431,
  idempotency_key_reused: 422,
  self_referral: 422,
  click_expired: 422,
  currency_mismatch: 422,
  refund_exceeds_amount: 422,
  nothing_to_pay: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  field: string;
  message: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: ErrorDetail[] };
}

/** A failure the client caused or should see: mapped one-to-one onto the contract's error body. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    /** Sent as `Retry-After` (whole seconds): a 429 the service answers itself. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = errorStatus[code];
  }

  toBody(): ErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.details ? { details: this.details } : {}) },
    };
  }
}

export const validationError = (details: ErrorDetail[], message = 'The request is not valid.') =>
  new ApiError('validation_failed', message, details);

export const campaignNotFound = (id: string) =>
  new ApiError('campaign_not_found', `No campaign with id ${truncate(id)}.`);

/** Echo client input in messages only in a bounded, printable form. */
export function truncate(value: string, max = 80): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const printable = value.replace(/[\u0000-\u001f\u007f]/g, '?');
  return printable.length > max ? `${printable.slice(0, max)}…` : printable;
}
