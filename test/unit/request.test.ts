import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/domain/errors.ts';
import { MAX_BODY_BYTES, parseJsonBody, queryOf, requestIdOf, tenantOf } from '../../lib/http/request.ts';

function event(
  options: {
    body?: string;
    base64?: boolean;
    /** `body` is base64 already (bytes that are not text). */
    rawBase64?: boolean;
    contentType?: string | null;
    query?: Record<string, string>;
    tenant?: unknown;
  } = {},
): APIGatewayProxyEventV2 {
  const headers: Record<string, string> = {};
  const contentType = options.contentType === undefined ? 'application/json' : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  return {
    version: '2.0',
    routeKey: 'POST /api/v1/campaign',
    rawPath: '/api/v1/campaign',
    rawQueryString: '',
    headers,
    ...(options.query ? { queryStringParameters: options.query } : {}),
    requestContext: {
      requestId: 'req-1',
      ...(options.tenant !== undefined ? { authorizer: { lambda: { tenant: options.tenant } } } : {}),
    },
    ...(options.body !== undefined
      ? {
          body: options.base64 ? Buffer.from(options.body).toString('base64') : options.body,
          isBase64Encoded: options.base64 === true || options.rawBase64 === true,
        }
      : { isBase64Encoded: false }),
  } as unknown as APIGatewayProxyEventV2;
}

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected an ApiError');
}

/** A JSON object whose UTF-8 encoding is exactly `bytes` long. */
function jsonOfBytes(bytes: number, filler = 'a'): string {
  const base = '{"name":""}';
  const per = Buffer.byteLength(filler);
  const room = bytes - base.length;
  expect(room % per).toBe(0);
  return `{"name":"${filler.repeat(room / per)}"}`;
}

