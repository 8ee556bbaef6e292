import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { inject } from 'vitest';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { ErrorResponse } from '../../lib/domain/schemas.ts';
import { ResponseValidator } from '../../lib/openapi/response-validator.ts';
import { TENANT_A, TENANT_B } from './global-setup.ts';

export { TENANT_A, TENANT_B };
export const baseUrl = () => inject('baseUrl');

/** A test's own reads and bulk writes behind the API's back wait longer than a request's attempt. */
export const TOOL_TIMEOUT_MS = 30_000;

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

let documentValidator: ResponseValidator | undefined;

/**
 * A request to the local gateway; JSON in and out, raw text kept for empty-body checks. Every
 * response is checked against the OpenAPI document (status, required headers, media type, body
 * schema) and a mismatch throws, so a handler that drifts from the document fails the test.
 */
// biome-ignore lint/suspicious/noExplicitAny: tests read response fields without declaring a type per call
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
  documentValidator ??= new ResponseValidator();
  documentValidator.check({ method, path, status: res.status, headers: res.headers, text });
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

// ---------------------------------------------------------------------------------------------
// Links, referred users and actions (issue 3). Additive: the exports above are unchanged.
// ---------------------------------------------------------------------------------------------

export type LinkBody = {
  id: number;
  created_at: string;
  referral_code: string;
  campaign_id: string;
  referrer_id: string | null;
  referral_link: string | null;
  total_clicks: number;
  total_referrals: number;
};
export type ReferredUserBody = {
  id: number;
  created_at: string;
  referral_link: LinkBody;
  referred_user_id: string;
};
export type ActionBody = {
  id: number;
  created_at: string;
  action_type: string;
  metadata: Record<string, unknown>;
  referral_link: LinkBody;
  referred_user: ReferredUserBody | null;
};

/** Assert a value matches a TypeBox schema exactly, with TypeBox's own errors in the failure. */
export function expectShape(schema: TSchema, value: unknown): void {
  if (Value.Check(schema, value)) return;
  const errors = [...Value.Errors(schema, value)].map((e) => `${e.path || '/'}: ${e.message}`);
  throw new Error(`response does not match the schema:\n${errors.join('\n')}\n${JSON.stringify(value)}`);
}

/** POST /api/v1/referral_link, expecting 201 and a link of the contract's shape. */
export async function createLink(
  campaignId: string,
  fields: { referrer_id?: string | null; referral_code?: string } = {},
  key?: string,
): Promise<LinkBody> {
  const res = await api<LinkBody>('POST', '/api/v1/referral_link', {
    body: { campaign_id: campaignId, ...fields },
    key,
  });
  if (res.status !== 201) throw new Error(`link create failed: ${res.status} ${res.text}`);
  return res.body;
}

/** GET /api/v1/referral_link?id=, expecting 200. */
export async function fetchLink(id: number, key?: string): Promise<LinkBody> {
  const res = await api<LinkBody>('GET', `/api/v1/referral_link?id=${id}`, { key });
  if (res.status !== 200) throw new Error(`link fetch failed: ${res.status} ${res.text}`);
  return res.body;
}

/** POST /api/v1/referred_user by code, expecting 201. */
export async function createReferredUser(
  referralCode: string,
  referredUserId: string,
  key?: string,
): Promise<ReferredUserBody> {
  const res = await api<ReferredUserBody>('POST', '/api/v1/referred_user', {
    body: { referral_code: referralCode, referred_user_id: referredUserId },
    key,
  });
  if (res.status !== 201) throw new Error(`referred user create failed: ${res.status} ${res.text}`);
  return res.body;
}

/** Run `fn` over `items` with at most `concurrency` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

let tableDb: DynamoDBDocumentClient | undefined;

/** A document client on the run's DynamoDB Local table, for checks behind the API's back. */
export function table(): { db: DynamoDBDocumentClient; name: string } {
  tableDb ??= createDocumentClient(inject('dynamodbEndpoint'), undefined, TOOL_TIMEOUT_MS);
  return { db: tableDb, name: inject('tableName') };
}

