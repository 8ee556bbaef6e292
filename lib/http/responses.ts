import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ApiError, type ErrorBody, type ErrorCode } from '../domain/errors.ts';
import { stringifyJson } from '../domain/json.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface HttpResult {
  status: number;
  body?: unknown;
  /** A JSON body already serialized (a stored answer replayed as first sent). */
  rawJson?: string;
  headers?: Record<string, string>;
  /** A body of bytes (the reference page, gzipped or not), sent base64-encoded as API Gateway wants. */
  bytes?: Buffer;
}

export function toResponse(result: HttpResult, requestId: string): APIGatewayProxyStructuredResultV2 {
  const headers: Record<string, string> = { 'x-request-id': requestId, ...result.headers };
  if (result.bytes !== undefined) {
    return {
      statusCode: result.status,
      headers,
      body: result.bytes.toString('base64'),
      isBase64Encoded: true,
    };
  }
  if (result.rawJson !== undefined) {
    headers['content-type'] = JSON_CONTENT_TYPE;
    return { statusCode: result.status, headers, body: result.rawJson };
  }
  if (result.body === undefined) return { statusCode: result.status, headers, body: '' };
  headers['content-type'] = JSON_CONTENT_TYPE;
  // Bodies echo client metadata, which may nest deeper than the native serializer goes.
  return { statusCode: result.status, headers, body: stringifyJson(result.body) };
}

/** Seconds a client should wait before retrying a 503. */
export const RETRY_AFTER_SECONDS = 1;

/** The section of the reference page's description that has one entry per error code. */
export const ERRORS_SECTION = 'Errors';

/**
 * The anchor of a code's entry on the reference page (`/docs`): the document's description has a
 * `# Errors` heading with a `## <code>` heading per code, which Redoc names `section/Errors/<code>`
 * (a code is `a-z` and `_`, which its slugs keep as they are).
 */
export const errorAnchor = (code: ErrorCode): string => `section/${ERRORS_SECTION}/${code}`;

/** `doc_url`: absolute on the origin the client reached when it is known, else relative to it. */
export const errorDocUrl = (code: ErrorCode, origin?: string): string =>
  `${origin ?? ''}/docs#${errorAnchor(code)}`;

/** A host name, IPv4 or bracketed IPv6 address, with an optional port: nothing to escape. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** `scheme://host` from a scheme and a host as a gateway reports them, when both are sound. */
export function originOf(scheme: string | undefined, host: string | undefined): string | undefined {
  if ((scheme !== 'https' && scheme !== 'http') || !host || host.length > 255 || !HOST.test(host)) {
    return undefined;
  }
  return `${scheme}://${host.toLowerCase()}`;
}

/**
 * The origin the client reached: the event's `domainName` (on API Gateway one of the API's own
 * names, execute-api or custom domain; the local gateway's `Host`) and the scheme API Gateway
 * forwards in `x-forwarded-proto` (the local gateway sets it too). Undefined when either is
 * missing or malformed, as in a hand-made event: `doc_url` is then relative.
 */
export const publicOrigin = (event: APIGatewayProxyEventV2): string | undefined =>
  originOf(event.headers?.['x-forwarded-proto'], event.requestContext?.domainName);

/** The contract's error body, with `doc_url` after `code`, `message` and `details`. */
export interface ErrorResponseBody {
  error: ErrorBody['error'] & { doc_url: string };
}

export function errorBody(error: ApiError, origin?: string): ErrorResponseBody {
  return { error: { ...error.toBody().error, doc_url: errorDocUrl(error.code, origin) } };
}

export function errorResponse(
  error: ApiError,
  requestId: string,
  options: { origin?: string; headers?: Record<string, string> } = {},
) {
  const retry: Record<string, string> =
    error.retryAfterSeconds !== undefined
      ? { 'retry-after': String(error.retryAfterSeconds) }
      : error.code === 'service_unavailable'
        ? { 'retry-after': String(RETRY_AFTER_SECONDS) }
        : {};
  return toResponse(
    {
      status: error.status,
      body: errorBody(error, options.origin),
      headers: { ...retry, ...options.headers },
    },
    requestId,
  );
}

export const internalError = () => new ApiError('internal_error', 'An unexpected error occurred.');

export const serviceUnavailable = () =>
  new ApiError(
    'service_unavailable',
    'A service this request needs is unavailable right now; retry shortly (with the same Idempotency-Key for a POST).',
  );
