import { describe, expect, it } from 'vitest';
import { urlSafeRequestId } from '../../lib/http/request.ts';
import { type ApiResponse, api, baseUrl, rawRequest, TENANT_A } from '../support/api.ts';
import { errorOf, expectError, expectRequestId, expectValidation } from '../support/assertions.ts';
import { createCampaign, randomId } from '../support/records.ts';

const CAMPAIGN = '/api/v1/campaign';
const withId = (id: string) => `${CAMPAIGN}?id=${id}`;
const json = { 'content-type': 'application/json' };

/** A JSON object body whose UTF-8 encoding is exactly `bytes` long. */
function jsonOfBytes(bytes: number): string {
  const base = '{"url":"example.com","name":""}';
  return `{"url":"example.com","name":"${'a'.repeat(bytes - base.length)}"}`;
}

describe('invalid_json (400)', () => {
  it.each([
    ['truncated', '{"url":"example.com",'],
    ['not JSON at all', 'url=example.com&name=x'],
    ['single quotes', "{'url':'example.com','name':'x'}"],
    ['an array', '[{"url":"example.com","name":"x"}]'],
    ['null', 'null'],
    ['a string', '"example.com"'],
    ['a number', '12'],
    ['a boolean', 'true'],
  ])('POST with %s', async (_label, rawBody) => {
    expectError(await api('POST', CAMPAIGN, { rawBody, headers: json }), 400, 'invalid_json');
  });

  it('POST without a body', async () => {
    expectError(await api('POST', CAMPAIGN, { headers: json }), 400, 'invalid_json');
  });

  it('PATCH with a body that is not a JSON object', async () => {
    const c = await createCampaign();
    for (const rawBody of ['[]', 'null', '"x"', '{"name":']) {
      expectError(await api('PATCH', withId(c.id), { rawBody, headers: json }), 400, 'invalid_json');
    }
  });
});

describe('validation_failed (400)', () => {
  it('names each missing field', async () => {
    const res = await api('POST', CAMPAIGN, { body: {} });
    expectValidation(res, 'url');
    expectValidation(res, 'name');
  });

  it('names a field of the wrong type', async () => {
    expectValidation(await api('POST', CAMPAIGN, { body: { url: 'example.com', name: 7 } }), 'name');
  });

  it('rejects unknown fields by name, so typos surface', async () => {
    const res = await api('POST', CAMPAIGN, { body: { url: 'example.com', nmae: 'typo' } });
    expectValidation(res, 'nmae');
  });

  it.each(['GET', 'PATCH', 'DELETE'])('%s with a malformed UUID names the id parameter', async (method) => {
    for (const id of ['not-a-uuid', '123', `${randomId()}0`, randomId().replace(/-/g, '')]) {
      expectValidation(await api(method, withId(id)), 'id');
    }
  });

  it('details are field/message pairs', async () => {
    const res = await api('POST', CAMPAIGN, { body: { url: 'x'.repeat(2049), name: '' } });
    expectError(res, 400, 'validation_failed');
    expect((res.body as { error: { details: unknown } }).error.details).toEqual(
      expect.arrayContaining([
        { field: 'url', message: expect.any(String) },
        { field: 'name', message: expect.any(String) },
      ]),
    );
  });
});

describe('missing_parameter (400)', () => {
  it.each(['GET', 'PATCH', 'DELETE'])('%s without id', async (method) => {
    expectError(await api(method, CAMPAIGN), 400, 'missing_parameter');
    expectError(await api(method, `${CAMPAIGN}?id=`), 400, 'missing_parameter');
    expectError(await api(method, `${CAMPAIGN}?campaign_id=${randomId()}`), 400, 'missing_parameter');
  });
});

describe('unauthorized (401)', () => {
  const requests: Array<[string, string, unknown]> = [
    ['POST', CAMPAIGN, { url: 'example.com', name: 'x' }],
    ['GET', withId(randomId()), undefined],
    ['PATCH', withId(randomId()), { name: 'x' }],
    ['DELETE', withId(randomId()), undefined],
  ];

  it.each(requests)(
    '%s %s: missing, empty and unknown keys get the same body',
    async (method, path, body) => {
      const missing = await api(method, path, { key: null, body });
      const empty = await api(method, path, { key: '', body });
      const unknown = await api(method, path, { key: 'rk_this-key-was-never-issued-000000000', body });
      const almost = await api(method, path, { key: `${TENANT_A.key}x`, body });
      for (const res of [missing, empty, unknown, almost]) expectError(res, 401, 'unauthorized');
      expect(empty.body).toEqual(missing.body);
      expect(unknown.body).toEqual(missing.body);
      expect(almost.body).toEqual(missing.body);
    },
  );

  it('comes before any look at the body or the query', async () => {
    expectError(await api('POST', CAMPAIGN, { key: null, rawBody: '{', headers: json }), 401, 'unauthorized');
    expectError(await api('GET', CAMPAIGN, { key: 'nope-nope-nope-nope' }), 401, 'unauthorized');
    expectError(
      await api('POST', CAMPAIGN, { key: null, rawBody: '{}', headers: { 'content-type': 'text/plain' } }),
      401,
      'unauthorized',
    );
  });

  it('the key header name is case-insensitive, the key itself is not', async () => {
    const ok = await api('GET', withId(randomId()), { key: null, headers: { 'API-KEY': TENANT_A.key } });
    expectError(ok, 404, 'campaign_not_found');
    const upper = await api('GET', withId(randomId()), { key: TENANT_A.key.toUpperCase() });
    expectError(upper, 401, 'unauthorized');
  });
});

