/**
 * An operation as `httpHandler` enforces it: what `scripts/build-validators.ts` generates from its
 * definition (`compiled.ts`): standalone validators and the request rules as plain data. Nothing here
 * loads TypeBox; the types below only read the definitions' schema types.
 */
import type { Static, TObject } from '@sinclair/typebox';
import type { Validator } from '../validation/validator.ts';
import type { OperationDefinition, RuleError } from './definition.ts';

export interface CompiledOperation<
  Body = undefined,
  Query = Record<string, string>,
  Path = Record<string, string>,
> {
  /** The route table row's `name`. */
  readonly name: string;
  /** Public routes (no api-key) are false. */
  readonly auth: boolean;
  readonly body?: {
    readonly validate: Validator<Body>;
    readonly optional: boolean;
    readonly refused: Readonly<Record<string, RuleError>>;
    readonly exactlyOne?: readonly string[];
  };
  readonly query?: {
    readonly validate: Validator<Query>;
    readonly required: readonly string[];
    readonly atLeastOne?: readonly string[];
  };
  /** Refuses a bad path with 400 `validation_failed`, or with the definition's `pathNotFound`. */
  readonly path?: {
    readonly validate: Validator<Path>;
  };
}

type Part<D, K extends 'body' | 'query' | 'path', Else> = D extends { request: { [P in K]: infer S } }
  ? S extends TObject
    ? Static<S>
    : Else
  : Else;

/** The compiled form of a definition, its request parts typed from its schemas. */
export type CompiledOperationOf<D extends OperationDefinition> = CompiledOperation<
  Part<D, 'body', undefined>,
  Part<D, 'query', Record<string, string>>,
  Part<D, 'path', Record<string, string>>
>;
