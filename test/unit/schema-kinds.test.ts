/**
 * The `Text` and `JsonObject` schema kinds through the validators the handlers compile from the
 * real body schemas, and the safe JSON serializer metadata relies on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/domain/errors.ts';
import { nonFiniteNumberPath, stringifyJson } from '../../lib/domain/json.ts';
import {
  CreateLinkActionBody,
  CreateLinkBody,
  CreateUserActionBody,
  MAX_METADATA_BYTES,
} from '../../lib/domain/link-schemas.ts';
import { codePointLength } from '../../lib/domain/schema-kinds.ts';
import { CreateCampaignBody, MAX_NAME_LENGTH, UpdateCampaignBody } from '../../lib/domain/schemas.ts';
import { buildOpenApiDocument } from '../../lib/openapi/document.ts';
import { compileValidator } from '../../lib/validation/generate.ts';
import { documentAjv } from '../support/response-validator.ts';

const campaign = compileValidator(CreateCampaignBody);
const update = compileValidator(UpdateCampaignBody);
const link = compileValidator(CreateLinkBody);
const linkAction = compileValidator(CreateLinkActionBody);
const userAction = compileValidator(CreateUserActionBody);

function details(fn: () => unknown) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('validation_failed');
    return (err as ApiError).details;
  }
  throw new Error('expected validation_failed');
}

const EMOJI = '😀'; // one code point, two UTF-16 units
const UUID = '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a';

describe('Text: lengths in code points, trimming, control characters, lone surrogates', () => {
  it('a campaign name is 1–256 code points after trimming: 256 emoji pass, 257 do not', () => {
    expect(MAX_NAME_LENGTH).toBe(256);
    expect(campaign({ url: 'example.com', name: EMOJI.repeat(256) }).name).toBe(EMOJI.repeat(256));
    expect(campaign({ url: 'example.com', name: `   ${'n'.repeat(256)}  \n` })).toBeDefined();
    expect(details(() => campaign({ url: 'example.com', name: EMOJI.repeat(257) }))).toEqual([
      { field: 'name', message: 'must be at most 256 characters' },
    ]);
    for (const name of ['', '    ', '\t\n']) {
      expect(details(() => campaign({ url: 'example.com', name }))).toEqual([
        { field: 'name', message: 'must not be empty' },
      ]);
    }
  });

  it.each([
    ['a C0 control', 'a\u0001b'],
    ['DEL', 'a\u007fb'],
    ['a C1 control (U+0085)', 'a\u0085b'],
    ['U+009F', 'a\u009fb'],
  ])('refuses %s in names and ids', (_, value) => {
    expect(details(() => campaign({ url: 'example.com', name: value }))).toEqual([
      { field: 'name', message: 'must not contain control characters' },
    ]);
    expect(details(() => link({ campaign_id: UUID, referrer_id: value }))?.[0]?.field).toBe('referrer_id');
    expect(
      details(() => userAction({ campaign_id: UUID, action_type: 'x', referred_user_id: value }))?.[0],
    ).toEqual({ field: 'referred_user_id', message: 'must not contain control characters' });
  });

  it('ids are 1–256 code points: 256 emoji pass, 257 do not; U+00A0 and other non-control text pass', () => {
    expect(link({ campaign_id: UUID, referrer_id: EMOJI.repeat(256) }).referrer_id).toBe(EMOJI.repeat(256));
    expect(link({ campaign_id: UUID, referrer_id: '\u00a0é日本' })).toBeDefined();
    expect(details(() => link({ campaign_id: UUID, referrer_id: EMOJI.repeat(257) }))).toEqual([
      { field: 'referrer_id', message: 'must be at most 256 characters' },
    ]);
  });

  it('a lone surrogate is not Unicode text: refused by name in every stored string', () => {
    expect(details(() => campaign({ url: 'example.com', name: '\ud800x' }))).toEqual([
      { field: 'name', message: 'must be valid Unicode text' },
    ]);
    expect(details(() => linkAction({ referral_code: 'ABCD', action_type: '\udc00' }))).toEqual([
      { field: 'action_type', message: 'must be valid Unicode text' },
    ]);
  });

  it('webhook_url: a string of 1–2048 code points after trimming, or null', () => {
    const url = `https://hooks.example.com/${'a'.repeat(2048 - 'https://hooks.example.com/'.length)}`;
    expect(update({ webhook_url: ` ${url} ` })).toBeDefined();
    expect(update({ webhook_url: null })).toEqual({ webhook_url: null });
    expect(details(() => update({ webhook_url: `${url}a` }))).toEqual([
      { field: 'webhook_url', message: 'must be at most 2048 characters' },
    ]);
    expect(details(() => update({ webhook_url: '  ' }))).toEqual([
      { field: 'webhook_url', message: 'must not be empty' },
    ]);
    expect(details(() => update({ webhook_url: 5 }))).toEqual([
      { field: 'webhook_url', message: 'must be a string or null' },
    ]);
  });

  it('action_type is 1–64 code points', () => {
    expect(linkAction({ referral_code: 'ABCD', action_type: EMOJI.repeat(64) })).toBeDefined();
    expect(details(() => linkAction({ referral_code: 'ABCD', action_type: EMOJI.repeat(65) }))).toEqual([
      { field: 'action_type', message: 'must be at most 64 characters' },
    ]);
  });

  it('codePointLength counts surrogate pairs once and lone surrogates once each', () => {
    expect(codePointLength('')).toBe(0);
    expect(codePointLength(`a${EMOJI}b`)).toBe(3);
    expect(codePointLength('\ud800\ud800')).toBe(2);
    fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => codePointLength(s) === [...s].length));
  });
});

describe('JsonObject: metadata', () => {
  it('is at most 8 KiB as compact UTF-8 JSON: exactly 8192 bytes pass, one more does not', () => {
    expect(MAX_METADATA_BYTES).toBe(8192);
    // '{"a":""}' is 8 bytes.
    const at = { a: 'x'.repeat(8184) };
    expect(linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: at }).metadata).toBe(at);
    expect(
      details(() =>
        linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: { a: 'x'.repeat(8185) } }),
      ),
    ).toEqual([{ field: 'metadata', message: 'must be at most 8192 bytes as compact JSON' }]);
    // Bytes, not characters, and escapes as written.
    expect(
      linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: { a: 'é'.repeat(4092) } }),
    ).toBeDefined();
    expect(
      details(() =>
        linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: { a: 'é'.repeat(4093) } }),
      )?.[0]?.field,
    ).toBe('metadata');
    expect(
      details(() =>
        linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: { a: '\n'.repeat(4093) } }),
      )?.[0]?.field,
    ).toBe('metadata');
  });

  it('takes any keys and nesting within the size, and refuses only non-finite numbers', () => {
    const odd = JSON.parse(
      '{"":1,"__proto__":{"":[]},"constructor":2,"big":123456789012345678901234567890,"tiny":1e-200,"huge":-1e200}',
    );
    expect(linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: odd }).metadata).toBe(odd);
    const deep = JSON.parse(`{"a":${'['.repeat(4000)}${']'.repeat(4000)}}`);
    expect(linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: deep })).toBeDefined();
    const infinite = JSON.parse('{"a":{"b":[1,1e400]}}');
    expect(
      details(() => linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: infinite })),
    ).toEqual([{ field: 'metadata', message: 'must hold only finite numbers (a.b.1 is not)' }]);
    for (const notObject of [[], null, 'x', 1]) {
      expect(
        details(() => linkAction({ referral_code: 'ABCD', action_type: 'x', metadata: notObject })),
      ).toEqual([{ field: 'metadata', message: 'must be an object' }]);
    }
  });
});

describe('stringifyJson', () => {
  it('gives the native text for anything JSON.parse makes, at any depth', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(stringifyJson(value)).toBe(JSON.stringify(value));
      }),
    );
  });

  it('serializes nesting the native serializer cannot, to text that parses back to the same value', () => {
    const text = `{"a":${'[{"":'.repeat(8000)}null${'}]'.repeat(8000)},"b":[1,"é",true]}`;
    const value = JSON.parse(text);
    expect(() => JSON.stringify(value)).toThrow(RangeError);
    expect(stringifyJson(value)).toBe(text);
  });

  it('nonFiniteNumberPath finds the first non-finite number at any depth', () => {
    expect(nonFiniteNumberPath({ a: [1, { b: 2 }] })).toBeUndefined();
    expect(nonFiniteNumberPath(JSON.parse(`${'['.repeat(10000)}1e999${']'.repeat(10000)}`))).toBe(
      Array(10000).fill('0').join('.'),
    );
  });
});

describe('the OpenAPI document states the same rules as plain JSON Schema', () => {
  // biome-ignore lint/suspicious/noExplicitAny: the test walks the document's JSON without a type for each node
  type Json = Record<string, any>;
  const schemas = (buildOpenApiDocument().components as { schemas: Record<string, Json> }).schemas;

  it('lengths of the contract, patterns for control characters, the metadata bound', () => {
    const create = schemas.CreateCampaignBody!.properties;
    expect(create.url).toMatchObject({ type: 'string', minLength: 1, maxLength: 2048 });
    expect(create.name).toMatchObject({
      type: 'string',
      minLength: 1,
      maxLength: 256,
      pattern: expect.any(String),
    });
    expect(new RegExp(create.name.pattern, 'u').test('a\u0085b')).toBe(false);
    expect(new RegExp(create.name.pattern, 'u').test(EMOJI)).toBe(true);
    expect(new RegExp(create.name.pattern, 'u').test(' \tSpring sale\n')).toBe(true);
    expect(new RegExp(create.name.pattern, 'u').test('Spring\nsale')).toBe(false);
    const webhook = schemas.UpdateCampaignBody!.properties.webhook_url;
    expect(webhook.anyOf[0]).toMatchObject({ type: 'string', maxLength: 2048 });
    const action = schemas.CreateLinkActionBody!.properties;
    expect(action.metadata).toMatchObject({ type: 'object', 'x-max-bytes': 8192 });
    expect(action.action_type).toMatchObject({ minLength: 1, maxLength: 64 });
    const walk = (node: unknown): void => {
      if (node === null || typeof node !== 'object') return;
      expect(Object.keys(node)).not.toContain('maxBytes');
      for (const v of Object.values(node)) walk(v);
    };
    walk(schemas);
  });
});

describe('the document and the validators agree, value by value', () => {
  // The document's JSON Schema, read by a JSON Schema validator that counts code points as the
  // standard does, against the handlers' compiled validators: same answer for every string
  // (without outer white space, which only the service trims, and as Unicode text, which JSON
  // Schema cannot require).
  const ajv = documentAjv(buildOpenApiDocument());
  const documented = (name: string) => ajv.getSchema(`openapi.json#/components/schemas/${name}`)!;
  const accepts = (validate: (value: unknown) => unknown, value: unknown) => {
    try {
      validate(value);
      return true;
    } catch {
      return false;
    }
  };
  const text = fc
    .oneof(
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.integer({ min: 0, max: 300 }).map((n) => EMOJI.repeat(n)),
      fc.constantFrom('a\u0085b', 'a\u0000b', '\u009f', 'x'.repeat(64), 'x'.repeat(65)),
    )
    .filter((s) => s === s.trim());

  it.each([
    ['CreateCampaignBody', campaign, (s: string) => ({ url: 'example.com', name: s })],
    ['CreateCampaignBody', campaign, (s: string) => ({ url: `example.com/${s}`, name: 'n' })],
    ['UpdateCampaignBody', update, (s: string) => ({ webhook_url: s })],
    ['CreateLinkBody', link, (s: string) => ({ campaign_id: UUID, referrer_id: s })],
    ['CreateLinkActionBody', linkAction, (s: string) => ({ referral_code: 'ABCD', action_type: s })],
    [
      'CreateUserActionBody',
      userAction,
      (s: string) => ({ campaign_id: UUID, action_type: 'x', referred_user_id: s }),
    ],
  ] as const)('%s', (name, validate, body) => {
    const check = documented(name);
    fc.assert(
      fc.property(text, (s) => {
        expect(accepts(validate, body(s)), JSON.stringify(s)).toBe(check(body(s)));
      }),
      { numRuns: 500 },
    );
  });
});
