/**
 * Click ids (`rfclid`): what the redirect adds to a counted visit's `Location` when its campaign
 * has `click_ids` on, and what a signup may send back instead of a code (endpoint 10).
 *
 * A click id names one visit item: its campaign, its visit id (the item's key, with the caller's
 * tenant) and its link's code (so the signup reads the visit, its campaign and its link in one
 * batch), plus 128 random bits that the visit item keeps (`click_secret`) and a signup must match.
 * The caller's tenant is never in it: it comes from the api key, so another tenant's click is
 * looked up in that tenant's partition and is not found. Clients must treat the id as opaque.
 *
 * Layout, then base64url without padding (URL-safe, 64 characters for an 8-character code):
 *
 *   1 byte   format version (1)
 *   16 bytes campaign id (the UUID's bytes)
 *   7 bytes  visit id, big-endian (ids are JavaScript-safe integers, below 2^53)
 *   16 bytes the secret
 *   4–32 bytes the link's referral code (ASCII)
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { CODE_PATTERN } from './field-rules.ts';

/** The query parameter of the redirect's `Location`. */
export const CLICK_ID_PARAM = 'rfclid';

/** Random bytes of a click's secret: 128 bits (the contract asks at least 96). */
export const CLICK_SECRET_BYTES = 16;

const VERSION = 1;
const CAMPAIGN_BYTES = 16;
const VISIT_ID_BYTES = 7;
const HEAD_BYTES = 1 + CAMPAIGN_BYTES + VISIT_ID_BYTES + CLICK_SECRET_BYTES;
const CODE = new RegExp(CODE_PATTERN);
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** The longest click id: a 32-character code. */
export const MAX_CLICK_ID_LENGTH = Math.ceil(((HEAD_BYTES + 32) * 4) / 3);

export interface ClickId {
  campaignId: string;
  visitId: number;
  code: string;
  /** base64url of the secret, as the visit item keeps it. */
  secret: string;
}

/** A new visit's secret, as its item keeps it (base64url). */
export const newClickSecret = () => randomBytes(CLICK_SECRET_BYTES).toString('base64url');

export function encodeClickId(click: ClickId): string {
  const head = Buffer.alloc(HEAD_BYTES);
  head[0] = VERSION;
  Buffer.from(click.campaignId.replace(/-/g, ''), 'hex').copy(head, 1);
  head.writeUIntBE(Math.floor(click.visitId / 2 ** 24), 1 + CAMPAIGN_BYTES, VISIT_ID_BYTES - 3);
  head.writeUIntBE(click.visitId % 2 ** 24, 1 + CAMPAIGN_BYTES + VISIT_ID_BYTES - 3, 3);
  Buffer.from(click.secret, 'base64url').copy(head, 1 + CAMPAIGN_BYTES + VISIT_ID_BYTES);
  return Buffer.concat([head, Buffer.from(click.code, 'ascii')]).toString('base64url');
}

/** What a click id names, or undefined for anything the redirect cannot have made. */
export function decodeClickId(value: string): ClickId | undefined {
  if (value.length > MAX_CLICK_ID_LENGTH || !BASE64URL.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64url');
  // Only the canonical spelling: another string decoding to the same bytes is not this id.
  if (bytes.length <= HEAD_BYTES || bytes[0] !== VERSION || bytes.toString('base64url') !== value) {
    return undefined;
  }
  const hex = bytes.subarray(1, 1 + CAMPAIGN_BYTES).toString('hex');
  const campaignId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  const at = 1 + CAMPAIGN_BYTES;
  const visitId = bytes.readUIntBE(at, VISIT_ID_BYTES - 3) * 2 ** 24 + bytes.readUIntBE(at + 4, 3);
  const code = bytes.subarray(HEAD_BYTES).toString('latin1');
  if (visitId < 1 || !Number.isSafeInteger(visitId) || !CODE.test(code)) return undefined;
  const secret = bytes.subarray(at + VISIT_ID_BYTES, HEAD_BYTES).toString('base64url');
  return { campaignId, visitId, code, secret };
}

/** Whether a stored secret is the one a click id carries, compared in constant time. */
export function sameSecret(stored: unknown, given: string): boolean {
  if (typeof stored !== 'string') return false;
  const a = Buffer.from(stored, 'base64url');
  const b = Buffer.from(given, 'base64url');
  return a.length === CLICK_SECRET_BYTES && b.length === CLICK_SECRET_BYTES && timingSafeEqual(a, b);
}

/** Days of the attribution window: 1–365, 90 when a campaign does not say (contract). */
export const DEFAULT_ATTRIBUTION_WINDOW_DAYS = 90;
export const MAX_ATTRIBUTION_WINDOW_DAYS = 365;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Whether a click at `clickedMs` is older than a window of `days` at `nowMs`. */
export const clickExpired = (clickedMs: number, days: number, nowMs: number) =>
  nowMs - clickedMs > days * DAY_MS;
