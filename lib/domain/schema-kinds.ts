/**
 * Two schema kinds whose rules TypeBox's built-in ones cannot state, registered with TypeBox so
 * that the handlers' compiled validators check them, while their JSON form (what the OpenAPI
 * document shows, symbol keys dropped) is plain JSON Schema saying the same thing:
 *
 * - `Text`: lengths in Unicode code points, as the contract and JSON Schema count them (TypeBox's
 *   `maxLength` counts UTF-16 units, so 256 emoji would be 512), optionally after trimming,
 *   optionally without control characters, and never a lone surrogate (not Unicode text, and not
 *   storable as a DynamoDB string).
 * - `JsonObject`: any JSON object (metadata) within a size as compact UTF-8 JSON, with finite
 *   numbers only; kept as the client sent it, so no key or nesting rule applies.
 */
import { Kind, type TSchema, Type, TypeRegistry } from '@sinclair/typebox';
import { nonFiniteNumberPath, stringifyJson } from './json.ts';

/** "No control characters": U+0000–U+001F and U+007F–U+009F (contract, Conventions). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const NO_CONTROL_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
/** The same where leading and trailing white space (what `trim` removes, `\s`) do not count. */
const NO_CONTROL_TRIMMED_PATTERN = '^\\s*[^\\u0000-\\u001f\\u007f-\\u009f]*\\s*$';

/**
 * The rules a check needs beyond JSON Schema's own keywords, under a symbol key: the document's
 * JSON form drops symbol keys, so it never carries a keyword no JSON Schema tool knows.
 */
const Rules = Symbol('Rules');

export interface TextOptions {
  minLength?: number;
  maxLength: number;
  /** The bounds apply to the value with leading and trailing white space removed. */
  trimmed?: boolean;
  noControl?: boolean;
  description?: string;
}

/** Number of code points: a surrogate pair is one character. */
export function codePointLength(value: string): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < value.length) {
      const next = value.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** What is wrong with a value for a `Text` schema, as a field message; undefined when nothing. */
export function textProblem(schema: TextOptions, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must be valid Unicode text';
  const text = schema.trimmed ? value.trim() : value;
  const length = codePointLength(text);
  const min = schema.minLength ?? 0;
  if (length < min) return min === 1 ? 'must not be empty' : `must be at least ${min} characters`;
  if (length > schema.maxLength) return `must be at most ${schema.maxLength} characters`;
  if (schema.noControl && CONTROL.test(text)) return 'must not contain control characters';
  return undefined;
}

TypeRegistry.Set('Text', (schema, value) => textProblem(rulesOf<TextOptions>(schema), value) === undefined);

function rulesOf<T>(schema: unknown): T {
  return (schema as { [Rules]: T })[Rules];
}

export function Text(options: TextOptions) {
  const { trimmed, noControl, description, ...bounds } = options;
  const rules = [trimmed ? 'counted after trimming' : '', noControl ? 'no control characters' : ''].filter(
    Boolean,
  );
  return Type.Unsafe<string>({
    [Kind]: 'Text',
    [Rules]: options,
    type: 'string',
    ...bounds,
    ...(noControl ? { pattern: trimmed ? NO_CONTROL_TRIMMED_PATTERN : NO_CONTROL_PATTERN } : {}),
    description: [description, rules.length ? `Lengths in Unicode code points, ${rules.join(', ')}.` : '']
      .filter(Boolean)
      .join(' '),
  });
}

export interface JsonObjectOptions {
  /** Largest size as compact UTF-8 JSON. */
  maxBytes: number;
  description: string;
}

/** What is wrong with a value for a `JsonObject` schema, as a field message; undefined when nothing. */
export function jsonObjectProblem(schema: JsonObjectOptions, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object';
  // Size first: it bounds the walk below, and a huge value is refused for what it is.
  if (Buffer.byteLength(stringifyJson(value), 'utf8') > schema.maxBytes) {
    return `must be at most ${schema.maxBytes} bytes as compact JSON`;
  }
  const at = nonFiniteNumberPath(value);
  if (at !== undefined) return `must hold only finite numbers (${at || 'a value'} is not)`;
  return undefined;
}

TypeRegistry.Set(
  'JsonObject',
  (schema, value) => jsonObjectProblem(rulesOf<JsonObjectOptions>(schema), value) === undefined,
);

export function JsonObject(options: JsonObjectOptions) {
  return Type.Unsafe<Record<string, unknown>>({
    [Kind]: 'JsonObject',
    [Rules]: options,
    type: 'object',
    additionalProperties: true,
    'x-max-bytes': options.maxBytes,
    description: options.description,
  });
}

/** The field message for a value that failed a schema of one of these kinds; undefined otherwise. */
export function kindProblem(schema: TSchema, value: unknown): string | undefined {
  if (schema[Kind] === 'Text') return textProblem(rulesOf<TextOptions>(schema), value);
  if (schema[Kind] === 'JsonObject') return jsonObjectProblem(rulesOf<JsonObjectOptions>(schema), value);
  return undefined;
}
