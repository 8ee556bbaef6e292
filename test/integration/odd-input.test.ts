/**
 * Table-driven hostile and odd input: whatever arrives, the answer is a contract status (2xx when
 * the input is valid, 4xx otherwise), never a 5xx, and never a stack trace.
 */
import { describe, expect, it } from 'vitest';
import { type ApiResponse, api, rawRequest, TENANT_A } from '../support/api.ts';
import { expectError, expectNoLeak, expectRequestId, expectValidation } from '../support/assertions.ts';
import { type CampaignBody, createCampaign, randomId } from '../support/records.ts';

const CAMPAIGN = '/api/v1/campaign';
const withId = (id: string) => `${CAMPAIGN}?id=${id}`;
const MAX_BODY = 32 * 1024;

/** Every response of this file: a contract status, a request id, nothing internal. */
function expectSafe(res: ApiResponse, label: string): void {
  expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
  expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
  expectRequestId(res);
  expect(res.headers.get('set-cookie'), label).toBeNull();
  expectNoLeak(res.text);
  if (res.status >= 400) {
    expect(res.body, label).toEqual({ error: expect.objectContaining({ code: expect.any(String) }) });
  }
}

const oddValues: Array<[string, unknown]> = [
  ['null', null],
  ['empty array', []],
  ['array of strings', ['example.com']],
  ['nested arrays', [[[['x']]]]],
  ['zero', 0],
  ['negative', -1],
  ['float', 1.5],
  ['huge number', 1e308],
  ['true', true],
  ['false', false],
  ['empty object', {}],
  ['nested object', { a: { b: { c: { d: 'example.com' } } } }],
  ['object with toString', { toString: 'example.com' }],
  ['empty string', ''],
  ['blank', '   '],
  ['NUL', '\u0000'],
  ['NUL inside', 'a\u0000b'],
  ['control characters', '\u0001\u0007\u001b[31m\u007f'],
  ['CRLF header injection', 'x\r\nSet-Cookie: pwned=1'],
  ['emoji', '😀🎉👨‍👩‍👧‍👦'],
  ['RTL override', '\u202Eevil.com\u202C'],
  ['Hebrew and Arabic', 'שלום مرحبا'],
  ['zero-width characters', '\u200B\u200C\u200D\uFEFF'],
  ['combining marks', 'Z̴̧̛̖̈́a̷̺̿l̵̰̓g̷̱̈o̶͉͝'],
  ['lone surrogate', 'x\uD800y'],
  ['HTML', '<script>alert(1)</script>'],
  ['SQL', "'; DROP TABLE campaigns; --"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal Log4Shell-style payload is the point
  ['template and JNDI', '${jndi:ldap://x.example/a}{{7*7}}'],
  ['path traversal', '../../../../etc/passwd'],
  ['percent junk', '%00%E0%A4%A%'],
  ['unicode host', 'bücher.example/ü?q=✓'],
  ['5,000 characters', 'x'.repeat(5_000)],
  ['30,000 characters (under 32 KiB)', 'x'.repeat(30_000)],
  ['100,000 characters (over 32 KiB)', 'x'.repeat(100_000)],
];

const isOversized = (body: unknown) => Buffer.byteLength(JSON.stringify(body)) > MAX_BODY;

async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<void>) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

describe('odd values in every POST /api/v1/campaign field', () => {
  const cases = (['url', 'name'] as const).flatMap((field) =>
    oddValues.map(([label, value]) => ({ field, label, value })),
  );

  it(`${cases.length} cases: 201 for valid strings, 400 naming the field, 413 when oversized`, async () => {
    await inBatches(cases, 8, async ({ field, label, value }) => {
      const body = { url: 'example.com', name: 'Odd input', [field]: value };
      const res = await api<CampaignBody>('POST', CAMPAIGN, { body });
      const what = `${field} = ${label}`;
      expectSafe(res, what);
      if (isOversized(body)) return expectError(res, 413, 'payload_too_large');
      if (typeof value !== 'string') return expectValidation(res, field);
      if (res.status === 400) return expectValidation(res, field);
      expect(res.status, what).toBe(201);
      if (field === 'name') expect(res.body.name, what).toBe(value.trim());
      // What was stored is what was answered.
      const read = await api('GET', withId(res.body.id));
      expect(read.body, what).toEqual(res.body);
    });
  });

  it('names that are valid after trimming are stored verbatim, however odd', async () => {
    for (const name of ['😀🎉', '\u202Eevil\u202C', 'שלום', 'Z̴̧̛̖̈́a̷̺̿', '\u200B', 'a\u00a0b']) {
      const created = await createCampaign({ name });
      expect(created.name).toBe(name);
      expect((await api('GET', withId(created.id))).body).toEqual(created);
    }
  });

  it('names with control characters (C0, DEL, C1) are refused', async () => {
    for (const name of ['\u0000', 'a\u0000b', 'a\u007fb', 'a\u0085b', '\u009f']) {
      expectValidation(await api('POST', CAMPAIGN, { body: { url: 'example.com', name } }), 'name');
    }
  });
});

