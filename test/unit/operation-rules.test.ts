/**
 * httpHandler enforcing the generated operations' request rules (`lib/operations/compiled.ts`) with
 * the handler's own work stubbed out: what reaches a handler, and the contract's errors otherwise.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type Event, httpHandler } from '../../lib/http/handler.ts';
import * as compiled from '../../lib/operations/compiled.ts';

function event(
  method: string,
  options: { query?: Record<string, string>; path?: Record<string, string>; body?: unknown } = {},
): Event {
  return {
    version: '2.0',
    routeKey: `${method} /x`,
    rawPath: '/x',
    rawQueryString: '',
    headers: options.body === undefined ? {} : { 'content-type': 'application/json' },
    queryStringParameters: options.query,
    pathParameters: options.path,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    isBase64Encoded: false,
    requestContext: {
      requestId: 'req-1',
      http: { method, path: '/x', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      authorizer: { lambda: { tenant: 't1' } },
    },
  } as unknown as APIGatewayProxyEventV2;
}

/** The handler's answer: status and parsed body; what the stub received, when it ran. */
async function call(
  spec: Parameters<typeof httpHandler>[0],
  e: Event,
): Promise<{ status: number; body: Record<string, unknown> | undefined; seen?: unknown }> {
  let seen: unknown;
  const handler = httpHandler(spec, async (req) => {
    seen = { query: req.query, path: req.path, body: req.body };
    return { status: 200, body: { ok: true } };
  });
  const result = (await handler(e, {} as never)) as { statusCode: number; body?: string };
  return { status: result.statusCode, body: result.body ? JSON.parse(result.body) : undefined, seen };
}

describe('operation rules enforced by httpHandler', () => {
  it('GET /api/v1/referral_link: at least one of id and referral_code, an empty one counting as absent', async () => {
    const none = await call(compiled.GetReferralLink, event('GET', { query: { id: '', other: 'x' } }));
    expect(none.status).toBe(400);
    expect(none.body).toEqual({
      error: {
        code: 'missing_parameter',
        message: 'Give id or referral_code.',
        details: [{ field: 'id', message: 'id or referral_code is required' }],
        doc_url: '/docs#section/Errors/missing_parameter',
      },
    });
    const byCode = await call(
      compiled.GetReferralLink,
      event('GET', { query: { id: '', referral_code: 'ABCD' } }),
    );
    expect(byCode.status).toBe(200);
    expect(byCode.seen).toMatchObject({ query: { referral_code: 'ABCD' } });
    const badId = await call(compiled.GetReferralLink, event('GET', { query: { id: '0' } }));
    expect(badId.body?.error).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'id', message: 'must be a positive integer id' }],
    });
  });

  it('required query parameters come from the query schema: all missing ones named', async () => {
    const missing = await call(compiled.GetReferredUser, event('GET', { query: { campaign_id: '' } }));
    expect(missing.body?.error).toMatchObject({
      code: 'missing_parameter',
      details: [
        { field: 'campaign_id', message: 'is required' },
        { field: 'referred_user_id', message: 'is required' },
      ],
    });
  });

  it('exactly one of referral_code, referral_link_id and click_id, after the schema passed', async () => {
    for (const body of [
      { referred_user_id: 'bob' },
      { referred_user_id: 'bob', referral_code: 'ABCD', referral_link_id: 1 },
      { referred_user_id: 'bob', referral_code: 'ABCD', click_id: 'AQID' },
      { referred_user_id: 'bob', referral_link_id: 1, click_id: 'AQID' },
    ]) {
      const answer = await call(compiled.CreateReferredUser, event('POST', { body }));
      expect(answer.body?.error, JSON.stringify(body)).toMatchObject({
        code: 'validation_failed',
        details: [
          {
            field: 'referral_code',
            message: 'exactly one of referral_code, referral_link_id and click_id is required',
          },
        ],
      });
    }
    const schemaFirst = await call(
      compiled.CreateReferredUser,
      event('POST', { body: { referral_code: 'ABCD', referral_link_id: 1, referred_user_id: 5 } }),
    );
    expect(schemaFirst.body?.error).toMatchObject({ details: [{ field: 'referred_user_id' }] });
    const ok = await call(
      compiled.CreateReferredUser,
      event('POST', { body: { referral_link_id: 7, referred_user_id: 'bob' } }),
    );
    expect(ok.status).toBe(200);
  });

  it('a refused field gets its own error before any other check of the body', async () => {
    const answer = await call(
      compiled.UpdateCampaign,
      event('PATCH', {
        query: { id: '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a' },
        body: { url: 'x', name: 5, extra: 1 },
      }),
    );
    expect(answer.body?.error).toMatchObject({ code: 'url_immutable' });
  });

  it('path parameters: 400 naming the parameter, or the redirect 404 for a code that cannot exist', async () => {
    const list = await call(
      compiled.ListReferrerLinks,
      event('GET', { path: { campaign_id: 'nope', referrer_id: 'alice' } }),
    );
    expect(list.body?.error).toMatchObject({
      code: 'validation_failed',
      details: [{ field: 'campaign_id', message: 'must be a UUID' }],
    });
    const visit = await call(compiled.Visit, event('GET', { path: { referral_code: 'no!' } }));
    expect(visit.status).toBe(404);
    expect(visit.body?.error).toMatchObject({
      code: 'referral_link_not_found',
      message: 'No such referral link.',
    });
    const ok = await call(compiled.Visit, event('GET', { path: { referral_code: 'ALICE-1' } }));
    expect(ok.seen).toMatchObject({ path: { referral_code: 'ALICE-1' } });
  });
});
