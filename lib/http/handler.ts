import middy, { type MiddlewareObj } from '@middy/core';
import type { TSchema } from '@sinclair/typebox';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
import { logger } from './logger.ts';
import { metricsMiddleware } from './metrics.ts';
import { parseJsonBody, queryOf, requestIdOf, tenantOf } from './request.ts';
import { errorResponse, type HttpResult, internalError, toResponse } from './responses.ts';
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
}

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

  const core = async (event: Event): Promise<Result> => {
    const requestId = requestIdOf(event);
    const tenant = spec.auth === false ? '' : tenantOf(event);
    if (tenant) logger.appendKeys({ tenant });
    const query = queryOf(event, spec.requiredQuery);
    let body: unknown;
    if (validateBody) {
      const parsed = parseJsonBody(event);
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
    const result = await fn({
      event,
      requestId,
      tenant,
      body: body as Infer<BodySchema>,
      query: (validateQuery ? validateQuery(query) : query) as Infer<QuerySchema>,
      path: (event.pathParameters ?? {}) as Record<string, string>,
    });
    return toResponse(result, requestId);
  };

  // Used first so that it runs last: the metrics are written after the error mapping and the log.
  return middy<Event, Result, Error, Context>(core)
    .use(metricsMiddleware<Event, Result, Error, Context>())
    .use(contractErrors());
}

/** Maps typed errors to their status and body; anything else becomes a generic 500, logged here. */
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
