import middy, { type MiddlewareObj } from '@middy/core';
import type { TSchema } from '@sinclair/typebox';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { isDependencyFailure, withDeadline } from '../db/deadline.ts';
import { ApiError } from '../domain/errors.ts';
import {
  IdempotencyKeyUsed,
  type IdempotentRequest,
  idempotencyKeyInProgress,
  idempotencyKeyReused,
  idempotentRequest,
  type StoredAnswer,
} from '../domain/idempotency.ts';
import { logger } from './logger.ts';
import { metricsMiddleware } from './metrics.ts';
import { parseJsonBody, queryOf, requestIdOf, tenantOf } from './request.ts';
import {
  errorResponse,
  type HttpResult,
  internalError,
  serviceUnavailable,
  toResponse,
} from './responses.ts';
import { compileValidator } from './validate.ts';

export type Event = APIGatewayProxyEventV2;
export type Result = APIGatewayProxyStructuredResultV2;

export interface HttpRequest<Body, Query> {
  event: Event;
  requestId: string;
  /** The caller's tenant; empty string on public routes. */
  tenant: string;
  body: Body;
  query: Query;
  path: Record<string, string>;
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

interface HandlerSpec<BodySchema extends TSchema | undefined, QuerySchema extends TSchema | undefined> {
  /** Public routes (no api-key) set this to false. */
  auth?: boolean;
  /** JSON body schema. With `bodyOptional`, an absent body validates as `{}`. */
  body?: BodySchema;
  bodyOptional?: boolean;
  /**
   * Body fields refused with their own error before any other check (e.g. `url` on PATCH
   * /campaign is `url_immutable` whatever else is wrong with the body).
   */
  refusedFields?: Record<string, () => ApiError>;
  /** Query parameters that must be present (400 `missing_parameter`), then validated by `query`. */
  requiredQuery?: readonly string[];
  query?: QuerySchema;
  /**
   * Where this route's answers to `Idempotency-Key`s are read back (`storedAnswer` of
   * `lib/db/idempotency.ts`). Every POST route gives it; a route without it ignores the header.
   * Passed in rather than imported, so routes without storage (the fallback, the document) bundle
   * no database client.
   */
  storedAnswers?: (request: IdempotentRequest) => Promise<StoredAnswer | undefined>;
}

type Infer<S> = S extends TSchema ? import('@sinclair/typebox').Static<S> : undefined;

/**
 * The one place that turns an API Gateway event into a typed request and any thrown error into
 * the contract's error body. Handlers stay thin and never catch.
 */
export function httpHandler<
  BodySchema extends TSchema | undefined = undefined,
  QuerySchema extends TSchema | undefined = undefined,
>(
  spec: HandlerSpec<BodySchema, QuerySchema>,
  fn: (req: HttpRequest<Infer<BodySchema>, Infer<QuerySchema>>) => Promise<HttpResult>,
) {
  // Compiled once per cold start, not per request.
  const validateBody = spec.body ? compileValidator(spec.body) : undefined;
  const validateQuery = spec.query ? compileValidator(spec.query) : undefined;

  const core = async (event: Event, context?: Context): Promise<Result> => {
    const functionLeft = context?.getRemainingTimeInMillis?.() ?? REQUEST_BUDGET_MS + ANSWER_MARGIN_MS;
    const deadline = Date.now() + Math.max(0, Math.min(REQUEST_BUDGET_MS, functionLeft - ANSWER_MARGIN_MS));
    return withDeadline(deadline, () => answer(event));
  };

  const answer = async (event: Event): Promise<Result> => {
    const requestId = requestIdOf(event);
    const tenant = spec.auth === false ? '' : tenantOf(event);
    if (tenant) logger.appendKeys({ tenant });
    const query = queryOf(event, spec.requiredQuery);
    let body: unknown;
    let parsed: Record<string, unknown> | undefined;
    if (validateBody) {
      parsed = parseJsonBody(event);
      if (parsed === undefined && !spec.bodyOptional) {
        throw new ApiError('invalid_json', 'A JSON object body is required.');
      }
      for (const [field, error] of Object.entries(spec.refusedFields ?? {})) {
        if (parsed && Object.hasOwn(parsed, field)) throw error();
      }
      // Lone surrogates (`"\ud800"`, valid JSON but not Unicode text) are refused by the `Text`
      // schema of every stored string; metadata keeps them, as it is stored as JSON text.
      body = validateBody(parsed ?? {});
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
    const validQuery = (validateQuery ? validateQuery(query) : query) as Infer<QuerySchema>;
    const result = await answerOnce(idempotency, spec.storedAnswers, () =>
      fn({
        event,
        requestId,
        tenant,
        body: body as Infer<BodySchema>,
        query: validQuery,
        path: (event.pathParameters ?? {}) as Record<string, string>,
        idempotency,
      }),
    );
    return toResponse(result, requestId);
  };

  // Used first so that it runs last: the metrics are written after the error mapping and the log.
  return middy<Event, Result, Error, Context>(core)
    .use(metricsMiddleware<Event, Result, Error, Context>())
    .use(contractErrors());
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
  storedAnswers: HandlerSpec<undefined, undefined>['storedAnswers'],
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
export function contractErrors(): MiddlewareObj<Event, Result, Error, Context> {
  return {
    before: (request) => {
      logger.resetKeys();
      logger.appendKeys({ request_id: requestIdOf(request.event), route: request.event.routeKey });
    },
    after: (request) => {
      logger.info('request', { status: request.response?.statusCode });
      withoutBodyForHead(request);
    },
    onError: (request) => {
      const requestId = requestIdOf(request.event);
      const error = request.error;
      if (error instanceof ApiError) {
        request.response = errorResponse(error, requestId);
        logger.info('request', { status: error.status, code: error.code });
      } else if (isDependencyFailure(error)) {
        logger.warn('dependency unavailable', {
          error: (error as Error).name,
          message: (error as Error).message,
        });
        request.response = errorResponse(serviceUnavailable(), requestId);
      } else {
        logger.error('unhandled error', error as Error);
        request.response = errorResponse(internalError(), requestId);
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