describe('campaign_not_found (404)', () => {
  it.each(['GET', 'PATCH', 'DELETE'])('%s of an id that never existed', async (method) => {
    expectError(await api(method, withId(randomId())), 404, 'campaign_not_found');
  });
});

describe('route_not_found (404)', () => {
  it.each([
    '/api/v1/campaigns/',
    '/api/v1/campaign/',
    `/api/v1/campaign/${'x'}`,
    '/api/v2/campaign',
    '/',
    '/api',
    '/api/v1',
    '/favicon.ico',
  ])('GET %s, with or without a key', async (path) => {
    expectError(await api('GET', path), 404, 'route_not_found');
    expectError(await api('GET', path, { key: null }), 404, 'route_not_found');
  });
});

describe('method_not_allowed (405)', () => {
  it.each(['PUT', 'OPTIONS'])('%s /api/v1/campaign lists the allowed methods', async (method) => {
    const res = await api(method, withId(randomId()), { body: { name: 'x' } });
    expectError(res, 405, 'method_not_allowed');
    const allow = (res.headers.get('allow') ?? '').split(/,\s*/).sort();
    expect(allow).toEqual(expect.arrayContaining(['DELETE', 'GET', 'PATCH', 'POST']));
    expectError(await api(method, CAMPAIGN, { key: null }), 405, 'method_not_allowed');
  });

  it('HEAD answers like GET on every GET route, with no body (contract, Conventions)', async () => {
    const get = await api('GET', withId(randomId()));
    const head = await api('HEAD', withId(randomId()));
    expect(head.status).toBe(get.status);
    expect(head.text).toBe('');
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expectRequestId(head);
    expect((await api('HEAD', withId(randomId()), { key: null })).status).toBe(401);
  });
});

describe('payload_too_large (413)', () => {
  it('a body over 32 KiB; exactly 32 KiB is parsed (and then validated)', async () => {
    const atLimit = await api('POST', CAMPAIGN, { rawBody: jsonOfBytes(32 * 1024), headers: json });
    expectValidation(atLimit, 'name');
    const over = await api('POST', CAMPAIGN, { rawBody: jsonOfBytes(32 * 1024 + 1), headers: json });
    expectError(over, 413, 'payload_too_large');
  });

  it('counts bytes, not characters', async () => {
    const name = '€'.repeat(11_000); // 11,000 characters, 33,000 bytes
    const res = await api('POST', CAMPAIGN, { body: { url: 'example.com', name } });
    expectError(res, 413, 'payload_too_large');
  });

  it('PATCH over 32 KiB', async () => {
    const c = await createCampaign();
    const res = await api('PATCH', withId(c.id), { body: { name: 'n'.repeat(40_000) } });
    expectError(res, 413, 'payload_too_large');
  });

  it('413 whatever the content type', async () => {
    const res = await api('POST', CAMPAIGN, {
      rawBody: 'x'.repeat(64 * 1024),
      headers: { 'content-type': 'text/plain' },
    });
    expectError(res, 413, 'payload_too_large');
  });

  it('a body beyond the gateway limit (over 10 MiB)', async () => {
    const res = await api('POST', CAMPAIGN, { rawBody: 'x'.repeat(11 * 1024 * 1024), headers: json });
    expectError(res, 413, 'payload_too_large');
  });
});

describe('request_headers_too_large (431)', () => {
  // Node's parser refuses a request line plus headers over http.maxHeaderSize (16 KiB) before any
  // handler runs; the local stack still answers the contract's body.
  it('a 20 KiB header: 431 with the contract body and an x-request-id, on any route', async () => {
    for (const path of [withId(randomId()), '/r/ABC623KC', '/nope']) {
      const res = await rawRequest('GET', path, {
        headers: { 'api-key': TENANT_A.key, 'x-padding': 'a'.repeat(20 * 1024) },
      });
      expectError(res, 431, 'request_headers_too_large');
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    }
  });

  it('a 20 KiB request line: 431 as well', async () => {
    const res = await rawRequest('GET', `${CAMPAIGN}?id=${'a'.repeat(20 * 1024)}`);
    expectError(res, 431, 'request_headers_too_large');
  });

  it('headers well under the limit are served as usual', async () => {
    const res = await api('GET', withId(randomId()), { headers: { 'x-padding': 'a'.repeat(12 * 1024) } });
    expectError(res, 404, 'campaign_not_found');
  });
});

