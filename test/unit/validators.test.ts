/**
 * The validators the functions ship are generated at build time (`scripts/build-validators.ts` ->
 * `lib/operations/compiled.ts`), so the bundles carry no TypeBox. This file holds them to what they
 * replace: for every request schema of every operation, the generated validator accepts and refuses
 * exactly what TypeBox's runtime compiler does, with exactly the `details` the handlers gave when they
 * described TypeBox's `Errors` (the oracle below is that code, kept here as the reference).
 */
import { Kind, type TObject, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError, type ErrorDetail } from '../../lib/domain/errors.ts';
import { kindProblem } from '../../lib/domain/kind-rules.ts';
import { rulesOf } from '../../lib/domain/schema-kinds.ts';
import * as compiled from '../../lib/operations/compiled.ts';
import type { OperationDefinition } from '../../lib/operations/definition.ts';
import { operations } from '../../lib/operations/definitions.ts';
import type { CompiledOperation } from '../../lib/operations/runtime.ts';
import { routes } from '../../lib/routes.ts';
import { COMPILED_FILE, generateCompiledModule } from '../../scripts/build-validators.ts';

describe('lib/operations/compiled.ts', () => {
  it('is what scripts/build-validators.ts writes from the current definitions', async () => {
    const { readFileSync } = await import('node:fs');
    const committed = readFileSync(COMPILED_FILE, 'utf8');
    expect(committed === generateCompiledModule(), 'out of date: run `npm run validators:build`').toBe(true);
  });

  it('has one operation per route, named after it, with its auth', () => {
    for (const route of routes) {
      const op = (compiled as Record<string, CompiledOperation<unknown, unknown, unknown>>)[route.name];
      expect(op?.name, route.name).toBe(route.name);
      expect(op?.auth, route.name).toBe(route.auth);
    }
  });

  it('carries the rule errors with the same code and message as the domain errors the handlers throw', async () => {
    process.env.TABLE_NAME ??= 'unit-test';
    const { linkNotFound } = await import('../../lib/db/links.ts');
    const { urlImmutable } = await import('../../lib/domain/campaign-rules.ts');
    const pick = (e: ApiError) => ({ code: e.code, message: e.message });
    expect(compiled.UpdateCampaign.body?.refused).toEqual({ url: pick(urlImmutable()) });
    // A code that cannot exist is the redirect's 404, not a 400.
    expect(() => compiled.Visit.path?.validate({ referral_code: 'no!' })).toThrow(
      expect.objectContaining(pick(linkNotFound())),
    );
    expect(compiled.Visit.path?.validate({ referral_code: 'ABCD' })).toEqual({ referral_code: 'ABCD' });
  });
});

// --- The oracle: TypeBox's runtime compiler and Errors, described as lib/http/validate.ts did before the validators were generated. ---

function oracleKindProblem(schema: TSchema, value: unknown): string | undefined {
  const kind = schema[Kind] as string;
  return kind === 'Text' || kind === 'JsonObject' ? kindProblem(kind, rulesOf(schema), value) : undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return typeof value === 'object' && value !== null && !Array.isArray(value);
    case 'integer':
      return Number.isInteger(value);
    default:
      return typeof value === type;
  }
}
const withArticle = (type: string) =>
  type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;

function oracleDescribe(message: string, value: unknown, schema: TSchema): string {
  if (value === undefined && message.startsWith('Expected required property')) return 'is required';
  const problem = oracleKindProblem(schema, value);
  if (problem) return problem;
  if (message.startsWith('Unexpected property')) return 'is not a known field';
  if (typeof schema.maxLength === 'number' && typeof value === 'string' && value.length > schema.maxLength) {
    return `must be at most ${schema.maxLength} characters`;
  }
  if (typeof schema.pattern === 'string' && typeof value === 'string') {
    return typeof schema.description === 'string'
      ? `must be ${schema.description.replace(/^An? /, (article) => article.toLowerCase())}`
      : 'has an invalid format';
  }
  if (schema.pattern === undefined && typeof schema.type === 'string' && !hasType(value, schema.type)) {
    return `must be ${withArticle(schema.type)}`;
  }
  if (Array.isArray(schema.anyOf)) {
    for (const member of schema.anyOf as TSchema[]) {
      if (typeof member.type === 'string' && hasType(value, member.type)) {
        const memberProblem = oracleKindProblem(member, value);
        if (memberProblem) return memberProblem;
      }
    }
    const types = (schema.anyOf as TSchema[]).map((s) => s.type);
    if (types.every((t) => typeof t === 'string') && !types.some((t) => hasType(value, t))) {
      return `must be ${types.map(withArticle).join(' or ')}`;
    }
  }
  return message.charAt(0).toLowerCase() + message.slice(1);
}

function oracle(schema: TSchema): (value: unknown) => ErrorDetail[] | 'ok' {
  const check = TypeCompiler.Compile(schema);
  return (value) => {
    if (check.Check(value)) return 'ok';
    const details: ErrorDetail[] = [];
    const seen = new Set<string>();
    for (const error of check.Errors(value)) {
      const field = error.path
        ? error.path
            .slice(1)
            .split('/')
            .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
            .join('.')
        : '(body)';
      if (seen.has(field)) continue;
      seen.add(field);
      details.push({ field, message: oracleDescribe(error.message, error.value, error.schema) });
      if (details.length >= 20) break;
    }
    return details;
  };
}

