/**
 * What one operation (one row of `lib/routes.ts`) is, beyond its wiring: the request it takes (path,
 * query and body schemas, and the rules across fields), the answer it gives and the errors particular
 * to it. One definition per route, in `definitions.ts`; two readers:
 *
 * - `scripts/build-validators.ts` generates from it the standalone validators and request rules that
 *   `httpHandler` enforces (`lib/operations/compiled.ts`), so the functions ship no TypeBox;
 * - the OpenAPI document (`lib/openapi/document.ts`) is written from it.
 *
 * So what the document says a route takes is, by construction, what the route accepts.
 */
import type { TObject, TSchema } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.ts';

export const tags = {
  campaigns: 'Campaigns',
  links: 'Referral links',
  referredUsers: 'Referred users',
  actions: 'Actions',
  conversions: 'Conversions',
  rewards: 'Rewards',
  redirect: 'Redirect',
  webhooks: 'Webhooks',
  analytics: 'Analytics',
  meta: 'Documentation',
  health: 'Health',
} as const;
export type Tag = (typeof tags)[keyof typeof tags];

/** Response headers beyond `x-request-id` (which every response carries). */
export type ResponseHeader = 'link' | 'x-next-cursor' | 'x-poll-cursor' | 'location' | 'idempotent-replayed';

export type MediaType = 'application/json' | 'text/html' | 'text/javascript' | 'text/css';

export interface SuccessResponse {
  status: 200 | 201 | 202 | 204 | 302;
  description: string;
  /** The body's schema; absent for a response without a body. */
  schema?: TSchema;
  /** Media types of the body; `application/json` when not given. */
  media?: readonly MediaType[];
  headers?: readonly ResponseHeader[];
}

/** An error a request rule answers with: its code and message, as data the generator writes out. */
export interface RuleError {
  code: ErrorCode;
  message: string;
}

export interface RequestDefinition {
  /**
   * Schemas of the path's `{parameters}`, one property each. Checked after the query; a value that
   * fails is 400 `validation_failed`, or `pathNotFound` when given.
   */
  path?: TObject;
  /** A path that fails its schema names nothing that exists: answered with this error instead. */
  pathNotFound?: RuleError;
  /**
   * Each property is a query parameter. Its `required` ones that are absent or empty are 400
   * `missing_parameter` (all of them named); then the query is validated (400 `validation_failed`).
   */
  query?: TObject;
  /**
   * At least one of these query parameters is required (400 `missing_parameter` naming the first).
   * With such a rule, an empty parameter counts as absent and is not validated.
   */
  queryAtLeastOne?: readonly string[];
  /** The JSON body's schema; unknown fields are refused by the schema itself. */
  body?: TObject;
  /** A request without a body validates as `{}`. */
  bodyOptional?: boolean;
  /** Body fields refused with their own error before any other check of the body. */
  refusedFields?: Readonly<Record<string, RuleError>>;
  /**
   * Exactly one of these body fields, after the schema passed; otherwise 400 `validation_failed`
   * with a detail on the first.
   */
  bodyExactlyOne?: readonly string[];
}

/**
 * One realistic request of the operation and its answer, with values from `examples.ts`: the
 * document shows each part beside its schema (a parameter's `example`, the body's, the success
 * response's) and makes the operation's `curl` sample from it. test/unit/openapi-examples.test.ts
 * validates every part against its schema.
 */
export interface OperationExample {
  /** A value for every path parameter. */
  path?: Readonly<Record<string, string>>;
  /** A value for every query parameter the operation declares. */
  query?: Readonly<Record<string, string>>;
  /**
   * The query parameters the `curl` sample sends, when not all of them: not a cursor, which only
   * the API makes, nor both of two alternatives.
   */
  sampleQuery?: readonly string[];
  body?: Readonly<Record<string, unknown>>;
  /** The success body (of its JSON media type), or one per media type. */
  response?: unknown;
  responses?: Readonly<Partial<Record<MediaType, unknown>>>;
}

export interface OperationDefinition {
  tag: Tag;
  description: string;
  request?: RequestDefinition;
  success: SuccessResponse;
  example: OperationExample;
  /**
   * Errors particular to the route beyond those its request rules give. The document adds the
   * common ones: 401 on rows with `auth`, 400/415 where there is a body, 400 for a query or path
   * rule, 413, 429 and 500 always.
   */
  errors?: readonly ErrorCode[];
  /** What an error code means on this route in particular, added to its general meaning. */
  errorNotes?: Readonly<Partial<Record<ErrorCode, string>>>;
}