describe('parseJsonBody', () => {
  it('parses a JSON object', () => {
    expect(parseJsonBody(event({ body: '{"url":"x","n":1}' }))).toEqual({ url: 'x', n: 1 });
  });

  it('an absent or empty body is undefined (before any content-type check)', () => {
    expect(parseJsonBody(event({ contentType: null }))).toBeUndefined();
    expect(parseJsonBody(event({ body: '', contentType: 'text/plain' }))).toBeUndefined();
  });

  it.each([
    'application/json',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8',
    'Application/JSON',
    'application/json; charset="utf-8"',
    'application/json ; CHARSET = Utf-8',
  ])('accepts the content type %j', (contentType) => {
    expect(parseJsonBody(event({ body: '{}', contentType }))).toEqual({});
  });

  it.each([
    ['text/plain', '{}'],
    ['application/x-www-form-urlencoded', 'url=x&name=y'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/jsonx', '{}'],
    ['text/json', '{}'],
    ['application/vnd.x+json', '{}'],
    ['application/merge-patch+json', '{}'],
    ['application/problem+json', '{}'],
    ['application/json; charset=iso-8859-1', '{}'],
    ['application/json; charset=utf-16', '{}'],
    ['application/json; charset=utf8', '{}'],
    ['application/json; version=2', '{}'],
    ['application/json; charset=utf-8; x=1', '{}'],
    ['application/json, text/plain', '{}'],
    ['', '{}'],
    [null, '{}'],
  ])('415 for the content type %j', (contentType, body) => {
    const err = errorOf(() => parseJsonBody(event({ body, contentType })));
    expect(err.status).toBe(415);
    expect(err.code).toBe('unsupported_media_type');
  });

  it.each([
    ['a lone continuation byte', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x80, 0x22, 0x7d])],
    ['an overlong encoding', Buffer.from('{"a":"\xc0\xaf"}', 'latin1')],
    ['a truncated sequence', Buffer.from('{"a":"\xe2\x82"}', 'latin1')],
    ['an encoded surrogate', Buffer.from('{"a":"\xed\xa0\x80"}', 'latin1')],
  ])('invalid_json for a body that is not UTF-8: %s', (_label, bytes) => {
    const err = errorOf(() => parseJsonBody(event({ body: bytes.toString('base64'), rawBase64: true })));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toMatch(/UTF-8/);
  });

  it('decodes a base64 body (how API Gateway passes non-text content types)', () => {
    expect(parseJsonBody(event({ body: '{"a":"✓"}', base64: true }))).toEqual({ a: '✓' });
    const err = errorOf(() =>
      parseJsonBody(event({ body: '{}', base64: true, contentType: 'application/octet-stream' })),
    );
    expect(err.code).toBe('unsupported_media_type');
  });

  it('accepts exactly 32 KiB and rejects one byte more with 413', () => {
    expect(MAX_BODY_BYTES).toBe(32 * 1024);
    expect(parseJsonBody(event({ body: jsonOfBytes(MAX_BODY_BYTES) }))?.name).toHaveLength(
      MAX_BODY_BYTES - 11,
    );
    const err = errorOf(() => parseJsonBody(event({ body: jsonOfBytes(MAX_BODY_BYTES + 1) })));
    expect(err.status).toBe(413);
    expect(err.code).toBe('payload_too_large');
  });

  it('counts bytes, not characters', () => {
    // 3-byte characters: well under 32 Ki characters, over 32 KiB of UTF-8.
    const body = jsonOfBytes(MAX_BODY_BYTES + 1 + 2, '✓');
    expect(body.length).toBeLessThan(MAX_BODY_BYTES);
    expect(errorOf(() => parseJsonBody(event({ body }))).code).toBe('payload_too_large');
    expect(errorOf(() => parseJsonBody(event({ body, base64: true }))).code).toBe('payload_too_large');
  });

  it('413 comes before 415 and invalid_json for an oversized body', () => {
    const big = 'x'.repeat(MAX_BODY_BYTES + 1);
    expect(errorOf(() => parseJsonBody(event({ body: big, contentType: 'text/plain' }))).status).toBe(413);
    expect(errorOf(() => parseJsonBody(event({ body: big }))).status).toBe(413);
  });

  it.each([
    ['an array', '[]'],
    ['an array of objects', '[{"url":"x"}]'],
    ['null', 'null'],
    ['a string', '"{\\"url\\":\\"x\\"}"'],
    ['a number', '42'],
    ['a negative float', '-1.5e3'],
    ['true', 'true'],
    ['false', 'false'],
  ])('invalid_json for JSON that is not an object: %s', (_label, body) => {
    const err = errorOf(() => parseJsonBody(event({ body })));
    expect(err.status).toBe(400);
    expect(err.code).toBe('invalid_json');
  });

  it.each([
    ['truncated', '{"url":'],
    ['single quotes', "{'url':'x'}"],
    ['trailing comma', '{"url":"x",}'],
    ['comment', '{"url":"x"} // c'],
    ['two documents', '{}{}'],
    ['NaN', '{"n":NaN}'],
    ['whitespace only', '   \n'],
    ['byte order mark', '\uFEFF{}'],
    ['binary junk', '\u0000\u0001\u0002'],
  ])('invalid_json for unparseable bodies: %s', (_label, body) => {
    const err = errorOf(() => parseJsonBody(event({ body })));
    expect(err.code).toBe('invalid_json');
    expect(err.message).not.toContain('Unexpected token');
  });

  it('never echoes the parser message', () => {
    const err = errorOf(() => parseJsonBody(event({ body: '{"secret-looking":' })));
    expect(err.toBody()).toEqual({ error: { code: 'invalid_json', message: expect.any(String) } });
    expect(err.message).not.toContain('secret-looking');
  });
});

describe('queryOf', () => {
  it('returns the string parameters', () => {
    expect(queryOf(event({ query: { id: 'a', x: '' } }))).toEqual({ id: 'a', x: '' });
    expect(queryOf(event())).toEqual({});
  });

  it('missing_parameter names every absent or empty required parameter', () => {
    const err = errorOf(() => queryOf(event({ query: { b: '' } }), ['a', 'b']));
    expect(err.status).toBe(400);
    expect(err.code).toBe('missing_parameter');
    expect(err.details).toEqual([
      { field: 'a', message: 'is required' },
      { field: 'b', message: 'is required' },
    ]);
    expect(queryOf(event({ query: { a: '1', b: '2' } }), ['a', 'b'])).toEqual({ a: '1', b: '2' });
  });
});

describe('tenantOf and requestIdOf', () => {
  it('returns the tenant the authorizer resolved', () => {
    expect(tenantOf(event({ tenant: 'tenant-a' }))).toBe('tenant-a');
  });

  it.each([undefined, '', 42, null])('401 for the tenant %j', (tenant) => {
    const err = errorOf(() => tenantOf(event({ tenant })));
    expect(err.status).toBe(401);
    expect(err.code).toBe('unauthorized');
  });

  it('reads the request id', () => {
    expect(requestIdOf(event())).toBe('req-1');
  });
});
