/**
 * Why a value failed its schema, as the contract's `details`: one `{ field, message }` per offending
 * field, at most 20. Runs only after a generated check (`lib/operations/compiled.ts`) has refused a
 * value, so the common path (a valid request) never walks the schema.
 *
 * It reads the schema as plain JSON (`SchemaNode`, written out by `scripts/build-validators.ts`) and
 * reports the errors in the order, and with the messages, that TypeBox's `Errors` iterator gave the
 * handlers before the validators were generated at build time (TypeBox's runtime is 91 KiB of every
 * bundle). `test/unit/validators.test.ts` holds it to that: for every request schema of every
 * operation and thousands of generated values, the details equal TypeBox's, value by value.
 */
import type { ErrorDetail } from '../domain/errors.ts';
import { kindProblem } from '../domain/kind-rules.ts';

/**
 * A request schema as JSON: JSON Schema keywords plus `kind`, TypeBox's name of the node's type
 * (`Object`, `String`, `Text`…), and for the custom kinds their `rules`. Only what a check or a
 * message reads is kept.
 */
export interface SchemaNode {
  kind: string;
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  additionalProperties?: boolean;
  anyOf?: SchemaNode[];
  items?: SchemaNode;
  const?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  description?: string;
  rules?: unknown;
}

/** One failure as TypeBox's iterator reported it: where, the schema, the value and its message. */
interface RawError {
  path: string[];
  node: SchemaNode;
  value: unknown;
  message: string;
}

const MAX_DETAILS = 20;

/**
 * TypeBox's order and wording of the numeric bounds. Only the keywords the generator lets through
 * (`lib/validation/generate.ts`) are described: every bundle with a validator carries this file.
 */
const NUMBER_BOUNDS: ReadonlyArray<
  readonly ['maximum' | 'minimum', string, (n: number, bound: number) => boolean]
> = [
  ['maximum', 'less or equal to', (n, b) => n <= b],
  ['minimum', 'greater or equal to', (n, b) => n >= b],
];

export function validationDetails(node: SchemaNode, value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const error of errorsOf(node, [], value)) {
    const field = error.path.length === 0 ? '(body)' : error.path.join('.');
    if (seen.has(field)) continue; // one message per field is enough, unions repeat themselves
    seen.add(field);
    details.push({ field, message: describe(error) });
    if (details.length >= MAX_DETAILS) break;
  }
  return details;
}

