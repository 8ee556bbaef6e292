/**
 * Two schema kinds whose rules TypeBox's built-in ones cannot state (the rules themselves, TypeBox-free,
 * are in `lib/domain/kind-rules.ts`, which the generated validators call), while their JSON form (what the OpenAPI
 * document shows, symbol keys dropped) is plain JSON Schema saying the same thing:
 *
 * - `Text`: lengths in Unicode code points, as the contract and JSON Schema count them (TypeBox's
 *   `maxLength` counts UTF-16 units, so 256 emoji would be 512), optionally after trimming,
 *   optionally without control characters, and never a lone surrogate (not Unicode text, and not
 *   storable as a DynamoDB string).
 * - `JsonObject`: any JSON object (metadata) within a size as compact UTF-8 JSON, with finite
 *   numbers only; kept as the client sent it, so no key or nesting rule applies.
 */
import { Kind, Type, TypeRegistry } from '@sinclair/typebox';
import { type JsonObjectOptions, jsonObjectProblem, type TextOptions, textProblem } from './kind-rules.ts';

export { codePointLength, type JsonObjectOptions, type TextOptions } from './kind-rules.ts';

const NO_CONTROL_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';
/** The same where leading and trailing white space (what `trim` removes, `\s`) do not count. */
const NO_CONTROL_TRIMMED_PATTERN = '^\\s*[^\\u0000-\\u001f\\u007f-\\u009f]*\\s*$';

/**
 * The rules a check needs beyond JSON Schema's own keywords, under a symbol key: the document's
 * JSON form drops symbol keys, so it never carries a keyword no JSON Schema tool knows.
 */
const Rules = Symbol('Rules');

/** The options a `Text` or `JsonObject` schema was made with (what its generated check is given). */
export function rulesOf<T = TextOptions | JsonObjectOptions>(schema: unknown): T {
  return (schema as { [Rules]: T })[Rules];
}

// Registered so that TypeBox's compiler accepts the kinds when the validators are generated (and the
// tests' TypeBox oracle checks them); the functions never load this registry.
TypeRegistry.Set('Text', (schema, value) => textProblem(rulesOf<TextOptions>(schema), value) === undefined);

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
