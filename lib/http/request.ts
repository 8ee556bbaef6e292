import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
import { serviceUnavailable } from './responses.ts';

/** Largest accepted request body, per the contract. */
export const MAX_BODY_BYTES = 32 * 1024;

const URL_SAFE = /^[A-Za-z0-9_-]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * The request id as it is echoed in `x-request-id` and logged: only `A-Z a-z 0-9 _ -`, so a client
 * can put it in a URL, a file name or a support ticket as it is. API Gateway's ids are base64
 * (`JBq7LgBLoAMEbwA=`, and `+` or `/` may occur): they become base64url without padding
 * (`JBq7LgBLoAMEbwA`), the same bytes, so `apigw-requestid` and the access log's `requestId` are
 * found from it by putting back `+`, `/` and the `=`. An id that is URL-safe already is kept as
 * it is; anything else is base64url of its UTF-8 bytes.
 */
export function urlSafeRequestId(raw: string): string {
  if (URL_SAFE.test(raw)) return raw;
  if (BASE64.test(raw)) {
    return raw.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  }
  return raw === '' ? 'unknown' : Buffer.from(raw, 'utf8').toString('base64url');
}

/**
 * The id of this request: the one API Gateway assigned (the local gateway makes one the same way),
 * URL-safe (`urlSafeRequestId`).
 */
export function requestIdOf(event: APIGatewayProxyEventV2): string {
  return urlSafeRequestId(event.requestContext?.requestId ?? 'unknown');
}

/**
 * The tenant the authorizer resolved, or a 401. The authorizer allows every request that carries
 * an `api-key` header and hands over an empty tenant for unknown or revoked keys, so that the
 * contract's 401 body comes from here rather than API Gateway's own 403.
 */
export function tenantOf(event: APIGatewayProxyEventV2): string {
  const ctx = (event.requestContext as { authorizer?: { lambda?: Record<string, unknown> } }).authorizer;
  if (ctx?.lambda?.unavailable === 'true') throw serviceUnavailable();
  const tenant = ctx?.lambda?.tenant;
  if (typeof tenant !== 'string' || tenant.length === 0) {
    throw new ApiError('unauthorized', 'A valid api-key header is required.');
  }
  return tenant;
}

function rawBody(event: APIGatewayProxyEventV2): Buffer | undefined {
  if (event.body === undefined || event.body === null || event.body === '') return undefined;
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}

/**
 * `application/json`, optionally with `charset=utf-8` (any case, quoted or not), and nothing else:
 * no other JSON-based media type (`application/merge-patch+json` means other semantics) and no
 * other charset or parameter (contract, Conventions).
 */
const jsonContentType = /^application\/json[ \t]*(?:;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*)?$/i;

// ignoreBOM keeps a byte order mark in the text, where JSON.parse refuses it as before.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Parse the JSON body: 413 over 32 KiB, 415 without the JSON content type, 400 `invalid_json` when
 * it is not UTF-8, does not parse or is not an object. An absent body is `undefined`.
 */
export function parseJsonBody(event: APIGatewayProxyEventV2): Record<string, unknown> | undefined {
  const buf = rawBody(event);
  if (!buf) return undefined;
  if (buf.byteLength > MAX_BODY_BYTES) {
    throw new ApiError('payload_too_large', `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
  }
  const contentType = event.headers?.['content-type'] ?? '';
  if (!jsonContentType.test(contentType)) {
    throw new ApiError(
      'unsupported_media_type',
      'A request body must be sent with Content-Type: application/json.',
    );
  }
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    // Decoding leniently would store U+FFFD in place of the bytes the client sent.
    throw new ApiError('invalid_json', 'The request body is not valid UTF-8.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError('invalid_json', 'The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * Query parameters as API Gateway payload 2.0 gives them (repeated names arrive comma-joined).
 * A required name that is absent or empty is 400 `missing_parameter`.
 */
export function queryOf(
  event: APIGatewayProxyEventV2,
  required: readonly string[] = [],
): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) {
    if (typeof v === 'string') query[k] = v;
  }
  const missing = required.filter((name) => !query[name]);
  if (missing.length > 0) {
    throw new ApiError(
      'missing_parameter',
      `Missing required query parameter${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`,
      missing.map((field) => ({ field, message: 'is required' })),
    );
  }
  return query;
}
