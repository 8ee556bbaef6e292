import { randomInt } from 'node:crypto';
import { ApiError, validationError } from './errors.ts';

/** Generated codes: 8 characters of A-Z and 2-9 without I and O (no 0/O or 1/I confusion). */
export const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const GENERATED_CODE_LENGTH = 8;

export function generateReferralCode(): string {
  let code = '';
  for (let i = 0; i < GENERATED_CODE_LENGTH; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/** `referrer_id` omitted, null or "" all mean "no referrer". */
export function normalizeReferrer(value: string | null | undefined): string | null {
  return value === undefined || value === null || value === '' ? null : value;
}

/** Endpoints 10 and 12 take exactly one of `referral_code` and `referral_link_id`. */
export function linkTargetOf(body: {
  referral_code?: string;
  referral_link_id?: number;
}): { code: string } | { id: number } {
  const hasCode = body.referral_code !== undefined;
  const hasId = body.referral_link_id !== undefined;
  if (hasCode === hasId) {
    throw validationError([
      { field: 'referral_code', message: 'exactly one of referral_code and referral_link_id is required' },
    ]);
  }
  return hasCode ? { code: body.referral_code! } : { id: body.referral_link_id! };
}

/** Endpoint 10 takes exactly one of `referral_code`, `referral_link_id` and `click_id`. */
export function signupTargetOf(body: {
  referral_code?: string;
  referral_link_id?: number;
  click_id?: string;
}): { code: string } | { id: number } | { click: string } {
  const given = [body.referral_code, body.referral_link_id, body.click_id].filter((v) => v !== undefined);
  if (given.length !== 1) {
    throw validationError([
      {
        field: 'referral_code',
        message: 'exactly one of referral_code, referral_link_id and click_id is required',
      },
    ]);
  }
  if (body.click_id !== undefined) return { click: body.click_id };
  return linkTargetOf(body);
}

export const clickNotFound = () => new ApiError('click_not_found', 'No such click.');

export const clickExpired = (days: number) =>
  new ApiError('click_expired', `The click is older than the campaign's attribution window of ${days} days.`);

export function selfReferral(): ApiError {
  return new ApiError('self_referral', 'A referred user cannot be the referrer of the link.');
}
