/**
 * The tests' assertions on responses: one error assertion (`expectError`), the shapes of the
 * contract's objects, and what must never reach a client.
 */
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { expect } from 'vitest';
import { Campaign, ErrorResponse } from '../../lib/domain/schemas.ts';
import type { ApiResponse } from './api.ts';
import type { CampaignBody } from './records.ts';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}$/;
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** Assert a value matches a TypeBox schema exactly, with TypeBox's own errors in the failure. */
export function expectShape(schema: TSchema, value: unknown): void {
  if (Value.Check(schema, value)) return;
  const errors = [...Value.Errors(schema, value)].map((e) => `${e.path || '/'}: ${e.message}`);
  throw new Error(`response does not match the schema:\n${errors.join('\n')}\n${JSON.stringify(value)}`);
}

/** Stack frames, file paths or error class names that must never reach a client. */
const LEAKS = [/^\s*at /m, /\bstack\b/i, /node_modules/, /\.ts:\d+/, /Exception\b/, /\bTypeError\b/];

export function expectNoLeak(text: string): void {
  for (const leak of LEAKS) expect(text, `response leaks ${leak}`).not.toMatch(leak);
}

export function expectRequestId(res: { headers: Headers }): string {
  const id = res.headers.get('x-request-id');
  expect(id, 'x-request-id header').toBeTruthy();
  return id as string;
}

/**
 * The contract's error response, exactly: this status, `{ error: { code, message, details?, doc_url } }`
 * of the schema with this code and its reference entry, a JSON content type, an x-request-id and
 * nothing internal.
 */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.body }, res.text).toMatchObject({
    status,
    body: { error: { code } },
  });
  expectShape(ErrorResponse, res.body);
  expectRequestId(res);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = res.body as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  const keys = Object.keys(body.error).sort();
  expect(keys.filter((k) => k !== 'details')).toEqual(['code', 'doc_url', 'message']);
  expect(body.error.doc_url).toMatch(new RegExp(`^(?:http://[^/]+)?/docs#section/Errors/${code}$`));
  expect(typeof body.error.message).toBe('string');
  expect((body.error.message as string).length).toBeGreaterThan(0);
  if ('details' in body.error) {
    expect(Array.isArray(body.error.details)).toBe(true);
    for (const d of body.error.details as unknown[]) {
      expect(Object.keys(d as object).sort()).toEqual(['field', 'message']);
    }
  }
  expectNoLeak(res.text);
}

/** `validation_failed` whose details name `field` (among possibly others). */
export function expectValidation(res: ApiResponse, field: string): void {
  expectError(res, 400, 'validation_failed');
  expect(errorOf(res).details?.map((d) => d.field)).toContain(field);
}

/** The `error` object of an error response body, typed. */
export function errorOf(res: ApiResponse): {
  code: string;
  message: string;
  details?: Array<{ field: string; message: string }>;
  doc_url: string;
} {
  return (res.body as { error: ReturnType<typeof errorOf> }).error;
}

/** A campaign of the contract's shape, created within the last few minutes. */
export function expectCampaign(value: unknown): asserts value is CampaignBody {
  if (!Value.Check(Campaign, value)) {
    const errors = [...Value.Errors(Campaign, value)].map((e) => `${e.path}: ${e.message}`);
    throw new Error(`not a campaign: ${errors.join('; ')} in ${JSON.stringify(value)}`);
  }
  expect(value.id).toMatch(UUID_V4);
  expect(value.created_at).toMatch(TIMESTAMP);
  const [date, time] = value.created_at.split('_') as [string, string];
  const created = Date.parse(`${date}T${time.replace(/-/g, ':')}Z`);
  expect(Math.abs(Date.now() - created)).toBeLessThan(5 * 60_000);
}
