import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
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

export function errorResponse(error: ApiError, requestId: string, headers?: Record<string, string>) {
  const retry: Record<string, string> =
    error.code === 'service_unavailable' ? { 'retry-after': String(RETRY_AFTER_SECONDS) } : {};
  return toResponse(
    { status: error.status, body: error.toBody(), headers: { ...retry, ...headers } },
    requestId,
  );
}

export const internalError = () => new ApiError('internal_error', 'An unexpected error occurred.');

export const serviceUnavailable = () =>
  new ApiError(
    'service_unavailable',
    'A service this request needs is unavailable right now; retry shortly (with the same Idempotency-Key for a POST).',
  );
