import { inject } from 'vitest';
import { TENANT_A, TENANT_B } from './global-setup.ts';

export { TENANT_A, TENANT_B };
export const baseUrl = () => inject('baseUrl');

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A request to the local gateway; JSON in and out, raw text kept for empty-body checks. */
export async function api<T = any>(
  method: string,
  path: string,
  options: { body?: unknown; rawBody?: string; key?: string | null; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  const key = options.key === undefined ? TENANT_A.key : options.key;
  if (key !== null) headers['api-key'] = key;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl()}${path}`, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; keep the text
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export async function createCampaign(overrides: Record<string, unknown> = {}, key?: string) {
  const res = await api('POST', '/api/v1/campaign', {
    body: { url: 'https://example.com', name: 'Test campaign', ...overrides },
    key,
  });
  if (res.status !== 201) throw new Error(`campaign create failed: ${res.status} ${res.text}`);
  return res.body as {
    id: string;
    created_at: string;
    url: string;
    name: string;
    webhook_url: string | null;
    webhook_secret: string | null;
  };
}
