/**
 * A DynamoDB that does not answer, or refuses connections: every request gets 503
 * `service_unavailable` with `Retry-After` within its budget, never a 500 and never a hang. The
 * handlers and the authorizer run in process against two fault producers on loopback: a server
 * that accepts connections and never answers (what a paused or overloaded endpoint looks like)
 * and a port nobody listens on. (The real DynamoDB Local paused and killed is the fault suite's.)
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../lib/local/gateway.ts';
import { freePort } from '../../lib/local/ports.ts';

let blackHole: Server;
const sockets = new Set<Socket>();
let silentEndpoint: string;
let refusedPort = 0;

beforeAll(async () => {
  refusedPort = await freePort(); // free now, and nobody listens on it
  blackHole = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.resume(); // read and never answer
  });
  await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
  const address = blackHole.address() as { port: number };
  silentEndpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => blackHole.close(() => r()));
});

type Handler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<{ statusCode: number; headers?: Record<string, unknown>; body?: string }>;

/** Handler modules loaded against `endpoint`, each test with its own module instances. */
async function loadAgainst(endpoint: string) {
  const { vi } = await import('vitest');
  vi.resetModules();
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: 'referrals-unreachable',
    STAGE: 'local',
    LOG_LEVEL: 'ERROR',
  });
  return {
    getCampaign: (await import('../../functions/http/get-campaign.ts')).handler as unknown as Handler,
    postLinkAction: (await import('../../functions/http/post-link-action.ts')).handler as unknown as Handler,
    visit: (await import('../../functions/http/visit.ts')).handler as unknown as Handler,
    readiness: (await import('../../functions/http/get-readiness.ts')).handler as unknown as Handler,
    health: (await import('../../functions/http/health.ts')).handler as unknown as Handler,
    authorizer: (await import('../../functions/auth/authorizer.ts')).handler as unknown as (
      e: APIGatewayRequestAuthorizerEventV2,
    ) => Promise<{ isAuthorized: boolean; context: Record<string, string> }>,
  };
}

function event(
  method: string,
  path: string,
  query: Record<string, string>,
  body?: unknown,
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: {
      'content-type': 'application/json',
      'user-agent':
        'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
    },
    queryStringParameters: query,
    pathParameters: path.startsWith('/r/') ? { referral_code: path.slice(3) } : undefined,
    requestContext: {
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'dependency-test',
      authorizer: { lambda: { tenant: 'tenant-a' } },
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    isBase64Encoded: false,
  } as unknown as APIGatewayProxyEventV2;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await run();
  return { value, ms: Date.now() - started };
}

function expectUnavailable(result: { statusCode: number; headers?: Record<string, unknown>; body?: string }) {
  expect(result.statusCode).toBe(503);
  expect(result.headers?.['retry-after']).toBe('1');
  expect(JSON.parse(result.body ?? '')).toEqual({
    error: {
      code: 'service_unavailable',
      message: expect.stringMatching(/retry/i),
      doc_url: '/docs#section/Errors/service_unavailable',
    },
  });
}

describe.each([
  ['does not answer', () => silentEndpoint],
  ['refuses connections', () => `http://127.0.0.1:${refusedPort}`],
])('DynamoDB %s', (_label, endpointOf) => {
  let handlers: Awaited<ReturnType<typeof loadAgainst>>;
  // The cases of one fault run at once: each mostly waits out a budget of 2–5 s on a socket.
  beforeAll(async () => {
    handlers = await loadAgainst(endpointOf());
  });

  it.concurrent('a read answers 503 with Retry-After within its 5 s budget', async () => {
    const { value, ms } = await timed(() =>
      handlers.getCampaign(
        event('GET', '/api/v1/campaign', { id: '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a' }),
        lambdaContext('r1', 'GetCampaign'),
      ),
    );
    expectUnavailable(value);
    expect(ms).toBeLessThan(6_000);
  });

  it.concurrent('a write answers 503 within its budget, even on a function with little time left', async () => {
    const { value, ms } = await timed(() =>
      handlers.postLinkAction(
        event('POST', '/api/v1/action/referral_link', {}, { referral_code: 'ABCD2345', action_type: 'x' }),
        lambdaContext('r2', 'CreateLinkAction', 3_000),
      ),
    );
    expectUnavailable(value);
    expect(ms).toBeLessThan(3_000);
  });

  it.concurrent('the public redirect answers 503 too', async () => {
    const { value } = await timed(() =>
      handlers.visit(event('GET', '/r/ABCD2345', {}), lambdaContext('r3', 'Visit')),
    );
    expectUnavailable(value);
  });

  it.concurrent('the readiness check answers 503 within its budget; liveness, which calls nothing, still 200', async () => {
    const { value, ms } = await timed(() =>
      handlers.readiness(event('GET', '/api/v1/health/ready', {}), lambdaContext('r4', 'Readiness')),
    );
    expectUnavailable(value);
    expect(ms).toBeLessThan(6_000);
    const live = await handlers.health(event('GET', '/health', {}), lambdaContext('r5', 'Health'));
    expect({ status: live.statusCode, body: JSON.parse(live.body ?? '') }).toEqual({
      status: 200,
      body: { status: 'ok' },
    });
  });

  it.concurrent('the authorizer answers within 2 s, and the handler then says 503, not 401', async () => {
    const { value, ms } = await timed(() =>
      handlers.authorizer({
        headers: { 'api-key': 'k' },
        identitySource: ['k'],
      } as unknown as APIGatewayRequestAuthorizerEventV2),
    );
    expect(ms).toBeLessThan(2_500);
    expect(value).toEqual({ isAuthorized: true, context: { tenant: '', unavailable: 'true' } });
    const answered = await handlers.getCampaign(
      {
        ...event('GET', '/api/v1/campaign', { id: '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a' }),
        requestContext: { ...event('GET', '/', {}).requestContext, authorizer: { lambda: value.context } },
      } as unknown as APIGatewayProxyEventV2,
      lambdaContext('r4', 'GetCampaign'),
    );
    expectUnavailable(answered);
  });
});
