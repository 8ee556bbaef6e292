/**
 * Per-route throttling in the local gateway: a gateway of lib/local/gateway.ts with small limits,
 * serving the real authorizer and handlers on a table of its own in the emulator project's
 * DynamoDB Local (one tenant's key in it). The integration run's stack has limits no test reaches
 * (test/support/global-setup.ts), so that only this file sees a 429.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { ApiKeyStore } from '../../lib/db/api-keys.ts';
import { createTableInput } from '../../lib/local/dynamodb.ts';
import type { RouteThrottles } from '../../lib/throttling.ts';
import { type ApiResponse, apiClient } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';
import { randomId } from '../support/records.ts';

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const endpoint = inject('dynamodbEndpoint');
const tableName = `throttling-${randomUUID().slice(0, 8)}`;
const db = createDocumentClient(endpoint, undefined, 30_000);
const TENANT = { tenant: 'throttled', key: 'throttling-key-00000000000000001' };

/**
 * `redirect` and `api` refill so slowly that nothing comes back during the test; `docs` refills
 * one request every 2 s, to see a Retry-After kept.
 */
const LIMITS: RouteThrottles = {
  redirect: { rateLimit: 0.01, burstLimit: 2 },
  api: { rateLimit: 0.01, burstLimit: 3 },
  docs: { rateLimit: 0.5, burstLimit: 1 },
};

let server: Server;
let baseUrl: string;
let authorizerCalls = 0;
/** This file's gateway, without a key unless a request gives one (checked against the document, as every response). */
const send = apiClient({ baseUrl: () => baseUrl });

function expectRateLimited(res: ApiResponse): number {
  if (res.text) expectError(res, 429, 'rate_limited');
  else expect(res.status).toBe(429);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const retryAfter = res.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  return Number(retryAfter);
}

beforeAll(async () => {
  await db.send(new CreateTableCommand(createTableInput(tableName)));
  await new ApiKeyStore(db, tableName).create(TENANT.tenant, TENANT.key);
  // The handlers read their configuration when their modules load: lib/ and functions/ are
  // imported dynamically, after this.
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: tableName,
    STAGE: 'local',
    LOG_LEVEL: 'ERROR',
  });
  const { createGateway } = await import('../../lib/local/gateway.ts');
  type Gateway = Parameters<typeof createGateway>[0];
  const load = async (module: string) =>
    (await import(pathToFileURL(join(projectRoot, 'functions', `${module}.ts`)).href)) as {
      handler: unknown;
    };
  const authorizer = (await load('auth/authorizer')).handler as Gateway['authorizer'];
  server = createGateway({
    throttles: LIMITS,
    authorizer: async (event) => {
      authorizerCalls++;
      return authorizer(event);
    },
    fallback: (await load('http/fallback')).handler as Gateway['fallback'],
    loadHandler: async (route) =>
      (await load(route.handler)).handler as Awaited<ReturnType<Gateway['loadHandler']>>,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.close(() => resolve());
    server?.closeAllConnections();
  });
  await db.send(new DeleteTableCommand({ TableName: tableName })).catch(() => undefined);
  db.destroy();
});

describe('per-route throttling in the local gateway', () => {
  it('answers 429 rate_limited with Retry-After once a route has spent its burst', async () => {
    const started = performance.now();
    const first = await send('GET', '/r/NOSUCH23');
    const second = await send('GET', '/r/NOSUCH23');
    expectError(first, 404, 'referral_link_not_found');
    expectError(second, 404, 'referral_link_not_found');
    const third = await send('GET', '/r/NOSUCH23');
    // One token at 0.01/s: 100 s, less what refilled since the burst was spent (a loaded machine
    // once took over a second between these requests, and the answer was 99).
    const retryAfter = expectRateLimited(third);
    const refilledSeconds = Math.ceil((performance.now() - started) / 1000) + 1;
    expect(retryAfter).toBeLessThanOrEqual(100);
    expect(retryAfter).toBeGreaterThanOrEqual(100 - refilledSeconds);
    expect((third.body as { error: { message: string } }).error.message).toMatch(
      new RegExp(`retry after ${retryAfter} seconds`),
    );
  });

  it('keeps every other route key’s budget: the HEAD twin, the API and the documentation', async () => {
    // The redirect's GET is spent (above); its HEAD twin is a route of its own, as in API Gateway.
    expect((await send('HEAD', '/r/NOSUCH23')).status).toBe(404);
    expect((await send('GET', '/docs')).status).toBe(200);
    const link = await send('GET', '/api/v1/referral_link?referral_code=NOSUCH23', { key: TENANT.key });
    expectError(link, 404, 'referral_link_not_found');
  });

  it('refuses a flood of random api keys before the authorizer: it runs for the burst only', async () => {
    const path = `/api/v1/campaign?id=${randomId()}`;
    const before = authorizerCalls;
    const answers = [];
    for (let i = 0; i < 6; i++)
      answers.push(await send('GET', path, { key: `rk_random-${i}-${randomId()}` }));
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 429, 429, 429]);
    for (const res of answers.slice(3)) expectRateLimited(res);
    expect(authorizerCalls - before).toBe(3);
    // Another API route still answers, with a good key.
    const other = await send('GET', `/api/v1/referred_user?campaign_id=${randomId()}&referred_user_id=u`, {
      key: TENANT.key,
    });
    expectError(other, 404, 'campaign_not_found');
  });

  it('a HEAD over the limit gets the status and headers without a body', async () => {
    expect((await send('HEAD', '/docs')).status).toBe(200);
    const res = await send('HEAD', '/docs');
    expect(res.text).toBe('');
    expectRateLimited(res);
  });

  it('keeps its word: after Retry-After seconds the route answers again', async () => {
    expect((await send('GET', '/api/v1/openapi.json')).status).toBe(200);
    const refused = await send('GET', '/api/v1/openapi.json');
    const seconds = expectRateLimited(refused);
    expect(seconds).toBeLessThanOrEqual(2);
    // The time the answer names is what is under test: wait exactly that, not for a state.
    await new Promise((r) => setTimeout(r, seconds * 1000));
    expect((await send('GET', '/api/v1/openapi.json')).status).toBe(200);
  });

  it('unmatched paths share the $default route’s budget, with the API’s figures', async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send('GET', `/nope/${i}`)).status);
    expect(statuses).toEqual([404, 404, 404, 429]);
  });
});