describe('unsupported_media_type (415)', () => {
  const body = JSON.stringify({ url: 'example.com', name: 'x' });

  it.each([
    'text/plain',
    'text/plain; charset=utf-8',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=abc',
    'application/xml',
    'application/octet-stream',
  ])('POST with %s', async (contentType) => {
    const res = await api('POST', CAMPAIGN, { rawBody: body, headers: { 'content-type': contentType } });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('POST with a body and no content type at all', async () => {
    const res = await rawRequest('POST', CAMPAIGN, { headers: { 'api-key': TENANT_A.key }, body });
    expectError(res, 415, 'unsupported_media_type');
  });

  it('PATCH with a text/plain body', async () => {
    const c = await createCampaign();
    const res = await api('PATCH', withId(c.id), {
      rawBody: '{"name":"x"}',
      headers: { 'content-type': 'text/plain' },
    });
    expectError(res, 415, 'unsupported_media_type');
  });
});

describe('doc_url', () => {
  it("is the absolute link to the code's entry on the host the request reached, whoever answers", async () => {
    const origin = new URL(baseUrl()).origin;
    const c = await createCampaign();
    const cases: Array<[Promise<ApiResponse>, number, string]> = [
      [api('GET', withId(randomId())), 404, 'campaign_not_found'], // a handler
      [api('GET', withId('x')), 400, 'validation_failed'], // the operation's rules
      [api('PATCH', withId(c.id), { body: { url: 'x' } }), 400, 'url_immutable'],
      [api('GET', '/nope'), 404, 'route_not_found'], // the fallback
      [api('PUT', CAMPAIGN), 405, 'method_not_allowed'],
      [api('GET', CAMPAIGN, { key: null }), 401, 'unauthorized'], // the gateway itself
      [api('GET', CAMPAIGN, { key: 'not-a-key-of-anyone-0000' }), 401, 'unauthorized'], // the authorizer
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      expectError(res, status, code);
      expect(errorOf(res).doc_url).toBe(`${origin}/docs#section/Errors/${code}`);
    }
  });

  it('is relative where no Host was read: a 431 refused before any handler', async () => {
    const res = await rawRequest('GET', '/nope', { headers: { 'x-padding': 'a'.repeat(20 * 1024) } });
    expectError(res, 431, 'request_headers_too_large');
    expect(errorOf(res).doc_url).toBe('/docs#section/Errors/request_headers_too_large');
  });
});

describe('x-request-id', () => {
  it('is on every response, success or error, and differs per request', async () => {
    const c = await createCampaign();
    const responses = await Promise.all([
      api('GET', withId(c.id)),
      api('PATCH', withId(c.id), { body: { name: 'y' } }),
      api('GET', withId(randomId())),
      api('GET', '/nope'),
      api('PUT', CAMPAIGN),
      api('GET', CAMPAIGN, { key: null }),
      api('POST', CAMPAIGN, { rawBody: '[', headers: json }),
    ]);
    const del = await api('DELETE', withId(c.id));
    expect(del.status).toBe(204);
    const ids = [...responses, del].map((res) => expectRequestId(res));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is URL-safe (A-Z a-z 0-9 _ -) on every response: 600 requests, successes and errors of every origin', async () => {
    const c = await createCampaign();
    // The handlers', the fallback's and the gateway's own answers (a missing key is refused by it).
    const requests: Array<() => Promise<ApiResponse>> = [
      () => api('GET', withId(c.id)),
      () => api('HEAD', withId(c.id)),
      () => api('GET', withId(randomId())),
      () => api('GET', withId('not-a-uuid')),
      () => api('GET', '/nope'),
      () => api('PUT', CAMPAIGN),
      () => api('GET', CAMPAIGN, { key: null }),
      () => api('GET', CAMPAIGN, { key: 'not-a-key-of-anyone-0000' }),
      () => api('POST', CAMPAIGN, { rawBody: '[', headers: json }),
      () => api('GET', '/api/v1/openapi.json'),
      () => api('GET', '/r/NOSUCHCODE'),
    ];
    const ids: string[] = [];
    let withPlusOrSlash = 0;
    for (let round = 0; round < 600 / requests.length; round++) {
      const responses = await Promise.all(requests.map((send) => send()));
      for (const res of responses) {
        const id = expectRequestId(res);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        // The local gateway's ids are API Gateway's kind (base64, `+`, `/`, `=`): the same bytes.
        const gatewayId = res.headers.get('apigw-requestid');
        expect(gatewayId).toMatch(/^[A-Za-z0-9+/]+=*$/);
        expect(id).toBe(urlSafeRequestId(gatewayId!));
        if (/[+/]/.test(gatewayId!)) withPlusOrSlash++;
        ids.push(id);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
    // Not vacuous: every gateway id ends in `=`, and many hold `+` or `/` (15 random base64 digits).
    expect(withPlusOrSlash).toBeGreaterThan(100);
  }, 120_000);
});