describe('odd values in every PATCH /api/v1/campaign field', () => {
  const cases = (['name', 'webhook_url', 'url'] as const).flatMap((field) =>
    oddValues.map(([label, value]) => ({ field, label, value })),
  );

  it(`${cases.length} cases: never a 5xx, and a rejected PATCH changes nothing`, async () => {
    await inBatches(cases, 8, async ({ field, label, value }) => {
      const campaign = await createCampaign({ name: 'Patched' });
      const body = { [field]: value };
      const res = await api<CampaignBody>('PATCH', withId(campaign.id), { body });
      const what = `${field} = ${label}`;
      expectSafe(res, what);
      if (isOversized(body)) expectError(res, 413, 'payload_too_large');
      else if (field === 'url') expectError(res, 400, 'url_immutable');
      else if (field === 'webhook_url' && value === null) expect(res.status, what).toBe(200);
      else if (typeof value !== 'string' || res.status === 400) expectValidation(res, field);
      else expect(res.status, what).toBe(200);

      const after = (await api<CampaignBody>('GET', withId(campaign.id))).body;
      if (res.status === 200) expect(after, what).toEqual(res.body);
      else expect(after, what).toEqual(campaign);
    });
  });
});

describe('odd request bodies', () => {
  const json = { 'content-type': 'application/json' };
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const bodies: Array<[string, string | Buffer]> = [
    ['10,000-deep nested array as a value', `{"url":"example.com","name":${deep(10_000)}}`],
    ['10,000-deep nested object as a value', `{"name":${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`],
    ['16,000-deep nested array as the body', deep(16_000)],
    [
      '1,000 unknown fields',
      JSON.stringify(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, i]))),
    ],
    ['duplicate keys', '{"url":"example.com","name":"first","name":"second"}'],
    ['__proto__ key', '{"url":"example.com","name":"x","__proto__":{"admin":true}}'],
    [
      'constructor.prototype key',
      '{"url":"example.com","name":"x","constructor":{"prototype":{"admin":true}}}',
    ],
    ['number overflow to Infinity', '{"url":"example.com","name":1e999}'],
    ['byte order mark', '\uFEFF{"url":"example.com","name":"x"}'],
    ['raw NUL byte in a string', '{"url":"example.com","name":"a\u0000b"}'],
    ['raw newline in a string', '{"url":"example.com","name":"a\nb"}'],
    [
      'invalid UTF-8 bytes',
      Buffer.concat([
        Buffer.from('{"url":"example.com","name":"'),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from('"}'),
      ]),
    ],
    ['UTF-16 encoded JSON', Buffer.from('{"url":"example.com","name":"x"}', 'utf16le')],
    ['whitespace only', ' \n\t '],
    ['a lone NUL byte', '\u0000'],
    ['escaped lone surrogates', '{"url":"example.com","name":"\\udc00\\ud800"}'],
  ];

  it.each(['POST', 'PATCH'])('%s: every body gets a contract answer', async (method) => {
    const campaign = await createCampaign();
    const path = method === 'POST' ? CAMPAIGN : withId(campaign.id);
    for (const [label, body] of bodies) {
      const res = await rawRequest(method, path, { headers: { 'api-key': TENANT_A.key, ...json }, body });
      expectSafe(res, `${method} ${label}`);
    }
  });

  it('rejects the prototype-pollution keys by name and pollutes nothing', async () => {
    const res = await api('POST', CAMPAIGN, {
      rawBody: '{"url":"example.com","name":"x","__proto__":{"admin":true}}',
      headers: json,
    });
    expectValidation(res, '__proto__');
    const next = await createCampaign();
    expect(next).not.toHaveProperty('admin');
  });
});

