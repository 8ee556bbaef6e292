/**
 * The rules of the two schema kinds JSON Schema's own keywords cannot state (`Text` and
 * `JsonObject`, built with TypeBox in `lib/domain/schema-kinds.ts`), as plain functions over plain
 * options. No TypeBox here: the generated validators the functions ship call these, so the bundles
 * carry neither TypeBox's compiler nor its type builders.
 */
import { nonFiniteNumberPath, stringifyJson } from './json.ts';

/** "No control characters": U+0000–U+001F and U+007F–U+009F (contract, Conventions). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export interface TextOptions {
  minLength?: number;
  maxLength: number;
  /** The bounds apply to the value with leading and trailing white space removed. */
  trimmed?: boolean;
  noControl?: boolean;
  description?: string;
}

export interface JsonObjectOptions {
  /** Largest size as compact UTF-8 JSON. */
  maxBytes: number;
  description: string;
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
export function textProblem(rules: TextOptions, value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string';
  if (!value.isWellFormed()) return 'must be valid Unicode text';
  const text = rules.trimmed ? value.trim() : value;
  const length = codePointLength(text);
  const min = rules.minLength ?? 0;
  if (length < min) return min === 1 ? 'must not be empty' : `must be at least ${min} characters`;
  if (length > rules.maxLength) return `must be at most ${rules.maxLength} characters`;
  if (rules.noControl && CONTROL.test(text)) return 'must not contain control characters';
  return undefined;
}

/** What is wrong with a value for a `JsonObject` schema, as a field message; undefined when nothing. */
export function jsonObjectProblem(rules: JsonObjectOptions, value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'must be an object';
  // Size first: it bounds the walk below, and a huge value is refused for what it is.
  if (Buffer.byteLength(stringifyJson(value), 'utf8') > rules.maxBytes) {
    return `must be at most ${rules.maxBytes} bytes as compact JSON`;
  }
  const at = nonFiniteNumberPath(value);
  if (at !== undefined) return `must hold only finite numbers (${at || 'a value'} is not)`;
  return undefined;
}

export type KindName = 'Text' | 'JsonObject';

/** The field message for a value of a custom kind with these rules; undefined when it passes. */
export function kindProblem(kind: string, rules: unknown, value: unknown): string | undefined {
  if (kind === 'Text') return textProblem(rules as TextOptions, value);
  if (kind === 'JsonObject') return jsonObjectProblem(rules as JsonObjectOptions, value);
  throw new Error(`unknown schema kind ${kind}`);
}
