import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { isDependencyFailure, withDeadline } from '../aws/deadline.ts';
import { ApiError, validationError } from '../domain/errors.ts';
import {
  IdempotencyKeyUsed,
  type IdempotentRequest,
  idempotencyKeyInProgress,
  idempotencyKeyReused,
  idempotentRequest,
  type StoredAnswer,
} from '../domain/idempotency.ts';
import { logger } from '../observability/logger.ts';
import type { CompiledOperation } from '../operations/runtime.ts';
import { parseJsonBody, queryOf, requestIdOf, tenantOf } from './request.ts';
import {
  errorResponse,
  type HttpResult,
  internalError,
  publicOrigin,
  serviceUnavailable,
  toResponse,
} from './responses.ts';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;

export interface HttpRequest<Body, Query, Path> {
  event: Event;
  requestId: string;
  /** The caller's tenant; empty string on public routes. */
  tenant: string;
  body: Body;
  query: Query;
  path: Path;
  /** A POST's `Idempotency-Key`, when it carries one: writes store their answer with it. */
  idempotency?: IdempotentRequest;
}

/**
 * How long a request may wait on its dependencies, all calls together: far below the function's
 * 10 s timeout (and API Gateway's 30 s), so a dependency that does not answer gives a 503 in about
 * this long, never a timeout of the function.
 */
export const REQUEST_BUDGET_MS = 5_000;
/** What the answer itself needs after the last dependency call, from the function's deadline. */
const ANSWER_MARGIN_MS = 1_000;

/**
 * A route's operation (`lib/operations/compiled.ts`, generated from its definition: validators and
 * request rules) and what only the function can supply.
 */
export type HandlerSpec<Body, Query, Path> = CompiledOperation<Body, Query, Path> & {
  /**
   * Where this route's answers to `Idempotency-Key`s are read back (`storedAnswer` of
   * `lib/db/idempotency.ts`). Every POST route gives it; a route without it ignores the header.
   * Passed in rather than imported, so routes without storage (the fallback, the document) bundle
   * no database client.
   */
  storedAnswers?: (request: IdempotentRequest) => Promise<StoredAnswer | undefined>;
  /**
   * `metricsMiddleware()` of `lib/observability/metrics.ts`, on the functions that count business
   * events: it publishes what they counted. Passed in, so that the metrics writer is bundled only
   * where something is counted.
   */
  metrics?: MiddlewareObj<Event, Result, Error, Context>;
  /**
   * `'errors'`: the `request` line only for an error answer. For the public redirect, whose every
   * answer has an access log line with the same status and latency, and whose volume makes a
   * second line per visit a real share of its cost.
   */
  requestLog?: 'errors';
};

/**
 * The one place that turns an API Gateway event into a typed request, enforcing the route's
 * operation, and any thrown error into the contract's error body. Handlers stay thin and never
 * catch.
 */
export function httpHandler<Body = undefined, Query = Record<string, string>, Path = Record<string, string>>(
  spec: HandlerSpec<Body, Query, Path>,
  fn: (req: HttpRequest<Body, Query, Path>) => Promise<HttpResult>,
) {
  const core = async (event: Event, context?: Context): Promise<Result> => {
    const functionLeft = context?.getRemainingTimeInMillis?.() ?? REQUEST_BUDGET_MS + ANSWER_MARGIN_MS;
    const deadline = Date.now() + Math.max(0, Math.min(REQUEST_BUDGET_MS, functionLeft - ANSWER_MARGIN_MS));
    return withDeadline(deadline, () => answer(event));
  };

  const answer = async (event: Event): Promise<Result> => {
    const requestId = requestIdOf(event);
    const tenant = spec.auth ? tenantOf(event) : '';
    if (tenant) logger.appendKeys({ tenant });
    const rawQuery = queryOf(event, spec.query?.required);
    let body: unknown;
    let parsed: Record<string, unknown> | undefined;
    if (spec.body) {
      parsed = parseJsonBody(event);
      if (parsed === undefined && !spec.body.optional) {
        throw new ApiError('invalid_json', 'A JSON object body is required.');
      }
      for (const [field, error] of Object.entries(spec.body.refused)) {
        if (parsed && Object.hasOwn(parsed, field)) throw new ApiError(error.code, error.message);
      }
      // Lone surrogates (`"\ud800"`, valid JSON but not Unicode text) are refused by the `Text`
      // schema of every stored string; metadata keeps them, as it is stored as JSON text.
      body = spec.body.validate(parsed ?? {});
    }
    const method = event.requestContext.http.method;
    const idempotency =
      method === 'POST' && tenant && spec.storedAnswers
        ? idempotentRequest({
            key: event.headers?.['idempotency-key'],
            tenant,
            method,
            path: event.rawPath,
            query: event.rawQueryString ?? '',
            body: parsed,
          })
        : undefined;
    const query = spec.query ? validQuery(spec.query, rawQuery) : (rawQuery as Query);
    const rawPath = (event.pathParameters ?? {}) as Record<string, string>;
    const path = spec.path ? spec.path.validate(rawPath) : (rawPath as Path);
    const exactlyOneOf = spec.body?.exactlyOne;
    const result = await answerOnce(idempotency, spec.storedAnswers, () => {
      // Checked where the handlers checked it before it was a rule of the operation (after the
      // Idempotency-Key, and answered from a stored answer when the key has one), so nothing moves.
      if (exactlyOneOf) exactlyOne(body as Record<string, unknown>, exactlyOneOf);
      return fn({ event, requestId, tenant, body: body as Body, query, path, idempotency });
    });
    return toResponse(result, requestId);
  };

  const handler = middy<Event, Result, Error, Context>(core);
  // Used first so that it runs last: the metrics are written after the error mapping and the log.
  if (spec.metrics) handler.use(spec.metrics);
  return handler.use(contractErrors({ successLine: spec.requestLog !== 'errors' }));
}