describe('odd query strings', () => {
  const cases = async (): Promise<Array<[string, string, (res: ApiResponse) => void]>> => {
    const existing = await createCampaign();
    const u = randomId();
    const validation = (res: ApiResponse) => expectValidation(res, 'id');
    const missing = (res: ApiResponse) => expectError(res, 400, 'missing_parameter');
    const notFound = (res: ApiResponse) => expectError(res, 404, 'campaign_not_found');
    return [
      ['repeated id', 'id=a&id=b', validation],
      ['repeated valid id', `id=${existing.id}&id=${existing.id}`, validation],
      ['malformed percent-encoding', 'id=%E0%A4%A', validation],
      ['lone percent', 'id=%', validation],
      ['encoded NUL', 'id=%00', validation],
      ['UUID then NUL', `id=${u}%00`, validation],
      ['UUID then RTL override', `id=${u}%E2%80%AE`, validation],
      ['plus as space', `id=+${u}`, validation],
      ['emoji', 'id=%F0%9F%98%80', validation],
      ['8,000-character id', `id=${'9'.repeat(8_000)}`, validation],
      ['array syntax', `id[]=${u}`, missing],
      ['wrong case name', `ID=${u}`, missing],
      ['name without value', 'id', missing],
      ['empty parts', '&&&=&', missing],
      ['junk next to a valid id', `id=${u}&x=%E0%A4%A&__proto__=1&constructor=2`, notFound],
      ['2,000 extra parameters', `${'a=1&'.repeat(2_000)}id=${u}`, notFound],
    ];
  };

  it.each(['GET', 'PATCH', 'DELETE'])('%s /api/v1/campaign', async (method) => {
    for (const [label, query, check] of await cases()) {
      const res = await api(method, `${CAMPAIGN}?${query}`);
      expectSafe(res, `${method} ?${label}`);
      check(res);
    }
  });

  it('a query string over the HTTP server header limit is refused with a 4xx, not a crash', async () => {
    const res = await api('GET', `${CAMPAIGN}?id=${'x'.repeat(100_000)}`);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expectNoLeak(res.text);
    // The server is still fine afterwards.
    expectError(await api('GET', withId(randomId())), 404, 'campaign_not_found');
  });
});

describe('odd paths, methods and headers', () => {
  const key = { 'api-key': TENANT_A.key };

  const paths = [
    '/api/v1/campaign%00',
    '/%00',
    '/api/v1/campaign%00?id=00000000-0000-4000-8000-000000000000',
    '/api/v1/%2e%2e/v1/campaign',
    '/api/v1/campaign/..',
    '/api/v1/../v1/campaign',
    '/api/v1/campaign%2F',
    '/api/v1/campaign;jsessionid=1',
    '/api/v1/campaign/%E0%A4%A',
    '/%ff%fe',
    '//api/v1/campaign',
    'http://evil.example/api/v1/campaign',
    `/${'a'.repeat(8_000)}`,
  ];
  const short = (path: string) => (path.length > 80 ? `${path.slice(0, 20)}… (${path.length} chars)` : path);

  it.each(paths.map((path) => [short(path), path]))(
    'GET %s is a 404 route_not_found',
    async (_label, path) => {
      const res = await rawRequest('GET', path, { headers: key });
      expectSafe(res, short(path));
      expectError(res, 404, 'route_not_found');
    },
  );

  it.each([
    ['a 10,000-character key', { 'api-key': 'k'.repeat(10_000) }],
    ['a Latin-1 key', { 'api-key': 'clé-inconnue-éàü-0000000000' }],
    ['two api-key headers', { 'api-key': [TENANT_A.key, TENANT_A.key] }],
    ['a key with surrounding spaces', { 'api-key': `  ${TENANT_A.key}x  ` }],
  ])('GET with %s', async (label, headers) => {
    const res = await rawRequest('GET', withId(randomId()), { headers });
    expectSafe(res, label);
    expect([401, 404]).toContain(res.status);
  });

  it.each([
    'application/json; charset=utf-16',
    'application/json; charset=latin1; boundary=x',
    'application/json;;;',
    'application/vnd.api+json',
    ' application/json',
    'APPLICATION/JSON',
  ])('POST with the content type %j', async (contentType) => {
    const res = await rawRequest('POST', CAMPAIGN, {
      headers: { ...key, 'content-type': contentType },
      body: '{"url":"example.com","name":"ct"}',
    });
    expectSafe(res, contentType);
    expect([201, 415]).toContain(res.status);
  });

  // (CONNECT is not here: Node's HTTP server hangs up on it, as API Gateway refuses it.)
  it.each(['PUT', 'OPTIONS', 'PROPFIND', 'PURGE'])('%s /api/v1/campaign', async (method) => {
    const res = await rawRequest(method, withId(randomId()), { headers: key });
    expect(res.status, method).toBeGreaterThanOrEqual(400);
    expect(res.status, method).toBeLessThan(500);
    expectNoLeak(res.text);
  });
});