function outcome(validate: (value: unknown) => unknown, value: unknown): ErrorDetail[] | 'ok' {
  try {
    validate(value);
    return 'ok';
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('validation_failed');
    return (err as ApiError).details ?? [];
  }
}

// --- Values: near-valid and hostile, shaped by each schema. ---

const EMOJI = '😀';
const junk = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e21, '', ' ', '\ud800', 'a\u0085b', '\u0000', [], {}, [
    'x',
  ]),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.jsonValue({ maxDepth: 2 }),
);

function samples(schema: TSchema): fc.Arbitrary<unknown> {
  const kind = schema[Kind] as string;
  switch (kind) {
    case 'Object': {
      const props = Object.entries(schema.properties as Record<string, TSchema>);
      const keys = fc.subarray(props.map(([k]) => k));
      return fc
        .tuple(
          keys,
          fc.tuple(...props.map(([, s]) => samples(s))),
          fc.dictionary(fc.constantFrom('extra', 'nmae', '__proto__', 'constructor', ''), junk, {
            maxKeys: 2,
          }),
          fc.boolean(),
        )
        .map(([present, values, extra, withExtra]) => {
          const out: Record<string, unknown> = withExtra ? { ...extra } : {};
          props.forEach(([k], i) => {
            if (present.includes(k)) out[k] = values[i];
          });
          return out;
        });
    }
    case 'Union':
      return fc.oneof(...(schema.anyOf as TSchema[]).map(samples), junk);
    case 'Literal':
      return fc.oneof(fc.constant(schema.const), junk);
    case 'Integer':
      return fc.oneof(
        fc.integer({ min: -2, max: 3 }),
        fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2, 1.5, '1'),
        junk,
      );
    case 'Text': {
      const rules = rulesOf(schema) as { maxLength: number };
      return fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 20 }),
        fc.constantFrom(
          'x'.repeat(rules.maxLength),
          'x'.repeat(rules.maxLength + 1),
          EMOJI.repeat(rules.maxLength),
          EMOJI.repeat(rules.maxLength + 1),
          `  ${'n'.repeat(rules.maxLength)} `,
          '   ',
          'a\u0001b',
          'x\ud800',
        ),
        junk,
      );
    }
    case 'JsonObject':
      return fc.oneof(
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
        fc.constantFrom({ a: 'x'.repeat(8184) }, { a: 'x'.repeat(8185) }, JSON.parse('{"a":[1,1e400]}')),
        junk,
      );
    case 'String': {
      const valid = [
        '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a',
        '3F0C5B7E-2A4D-4C1B-9A8E-6D5F4E3C2B1A',
        'ABCD',
        'ALICE-SPRING_2',
        '1',
        '1000',
        '1001',
        '42',
        'eyJrIjoxfQ',
        'x'.repeat(1025),
      ];
      return fc.oneof(fc.constantFrom(...valid), fc.string({ maxLength: 40 }), junk);
    }
    default:
      return junk;
  }
}

const requestSchemas = Object.entries(operations as Readonly<Record<string, OperationDefinition>>).flatMap(
  ([name, def]) =>
    (['body', 'query', 'path'] as const)
      .filter((part) => def.request?.[part])
      .map((part) => ({
        name,
        part,
        schema: def.request?.[part] as TObject,
        fixedError: part === 'path' ? def.request?.pathNotFound : undefined,
      })),
);

describe('generated validators agree with TypeBox, value by value', () => {
  it('covers every request schema of the definitions', () => {
    expect(requestSchemas.length).toBeGreaterThanOrEqual(14);
  });

  it.each(requestSchemas.map((s) => [`${s.name}.${s.part}`, s] as const))(
    '%s',
    (_, { name, part, schema, fixedError }) => {
      const generated = (compiled as Record<string, CompiledOperation<unknown, unknown, unknown>>)[name]?.[
        part
      ];
      expect(generated).toBeDefined();
      const expected = oracle(schema);
      const sample = samples(schema);
      const notObjects = fc.constantFrom(null, [], 'str', 42, true, undefined);
      fc.assert(
        fc.property(
          fc.oneof({ arbitrary: sample, weight: 9 }, { arbitrary: notObjects, weight: 1 }),
          (value) => {
            if (!fixedError) {
              expect(outcome(generated!.validate, value), JSON.stringify(value)).toEqual(expected(value));
              return;
            }
            // A path with a fixed error (the redirect's 404): the same values refused, with that error.
            let got: unknown = 'ok';
            try {
              generated!.validate(value);
            } catch (err) {
              got = err instanceof ApiError ? { code: err.code, message: err.message } : err;
            }
            expect(got, JSON.stringify(value)).toEqual(expected(value) === 'ok' ? 'ok' : fixedError);
          },
        ),
        { numRuns: 1500 },
      );
    },
  );
});
