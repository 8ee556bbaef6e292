import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ErrorDetail, validationError } from '../domain/errors.ts';
import { kindProblem } from '../domain/schema-kinds.ts';

export type Validator<T extends TSchema> = (value: unknown) => Static<T>;

/**
 * Compile a schema once (call at module load) into a function that returns the typed value or
 * throws 400 `validation_failed` with one detail per offending field.
 */
export function compileValidator<T extends TSchema>(schema: T): Validator<T> {
  const check = TypeCompiler.Compile(schema);
  return (value) => {
    if (check.Check(value)) return value;
    const details: ErrorDetail[] = [];
    const seen = new Set<string>();
    for (const error of check.Errors(value)) {
      const field = pointerToField(error.path);
      if (seen.has(field)) continue; // one message per field is enough, unions repeat themselves
      seen.add(field);
      details.push({ field, message: describe(error.message, error.value, error.schema) });
      if (details.length >= 20) break;
    }
    throw validationError(details);
  };
}

function pointerToField(path: string): string {
  if (!path) return '(body)';
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function describe(message: string, value: unknown, schema: TSchema): string {
  if (value === undefined && message.startsWith('Expected required property')) return 'is required';
  const problem = kindProblem(schema, value);
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
  // A union of plain types (e.g. string | null) reads better as "must be a string or null",
  // unless the value has the type of a member and only breaks that member's own rule.
  if (Array.isArray(schema.anyOf)) {
    for (const member of schema.anyOf as TSchema[]) {
      if (typeof member.type === 'string' && hasType(value, member.type)) {
        const memberProblem = kindProblem(member, value);
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

/** JSON Schema type test: arrays and null are not objects, every integer is a number. */
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
