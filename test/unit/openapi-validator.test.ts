import { describe, expect, it } from 'vitest';
import { type ObservedResponse, ResponseValidator } from '../support/response-validator.ts';

const validator = new ResponseValidator();
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-1' };

const campaign = {
  id: '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a',
  created_at: '2026-11-22_14-05-09',
  url: 'https://example.com',
  name: 'Spring',
  webhook_url: null,
  webhook_secret: null,
  webhook_events: ['action.created', 'referred_user.created'],
  webhook_status: 'enabled',
  webhook_disabled_reason: null,
  click_ids: false,
  attribution_window_days: 90,
  currency: 'USD',
  reward_rules: [],
  review_signups_per_hour: 20,
};
const link = {
  id: 7,
  created_at: '2026-11-22_14-05-09',
  referral_code: 'ABC623KC',
  campaign_id: campaign.id,
  referrer_id: null,
  referral_link: 'https://example.com?rfa=ABC623KC',
  share_url: 'https://go.example.com/r/ABC623KC',
  total_clicks: 0,
  total_referrals: 0,
  total_conversions: 0,
  total_revenue: 0,
};

const response = (overrides: Partial<ObservedResponse> & { body?: unknown }): ObservedResponse => {
  const { body, ...rest } = overrides;
  return {
    method: 'POST',
    path: '/api/v1/campaign',
    status: 201,
    headers: JSON_HEADERS,
    text: body === undefined ? '' : JSON.stringify(body),
    ...rest,
  };
};

const problemsOf = (r: ObservedResponse) => validator.problems(r);

describe('responses that match the document pass', () => {
  it.each([
    ['a created campaign', response({ body: campaign })],
    [
      'a page of links',
      response({
        method: 'GET',
        path: `/api/v1/campaign_referral_links/${campaign.id}?limit=1`,
        status: 200,
        body: [link],
      }),
    ],
    [
      'an empty 204',
      response({
        method: 'DELETE',
        path: `/api/v1/campaign?id=${campaign.id}`,
        status: 204,
        headers: { 'x-request-id': 'r' },
      }),
    ],
    [
      'the redirect',
      response({
        method: 'GET',
        path: '/r/ABC623KC',
        status: 302,
        headers: { 'x-request-id': 'r', location: link.referral_link! },
      }),
    ],
    [
      'a HEAD of the redirect',
      response({ method: 'HEAD', path: '/r/ABC623KC', status: 404, headers: { 'x-request-id': 'r' } }),
    ],
    [
      'a documented error',
      response({
        method: 'GET',
        path: '/api/v1/campaign?id=x',
        status: 404,
        body: {
          error: {
            code: 'campaign_not_found',
            message: 'No.',
            doc_url: '/docs#section/Errors/campaign_not_found',
          },
        },
      }),
    ],
    [
      'an unknown route',
      response({
        method: 'GET',
        path: '/nope',
        status: 404,
        body: {
          error: { code: 'route_not_found', message: 'No.', doc_url: '/docs#section/Errors/route_not_found' },
        },
      }),
    ],
    [
      'the reference page',
      response({
        method: 'GET',
        path: '/docs',
        status: 200,
        headers: { 'x-request-id': 'r', 'content-type': 'text/html; charset=utf-8' },
        text: '<!doctype html>',
      }),
    ],
  ])('%s', (_name, r) => {
    expect(problemsOf(r)).toEqual([]);
    expect(() => validator.check(r)).not.toThrow();
  });
});

describe('a response that drifts from the document fails', () => {
  it('with a field the document lacks', () => {
    const r = response({ body: { ...campaign, internal_pk: 'T#a#C#1' } });
    expect(() => validator.check(r)).toThrow(
      /does not match the OpenAPI document[\s\S]*additional properties[\s\S]*internal_pk/,
    );
  });

  it('without a field the document promises', () => {
    const { webhook_secret: _, ...partial } = campaign;
    expect(problemsOf(response({ body: partial }))).toEqual([
      "body must have required property 'webhook_secret'",
    ]);
  });

  it('with a field of the wrong type or format, deep inside', () => {
    const action = {
      id: 1,
      created_at: '2026-11-22 14:05:09',
      action_type: 'visit',
      metadata: {},
      referral_link: { ...link, total_clicks: '1' },
      referred_user: null,
    };
    const problems = problemsOf(response({ path: '/api/v1/action/referral_link', body: action }));
    expect(problems).toContain(
      'body/created_at must match pattern "^\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}$"',
    );
    expect(problems).toContain('body/referral_link/total_clicks must be integer');
  });

  it('with an error code the route does not document for that status', () => {
    const r = response({
      method: 'GET',
      path: '/api/v1/campaign?id=x',
      status: 404,
      body: {
        error: {
          code: 'referral_link_not_found',
          message: 'No.',
          doc_url: '/docs#section/Errors/referral_link_not_found',
        },
      },
    });
    expect(problemsOf(r)).toEqual([
      expect.stringMatching(/^body\/error\/code must be equal to one of the allowed values/),
    ]);
  });

  it('with an error body without its doc_url, or one that points elsewhere than its entry', () => {
    const notFound = (error: Record<string, unknown>) =>
      response({ method: 'GET', path: '/api/v1/campaign?id=x', status: 404, body: { error } });
    expect(problemsOf(notFound({ code: 'campaign_not_found', message: 'No.' }))).toEqual([
      "body/error must have required property 'doc_url'",
    ]);
    expect(
      problemsOf(
        notFound({ code: 'campaign_not_found', message: 'No.', doc_url: 'https://example.com/errors' }),
      ),
    ).toEqual([expect.stringMatching(/^body\/error\/doc_url must match pattern/)]);
  });

  it('with a status the route does not document', () => {
    const r = response({ status: 200, body: campaign });
    expect(problemsOf(r)).toEqual([
      expect.stringMatching(/^status 200 is not documented for POST \/api\/v1\/campaign/),
    ]);
  });

  it('without x-request-id, or a redirect without Location', () => {
    expect(problemsOf(response({ headers: { 'content-type': 'application/json' }, body: campaign }))).toEqual(
      ['the required header x-request-id is missing'],
    );
    expect(
      problemsOf(
        response({ method: 'GET', path: '/r/ABC623KC', status: 302, headers: { 'x-request-id': 'r' } }),
      ),
    ).toEqual(['the required header location is missing']);
  });

  it('with a body where none is documented, or the wrong media type', () => {
    expect(
      problemsOf(
        response({ method: 'DELETE', path: `/api/v1/campaign?id=${campaign.id}`, status: 204, body: {} }),
      ),
    ).toEqual(['response 204 is documented without a body, but has one']);
    expect(
      problemsOf(response({ headers: { 'x-request-id': 'r', 'content-type': 'text/plain' }, text: 'ok' })),
    ).toEqual(['content type "text/plain" is not one of application/json']);
  });

  it('on an unknown route that does not answer the error body', () => {
    const r = response({
      method: 'GET',
      path: '/api/v1/nothing',
      status: 404,
      headers: { 'x-request-id': 'r', 'content-type': 'application/json' },
      body: { message: 'Not Found' },
    });
    expect(problemsOf(r).join('\n')).toMatch(/required property 'error'/);
  });
});
