/**
 * `doc_url` of the error body: the reference page's entry of the code, absolute on the origin the
 * request reached when the event names it, relative otherwise. The browser test
 * (test/integration/docs.test.ts) follows one to its entry; test/unit/openapi.test.ts checks that
 * every code has one.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { handler as fallback } from '../../functions/http/fallback.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { errorBody, errorDocUrl, originOf, publicOrigin } from '../../lib/http/responses.ts';
import { logger } from '../../lib/observability/logger.ts';

function event(
  method: string,
  rawPath: string,
  extra: { domainName?: string; headers?: Record<string, string> } = {},
): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: extra.headers ?? {},
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-1',
      ...(extra.domainName ? { domainName: extra.domainName } : {}),
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
    },
  } as unknown as APIGatewayProxyEventV2;
}

const deployed = {
  domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
  headers: { 'x-forwarded-proto': 'https' },
};

describe('errorBody', () => {
  it('adds doc_url after code, message and details, keeping them as they were', () => {
    const error = new ApiError('validation_failed', 'The request is not valid.', [
      { field: 'url', message: 'must be an http(s) URL' },
    ]);
    const body = errorBody(error, 'https://api.example.com');
    expect(body).toEqual({
      error: {
        ...error.toBody().error,
        doc_url: 'https://api.example.com/docs#section/Errors/validation_failed',
      },
    });
    expect(Object.keys(body.error)).toEqual(['code', 'message', 'details', 'doc_url']);
    expect(errorBody(new ApiError('unauthorized', 'No.')).error.doc_url).toBe(
      '/docs#section/Errors/unauthorized',
    );
  });
});

describe('the origin of doc_url', () => {
  it.each([
    [
      'https',
      'abc123.execute-api.eu-west-1.amazonaws.com',
      'https://abc123.execute-api.eu-west-1.amazonaws.com',
    ],
    ['http', '127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['http', 'localhost', 'http://localhost'],
    ['http', '[::1]:3000', 'http://[::1]:3000'],
    ['https', 'API.Example.COM', 'https://api.example.com'],
  ])('%s and %s: %s', (scheme, host, origin) => {
    expect(originOf(scheme, host)).toBe(origin);
  });

  it.each([
    ['ftp', 'example.com'],
    [undefined, 'example.com'],
    ['https', undefined],
    ['https', ''],
    ['https', 'evil.com/path'],
    ['https', 'user@evil.com'],
    ['https', 'evil.com#x'],
    ['https', 'a b'],
    ['https', 'example.com:'],
    ['https', '-example.com'],
    ['https', `${'a'.repeat(300)}.com`],
  ])('none for %s and %j: the link is then relative', (scheme, host) => {
    expect(originOf(scheme, host)).toBeUndefined();
  });

  it("reads API Gateway's domainName and x-forwarded-proto, and needs both", () => {
    expect(publicOrigin(event('GET', '/x', deployed))).toBe(
      'https://abc123.execute-api.eu-west-1.amazonaws.com',
    );
    expect(publicOrigin(event('GET', '/x', { domainName: deployed.domainName }))).toBeUndefined();
    expect(publicOrigin(event('GET', '/x', { headers: deployed.headers }))).toBeUndefined();
  });
});

describe('error responses of the handlers', () => {
  const parse = (result: unknown) => JSON.parse((result as { body: string }).body);

  it("link the code's entry on the host the request reached", async () => {
    const failing = httpHandler({ name: 'Failing', auth: true }, async () => ({ status: 200 }));
    const body = parse(await failing(event('GET', '/api/v1/campaign', deployed), {} as never));
    expect(body.error).toMatchObject({
      code: 'unauthorized',
      doc_url: 'https://abc123.execute-api.eu-west-1.amazonaws.com/docs#section/Errors/unauthorized',
    });
  });

  it('link it relatively when the event does not say where it was sent', async () => {
    const crashing = httpHandler({ name: 'Crashing', auth: false }, async () => {
      throw new Error('boom');
    });
    expect(parse(await crashing(event('GET', '/x'), {} as never)).error.doc_url).toBe(
      errorDocUrl('internal_error'),
    );
  });

  it('of the fallback: 404 route_not_found and 405 method_not_allowed, each with its entry', async () => {
    const notFound = parse(await fallback(event('GET', '/nope', deployed), {} as never));
    expect(notFound.error.doc_url).toBe(
      errorDocUrl('route_not_found', 'https://abc123.execute-api.eu-west-1.amazonaws.com'),
    );
    const notAllowed = parse(await fallback(event('PUT', '/api/v1/campaign', deployed), {} as never));
    expect(notAllowed.error).toMatchObject({
      code: 'method_not_allowed',
      doc_url: 'https://abc123.execute-api.eu-west-1.amazonaws.com/docs#section/Errors/method_not_allowed',
    });
  });
});

describe('the request line', () => {
  async function linesOf(run: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
    const chunks: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
      chunks.push(String(c));
      return true;
    });
    try {
      await run();
    } finally {
      spy.mockRestore();
    }
    return chunks
      .join('')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }
  const requestLines = (lines: Array<Record<string, unknown>>) =>
    lines.filter((l) => l.message === 'request');

  it('is written for every answer, and only for errors where the route asks (the redirect: its access line has the same)', async () => {
    const level = logger.getLevelName();
    onTestFinished(() => logger.setLogLevel(level));
    logger.setLogLevel('INFO');
    const ok = httpHandler({ name: 'Ok', auth: false }, async () => ({ status: 302 }));
    const quiet = httpHandler({ name: 'Quiet', auth: false, requestLog: 'errors' }, async () => ({
      status: 302,
    }));
    const quietMissing = httpHandler(
      { name: 'QuietMissing', auth: false, requestLog: 'errors' },
      async () => {
        throw new ApiError('referral_link_not_found', 'No such link.');
      },
    );
    expect(requestLines(await linesOf(() => ok(event('GET', '/r/A'), {} as never)))).toMatchObject([
      { status: 302 },
    ]);
    expect(requestLines(await linesOf(() => quiet(event('GET', '/r/A'), {} as never)))).toEqual([]);
    expect(requestLines(await linesOf(() => quietMissing(event('GET', '/r/B'), {} as never)))).toMatchObject([
      { status: 404, code: 'referral_link_not_found' },
    ]);
  });
});
