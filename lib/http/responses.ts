import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
import { stringifyJson } from '../domain/json.ts';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export interface HttpResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export function toResponse(result: HttpResult, requestId: string): APIGatewayProxyStructuredResultV2 {
  const headers: Record<string, string> = { 'x-request-id': requestId, ...result.headers };
  if (result.body === undefined) return { statusCode: result.status, headers, body: '' };
  headers['content-type'] = JSON_CONTENT_TYPE;
  // Bodies echo client metadata, which may nest deeper than the native serializer goes.
  return { statusCode: result.status, headers, body: stringifyJson(result.body) };
}

export function errorResponse(error: ApiError, requestId: string, headers?: Record<string, string>) {
  return toResponse({ status: error.status, body: error.toBody(), headers }, requestId);
}

export const internalError = () => new ApiError('internal_error', 'An unexpected error occurred.');
