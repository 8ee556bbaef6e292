/**
 * Build time only (TypeBox's compiler; no function imports this module): turns a TypeBox request
 * schema into a standalone check, the JavaScript source TypeBox's `TypeCompiler.Code` writes, and the
 * schema's JSON form (`SchemaNode`) the error description walks. `scripts/build-validators.ts` writes
 * both into `lib/operations/compiled.ts`; `compileValidator` builds the very same validator in
 * process, for tests of arbitrary schemas.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { rulesOf } from '../domain/schema-kinds.ts';
import type { SchemaNode } from './describe.ts';
import { kindHook, type Validator, validator } from './validator.ts';

const CUSTOM_KINDS = new Set(['Text', 'JsonObject']);
const PLAIN_KINDS = new Set([
  'Object',
  'String',
  'Integer',
  'Number',
  'Boolean',
  'Null',
  'Literal',
  'Union',
  'Unknown',
  'Array',
]);
/**
 * Keywords a check may read; anything else that constrains values is refused below, so that the
 * error description (`describe.ts`, in every bundle with a validator) need know no more than these.
 */
const KEPT = [
  'type',
  'required',
  'additionalProperties',
  'const',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
] as const;
/** Keywords that only document. */
const DOCUMENTATION = new Set(['description', 'examples', 'default', 'title', 'x-max-bytes']);

/** The JSON form of a request schema; throws on any keyword the description would not honour. */
export function toNode(schema: TSchema, at = '(schema)'): SchemaNode {
  const kind = schema[Kind] as string;
  if (!PLAIN_KINDS.has(kind) && !CUSTOM_KINDS.has(kind)) throw new Error(`${at}: unsupported kind ${kind}`);
  const node: SchemaNode = { kind };
  for (const key of Object.keys(schema)) {
    if ((KEPT as readonly string[]).includes(key) || DOCUMENTATION.has(key)) continue;
    if (key === 'properties' || key === 'anyOf' || key === 'items') continue;
    throw new Error(`${at}: keyword ${key} is not supported by the generated validators`);
  }
  for (const key of KEPT)
    if (schema[key] !== undefined) (node as unknown as Record<string, unknown>)[key] = schema[key];
  if (typeof schema.additionalProperties === 'object') {
    throw new Error(`${at}: additionalProperties as a schema is not supported`);
  }
  // The description only words a pattern's message ("must be a UUID").
  if (typeof schema.pattern === 'string' && typeof schema.description === 'string') {
    node.description = schema.description;
  }
  if (schema.properties) {
    node.properties = Object.fromEntries(
      Object.entries(schema.properties as Record<string, TSchema>).map(([k, v]) => [
        k,
        toNode(v, `${at}.${k}`),
      ]),
    );
  }
  if (schema.anyOf) node.anyOf = (schema.anyOf as TSchema[]).map((m, i) => toNode(m, `${at}|${i}`));
  if (schema.items) node.items = toNode(schema.items as TSchema, `${at}[]`);
  // A custom kind is checked by its rules alone; its JSON Schema keywords only document them.
  if (CUSTOM_KINDS.has(kind)) return { kind, type: schema.type as string, rules: checkedRules(schema) };
  return node;
}

/** A custom kind's options without its description, which no check reads. */
function checkedRules(schema: TSchema): unknown {
  const { description: _, ...rules } = rulesOf(schema) as { description?: string };
  return rules;
}

/** The custom-kind nodes of a schema in the order TypeBox's compiler numbers their instances. */
function customInstances(schema: TSchema, out: TSchema[] = []): TSchema[] {
  if (CUSTOM_KINDS.has(schema[Kind] as string)) {
    out.push(schema);
    return out;
  }
  for (const child of Object.values((schema.properties ?? {}) as Record<string, TSchema>)) {
    customInstances(child, out);
  }
  for (const member of (schema.anyOf ?? []) as TSchema[]) customInstances(member, out);
  if (schema.items) customInstances(schema.items as TSchema, out);
  return out;
}

export interface GeneratedCheck {
  /**
   * The body of `function (kind) { … }`: TypeBox's compiled check, which calls `kind(name, i, value)`
   * for instance `i` of a custom kind and returns `check(value)`.
   */
  body: string;
  /** The rules of each custom-kind instance, by instance number. */
  rules: unknown[];
  node: SchemaNode;
}

export function generateCheck(
  schema: TSchema,
  at = '(schema)',
  language: 'javascript' | 'typescript' = 'javascript',
): GeneratedCheck {
  const node = toNode(schema, at);
  // TypeBox's TypeScript output annotates an array's loop variable (`for(const value: any of
  // array)`), which TypeScript refuses; the parameter is typed instead.
  const body = TypeCompiler.Code(schema, [], { language }).replace(
    /\(\(array\) => \{ for\(const (\w+): any of array\)/g,
    '((array: any[]) => { for(const $1 of array)',
  );
  // `format` and `hash` are hooks of TypeBox's runtime the generated module does not supply.
  if (/\b(format|hash)\(/.test(body))
    throw new Error(`${at}: the check needs TypeBox's format or hash hooks`);
  const instances = customInstances(schema);
  const calls = [...body.matchAll(/\bkind\('([A-Za-z]+)', (\d+), /g)];
  if (
    calls.length !== instances.length ||
    calls.some(([, name, i]) => Number(i) >= instances.length || instances[Number(i)]?.[Kind] !== name)
  ) {
    throw new Error(`${at}: the compiler numbered its custom kinds differently than expected`);
  }
  return { body, rules: instances.map(checkedRules), node };
}

/** The validator of any schema, built in process exactly as the generated module builds it. */
export function compileValidator<T extends TSchema>(
  schema: T,
): Validator<import('@sinclair/typebox').Static<T>> {
  const { body, rules, node } = generateCheck(schema);
  const check = new Function('kind', body)(kindHook(rules)) as (value: unknown) => boolean;
  return validator(check, node);
}