/** Whether the value passes: no error at all. */
function passes(node: SchemaNode, value: unknown): boolean {
  return errorsOf(node, [], value).next().done === true;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function* errorsOf(node: SchemaNode, path: string[], value: unknown): Generator<RawError> {
  const error = (message: string): RawError => ({ path, node, value, message });
  switch (node.kind) {
    case 'Unknown':
      return;
    case 'Text':
    case 'JsonObject':
      if (kindProblem(node.kind, node.rules, value) !== undefined)
        yield error(`Expected kind '${node.kind}'`);
      return;
    case 'Null':
      if (value !== null) yield error('Expected null');
      return;
    case 'Boolean':
      if (typeof value !== 'boolean') yield error('Expected boolean');
      return;
    case 'Literal':
      if (value !== node.const) {
        yield error(`Expected ${typeof node.const === 'string' ? `'${node.const}'` : String(node.const)}`);
      }
      return;
    case 'String':
      if (typeof value !== 'string') return yield error('Expected string');
      if (node.minLength !== undefined && !(value.length >= node.minLength)) {
        yield error(`Expected string length greater or equal to ${node.minLength}`);
      }
      if (node.maxLength !== undefined && !(value.length <= node.maxLength)) {
        yield error(`Expected string length less or equal to ${node.maxLength}`);
      }
      if (node.pattern !== undefined && !new RegExp(node.pattern).test(value)) {
        yield error(`Expected string to match '${node.pattern}'`);
      }
      return;
    case 'Integer':
    case 'Number': {
      const name = node.kind.toLowerCase();
      const ok = node.kind === 'Integer' ? Number.isInteger(value) : Number.isFinite(value);
      if (!ok) return yield error(`Expected ${name}`);
      for (const [keyword, phrase, holds] of NUMBER_BOUNDS) {
        const bound = node[keyword];
        if (bound !== undefined && !holds(value as number, bound)) {
          yield error(`Expected ${name} to be ${phrase} ${bound}`);
        }
      }
      return;
    }
    case 'Array':
      if (!Array.isArray(value)) return yield error('Expected array');
      for (let i = 0; i < value.length; i++) {
        yield* errorsOf(node.items as SchemaNode, [...path, String(i)], value[i]);
      }
      return;
    case 'Union':
      if ((node.anyOf ?? []).some((member) => passes(member, value))) return;
      yield error('Expected union value');
      return;
    case 'Object': {
      if (!isObject(value)) return yield error('Expected object');
      const properties = node.properties ?? {};
      const known = Object.getOwnPropertyNames(properties);
      const present = Object.getOwnPropertyNames(value);
      for (const key of node.required ?? []) {
        if (present.includes(key)) continue;
        const property = properties[key] as SchemaNode;
        yield {
          path: [...path, key],
          node: property,
          value: undefined,
          message: 'Expected required property',
        };
      }
      if (node.additionalProperties === false) {
        for (const key of present) {
          if (!known.includes(key)) {
            yield { path: [...path, key], node, value: value[key], message: 'Unexpected property' };
          }
        }
      }
      for (const key of known) {
        const property = properties[key] as SchemaNode;
        if (node.required?.includes(key) || value[key] !== undefined) {
          yield* errorsOf(property, [...path, key], value[key]);
        }
      }
      return;
    }
    default:
      throw new Error(`no error description for schema kind ${node.kind}`);
  }
}

/** The field message for the first error of a field: the contract's wording, not TypeBox's. */
function describe({ node, value, message }: RawError): string {
  if (value === undefined && message.startsWith('Expected required property')) return 'is required';
  const problem = customProblem(node, value);
  if (problem) return problem;
  if (message.startsWith('Unexpected property')) return 'is not a known field';
  if (typeof node.maxLength === 'number' && typeof value === 'string' && value.length > node.maxLength) {
    return `must be at most ${node.maxLength} characters`;
  }
  if (typeof node.pattern === 'string' && typeof value === 'string') {
    return typeof node.description === 'string'
      ? `must be ${node.description.replace(/^An? /, (article) => article.toLowerCase())}`
      : 'has an invalid format';
  }
  if (node.pattern === undefined && typeof node.type === 'string' && !hasType(value, node.type)) {
    return `must be ${withArticle(node.type)}`;
  }
  // A union of plain types (e.g. string | null) reads better as "must be a string or null",
  // unless the value has the type of a member and only breaks that member's own rule.
  if (Array.isArray(node.anyOf)) {
    for (const member of node.anyOf) {
      if (typeof member.type === 'string' && hasType(value, member.type)) {
        const memberProblem = customProblem(member, value);
        if (memberProblem) return memberProblem;
      }
    }
    const types = node.anyOf.map((s) => s.type);
    if (types.every((t) => typeof t === 'string') && !types.some((t) => hasType(value, t as string))) {
      return `must be ${types.map((t) => withArticle(t as string)).join(' or ')}`;
    }
  }
  return message.charAt(0).toLowerCase() + message.slice(1);
}

const customProblem = (node: SchemaNode, value: unknown) =>
  node.kind === 'Text' || node.kind === 'JsonObject' ? kindProblem(node.kind, node.rules, value) : undefined;

/** JSON Schema type test: arrays and null are not objects, every integer is a number. */
function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    case 'integer':
      return Number.isInteger(value);
    default:
      return typeof value === type;
  }
}

const withArticle = (type: string) =>
  type === 'null' ? 'null' : `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