/**
 * The query as the operation takes it. With an "at least one of" rule an empty parameter counts as
 * absent (as for a required one, `?id=`) and is not validated.
 */
function validQuery<Query>(
  rules: NonNullable<CompiledOperation<unknown, Query>['query']>,
  query: Record<string, string>,
): Query {
  if (!rules.atLeastOne) return rules.validate(query);
  const present = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ''));
  if (!rules.atLeastOne.some((name) => present[name] !== undefined)) {
    const names = rules.atLeastOne.join(' or ');
    throw new ApiError('missing_parameter', `Give ${names}.`, [
      { field: rules.atLeastOne[0] as string, message: `${names} is required` },
    ]);
  }
  return rules.validate(present);
}

/** Exactly one of `fields` is present in a schema-valid body. */
function exactlyOne(body: Record<string, unknown>, fields: readonly string[]): void {
  if (fields.filter((field) => body[field] !== undefined).length === 1) return;
  const [first = '', ...rest] = fields;
  throw validationError([
    {
      field: first,
      message: `exactly one of ${[first, ...rest].join(', ').replace(/, ([^,]*)$/, ' and $1')} is required`,
    },
  ]);
}

/**
 * Run a request at most once per `Idempotency-Key`. The write stores its answer with the key
 * (`lib/db/idempotency.ts`); a retry's write finds the key and throws `IdempotencyKeyUsed`, and
 * the stored answer is replayed. A request that fails otherwise (say 404, because what the first
 * request found is gone since) is also answered from a stored answer when there is one, so a
 * retry gets the first answer again whatever happened in between.
 */
async function answerOnce(
  idempotency: IdempotentRequest | undefined,
  storedAnswers: HandlerSpec<unknown, unknown, unknown>['storedAnswers'],
  run: () => Promise<HttpResult>,
): Promise<HttpResult> {
  if (!idempotency || !storedAnswers) return run();
  try {
    return await run();
  } catch (err) {
    const used = err instanceof IdempotencyKeyUsed;
    if (!used && !(err instanceof ApiError && err.status < 500)) throw err;
    const stored = (used ? err.stored : undefined) ?? (await storedAnswers(idempotency));
    if (stored) return replay(stored, idempotency);
    // The key was seen with a write whose answer is not stored (yet): still being processed.
    if (used) throw idempotencyKeyInProgress();
    throw err;
  }
}

function replay(stored: StoredAnswer, idempotency: IdempotentRequest): HttpResult {
  if (stored.requestHash !== idempotency.requestHash) throw idempotencyKeyReused();
  return { status: stored.status, rawJson: stored.body, headers: { 'idempotent-replayed': 'true' } };
}

/**
 * Maps typed errors to their status and body, and a dependency that throttled, failed or timed
 * out to 503 `service_unavailable` with `Retry-After`; anything else becomes a generic 500,
 * logged here.
 */
export function contractErrors(
  options: { successLine: boolean } = { successLine: true },
): MiddlewareObj<Event, Result, Error, Context> {
  /** When each request's handling began, for the `duration_ms` of its `request` line. */
  const started = new WeakMap<Event, number>();
  const ms = (event: Event) =>
    Math.round((performance.now() - (started.get(event) ?? performance.now())) * 10) / 10;
  return {
    before: (request) => {
      started.set(request.event, performance.now());
      logger.resetKeys();
      logger.appendKeys({ request_id: requestIdOf(request.event), route: request.event.routeKey });
    },
    after: (request) => {
      if (options.successLine)
        logger.info('request', { status: request.response?.statusCode, duration_ms: ms(request.event) });
      withoutBodyForHead(request);
    },
    onError: (request) => {
      const requestId = requestIdOf(request.event);
      const options = { origin: publicOrigin(request.event) };
      const error = request.error;
      if (error instanceof ApiError) {
        request.response = errorResponse(error, requestId, options);
        logger.info('request', { status: error.status, code: error.code, duration_ms: ms(request.event) });
      } else if (isDependencyFailure(error)) {
        logger.warn('dependency unavailable', {
          error: (error as Error).name,
          message: (error as Error).message,
        });
        request.response = errorResponse(serviceUnavailable(), requestId, options);
      } else {
        logger.error('unhandled error', error as Error);
        request.response = errorResponse(internalError(), requestId, options);
      }
      withoutBodyForHead(request);
    },
  };
}

/**
 * `HEAD` gets the status and headers a GET would, `content-length` included, and no body
 * (contract, Conventions).
 */
function withoutBodyForHead(request: { event: Event; response: Result | null | undefined }): void {
  const response = request.response;
  if (request.event.requestContext?.http?.method !== 'HEAD' || !response) return;
  const body = response.body ?? '';
  const length = Buffer.byteLength(body, response.isBase64Encoded ? 'base64' : 'utf8');
  request.response = {
    ...response,
    headers: { ...response.headers, 'content-length': String(length) },
    body: '',
    isBase64Encoded: false,
  };
}
