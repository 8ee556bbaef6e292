import { validationError } from '../domain/errors.ts';
import { kindProblem } from '../domain/kind-rules.ts';
import { type SchemaNode, validationDetails } from './describe.ts';

/** Returns the value, typed, or throws 400 `validation_failed` with one detail per offending field. */
export type Validator<T> = (value: unknown) => T;

/**
 * The `kind` hook a generated check calls for a custom kind: instance `i` of the check's schema has
 * the rules `rules[i]` (the generator numbers them as TypeBox's compiler does).
 */
export type KindHook = (kind: string, instance: number, value: unknown) => boolean;

export function kindHook(rules: readonly unknown[]): KindHook {
  return (kind, instance, value) => kindProblem(kind, rules[instance], value) === undefined;
}

/**
 * A validator from a generated check (fast, straight-line code, for every request) and the schema
 * as JSON (walked only to describe a refused value).
 */
export function validator<T>(check: (value: unknown) => boolean, schema: SchemaNode): Validator<T> {
  return (value) => {
    if (check(value)) return value as T;
    const details = validationDetails(schema, value);
    // The check and the description read the same schema; should they ever disagree, the request
    // is still refused, with the body named as the culprit.
    throw validationError(details.length > 0 ? details : [{ field: '(body)', message: 'is not valid' }]);
  };
}
