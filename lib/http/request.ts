import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ApiError, validationError } from '../domain/errors.ts';

/** Largest accepted request body, per the contract. */
export const MAX_BODY_BYTES = 32 * 1024;

/** The request id API Gateway assigned (the local gateway makes one the same way). */
export function requestIdOf(event: APIGatewayProxyEventV2): string {
  return event.requestContext?.requestId ?? 'unknown';
}

/**
 * The tenant the authorizer resolved, or a 401. The authorizer allows every request that carries
 * an `api-key` header and hands over an empty tenant for unknown or revoked keys, so that the
 * contract's 401 body comes from here rather than API Gateway's own 403.
 */
export function tenantOf(event: APIGatewayProxyEventV2): string {
  const ctx = (event.requestContext as { authorizer?: { lambda?: Record<string, unknown> } }).authorizer;
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

const jsonContentType = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

/**
 * Parse the JSON body: 413 over 32 KiB, 415 without a JSON content type, 400 `invalid_json` when
 * it does not parse or is not an object. An absent body is `undefined`.
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
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ApiError('invalid_json', 'The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * JSON allows `"\ud800"`, a lone surrogate that is not Unicode text: DynamoDB would refuse to
 * store it (a 500 at write time), so a field holding one is refused here, by name.
 */
export function assertWellFormed(body: object): void {
  const field = illFormedField(body);
  if (field) throw validationError([{ field, message: 'must be valid Unicode text' }]);
}

function illFormedField(body: object): string | undefined {
  // Iterative, not recursive: a 10,000-deep nested body must not overflow the stack.
  const pending: Array<[unknown, string]> = [[body, '']];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [value, path] = next;
    if (typeof value === 'string') {
      if (!value.isWellFormed()) return path || '(body)';
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        if (!key.isWellFormed()) return childPath;
        pending.push([child, childPath]);
      }
    }
  }
  return undefined;
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
