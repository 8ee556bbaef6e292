/**
 * Assertions and a raw HTTP client for the foundation's integration tests (campaigns, errors,
 * odd input). `helpers.api` covers ordinary JSON requests; `rawRequest` sends exactly the bytes,
 * path and headers given, which fetch would normalise or add (content type, `..` segments).
 */
import { request } from 'node:http';
import { Value } from '@sinclair/typebox/value';
import { expect } from 'vitest';
import { Campaign } from '../../lib/domain/schemas.ts';
import { type ApiResponse, baseUrl } from './helpers.ts';

export type CampaignBody = {
  id: string;
  created_at: string;
  url: string;
  name: string;
  webhook_url: string | null;
  webhook_secret: string | null;
};

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}$/;
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** A syntactically valid UUID v4 that no campaign has. */
export const randomId = () => crypto.randomUUID();

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
 * The contract's error body, exactly: `{ error: { code, message, details? } }`, JSON content
 * type, an x-request-id and nothing internal.
 */
export function expectError(res: ApiResponse, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { error: { code } } });
  expectRequestId(res);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = res.body as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  const keys = Object.keys(body.error).sort();
  expect(keys.filter((k) => k !== 'details')).toEqual(['code', 'message']);
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
  const details = (res.body as { error: { details?: Array<{ field: string }> } }).error.details;
  expect(details?.map((d) => d.field)).toContain(field);
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

/** A request with exactly these bytes, path and headers (nothing added but Host and length). */
export function rawRequest(
  method: string,
  path: string,
  options: { headers?: Record<string, string | string[]>; body?: string | Buffer } = {},
): Promise<ApiResponse> {
  const url = new URL(baseUrl());
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...options.headers,
          ...(options.body !== undefined ? { 'content-length': Buffer.byteLength(options.body) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) {
            if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
          }
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers, body, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}