/** Every item of a campaign's partition (`T#<tenant>#C#<campaign>`) whose SK starts with `prefix` ('' for all). */
export async function campaignItems(
  tenant: string,
  campaignId: string,
  prefix: string,
): Promise<Record<string, unknown>[]> {
  const { db, name } = table();
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: name,
        KeyConditionExpression: prefix ? 'PK = :pk AND begins_with(SK, :prefix)' : 'PK = :pk',
        ExpressionAttributeValues: {
          ':pk': `T#${tenant}#C#${campaignId.toLowerCase()}`,
          ...(prefix ? { ':prefix': prefix } : {}),
        },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Write items straight into the table (BatchWriteItem, 25 at a time), for data too big to make through the API. */
export async function putItems(items: readonly object[]): Promise<void> {
  const { db, name } = table();
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, b) =>
    items.slice(b * 25, b * 25 + 25),
  );
  await mapLimit(batches, 4, async (batch) => {
    let pending = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('BatchWriteItem kept items unprocessed');
      const out = await db.send(new BatchWriteCommand({ RequestItems: { [name]: pending } }));
      pending = (out.UnprocessedItems?.[name] as typeof pending | undefined) ?? [];
    }
  });
}

/** The stored link item of a code (PK `LINK#<code>`), read strongly consistently. */
export async function linkItem(code: string): Promise<Record<string, unknown> | undefined> {
  const { db, name } = table();
  const { Item } = await db.send(
    new GetCommand({ TableName: name, Key: { PK: `LINK#${code}`, SK: 'LINK' }, ConsistentRead: true }),
  );
  return Item;
}

/** Assert an error response: status, contract code, the error body's exact shape and x-request-id. */
export function expectErrorBody(res: ApiResponse, status: number, code: string): void {
  const detail = `${res.status} ${res.text}`;
  if (res.status !== status) throw new Error(`expected ${status} ${code}, got ${detail}`);
  expectShape(ErrorResponse, res.body);
  const body = res.body as { error: { code: string } };
  if (body.error.code !== code) throw new Error(`expected error code ${code}, got ${detail}`);
  if (!res.headers.get('x-request-id')) throw new Error('error response without x-request-id');
}

/** The `error` object of an error response body, typed. */
export function errorOf(res: ApiResponse): {
  code: string;
  message: string;
  details?: Array<{ field: string; message: string }>;
} {
  return (res.body as { error: ReturnType<typeof errorOf> }).error;
}

/**
 * A campaign's action items once every counted action has one. Endpoint 5 records an action on
 * its link's item; the table stream writes the action item a moment later. Waits until, for every
 * link given, its items number exactly its stored `total_clicks`, and fails with the counts if
 * that does not happen in time (an action counted but never written, or written twice).
 */
export async function settledActionItems(
  tenant: string,
  campaignId: string,
  codes: string[],
  timeoutMs = 15_000,
): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const items = await campaignItems(tenant, campaignId, 'A#');
    const counts = await Promise.all(
      codes.map(async (code) => ({
        code,
        clicks: Number((await linkItem(code))?.total_clicks ?? 0),
        items: items.filter((i) => i.link_code === code).length,
      })),
    );
    if (counts.every((c) => c.clicks === c.items)) return items;
    if (Date.now() > deadline) {
      throw new Error(`action items do not match total_clicks: ${JSON.stringify(counts)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Polls `check` every 500 ms until it holds or `timeoutMs` passes; the last answer. */
export async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return check();
}

/**
 * Point modules of lib/ and functions/ loaded in this test worker at the run's table and queue,
 * as the local stack does for its handlers. They read these settings when they load, so import
 * them (dynamically) after this call. Each integration file runs in its own worker: nothing leaks.
 */
export function configureInProcessHandlers(): void {
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
    TABLE_NAME: inject('tableName'),
    AWS_ENDPOINT_URL_SQS: inject('queueEndpoint'),
    STAGE: 'local',
    ALLOW_PRIVATE_WEBHOOKS: 'true',
    LOG_LEVEL: 'WARN',
    DYNAMODB_ATTEMPT_TIMEOUT_MS: '4000',
  });
}

/** The API object an event-bearing item carries (its webhook's `data`), stored as JSON text. */
// biome-ignore lint/suspicious/noExplicitAny: tests read fields of the stored object without a type per call
export function eventDataOf<T = any>(item: Record<string, unknown> | undefined): T {
  return JSON.parse(String(item?.event_json)) as T;
}

/**
 * A browser's user agent: visits through `/r/{code}` are counted only for browsers, so a test that
 * wants a counted visit sends this (fetch's own `node` is an HTTP library, not counted).
 */
export const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
