import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  APIGatewayRequestAuthorizerEventV2,
  Context,
} from 'aws-lambda';
import { ApiError } from '../domain/errors.ts';
import { urlSafeRequestId } from '../http/request.ts';
import { errorResponse, JSON_CONTENT_TYPE, originOf, RETRY_AFTER_SECONDS } from '../http/responses.ts';
import {
  DEFAULT_ROUTE_KEY,
  type RouteDefinition,
  resolveRoute,
  routeKeyFor,
  routes,
  safeDecode,
} from '../routes.ts';
import { DEFAULT_ROUTE_THROTTLES, type RouteThrottles, routeThrottles } from '../throttling.ts';
import { TokenBucket } from './token-bucket.ts';

export type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown>;
export type AuthorizerHandler = (event: APIGatewayRequestAuthorizerEventV2) => Promise<{
  isAuthorized: boolean;
  context?: Record<string, unknown>;
}>;

export interface GatewayOptions {
  loadHandler: (route: RouteDefinition) => Promise<LambdaHandler>;
  fallback: LambdaHandler;
  authorizer: AuthorizerHandler;
  routeTable?: readonly RouteDefinition[];
  /**
   * Limits per throttle class, one bucket per route key as in the deployed stage; the deployed
   * defaults when omitted, none at all with `false`.
   */
  throttles?: RouteThrottles | false;
}

/** API Gateway's own payload limit; the handlers enforce the contract's 32 KiB themselves. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

/**
 * API Gateway style request id (base64 of random bytes, `+`, `/` and `=` included), as the event's
 * `requestContext.requestId` and the `apigw-requestid` header carry it; the handlers and this
 * gateway echo it URL-safe in `x-request-id` (`urlSafeRequestId`).
 */
const newRequestId = () => randomBytes(10).toString('base64').replace(/=+$/, '=');

/**
 * A small `node:http` server that does what API Gateway (HTTP API, payload 2.0) does for us in
 * AWS: builds the event, runs the authorizer on protected routes, invokes the route's handler and
 * writes its result back. Routes come from the same table the CDK stack reads.
 */
export function createGateway(options: GatewayOptions): Server {
  const table = options.routeTable ?? routes;
  const cache = new Map<string, Promise<LambdaHandler>>();
  const handlerFor = (route: RouteDefinition) => {
    let h = cache.get(route.handler);
    if (!h) {
      h = options.loadHandler(route);
      cache.set(route.handler, h);
    }
    return h;
  };
  // One bucket per route key of the table: a bounded set, whatever the requests.
  const figures = options.throttles ?? DEFAULT_ROUTE_THROTTLES;
  const buckets = new Map<string, TokenBucket>();
  if (figures !== false) {
    for (const [key, limit] of routeThrottles(table, figures)) buckets.set(key, new TokenBucket(limit));
  }

  return createServer((req, res) => {
    const requestId = newRequestId();
    handle(req, requestId)
      .then((result) => writeResult(res, result, requestId))
      .catch(() => {
        // The handlers map their own errors; this is the gateway's last resort, like API Gateway's 500.
        writeResult(
          res,
          errorResponse(
            new ApiError('internal_error', 'An unexpected error occurred.'),
            urlSafeRequestId(requestId),
            { origin: originOf('http', req.headers.host) },
          ),
          requestId,
        );
      });
  });

  async function handle(req: IncomingMessage, requestId: string): Promise<APIGatewayProxyStructuredResultV2> {
    // What the gateway answers itself echoes the id and links the error's documentation as the
    // handlers do.
    const echoedId = urlSafeRequestId(requestId);
    const own = { origin: originOf('http', req.headers.host) };
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q === -1 ? url : url.slice(0, q);
    const rawQueryString = q === -1 ? '' : url.slice(q + 1);
    const method = (req.method ?? 'GET').toUpperCase();
    const resolved = resolveRoute(method, rawPath, table);
    const route = resolved.kind === 'match' ? resolved.match.route : undefined;
    const routeKey = route ? routeKeyFor(route, method) : DEFAULT_ROUTE_KEY;

    // As API Gateway does: before the body is read and before the authorizer runs, so a flood
    // costs neither. Unlike API Gateway's own 429, this one has the contract's body and Retry-After.
    const token = buckets.get(routeKey)?.take() ?? { ok: true };
    if (!token.ok) {
      const seconds = token.retryAfterSeconds;
      return errorResponse(
        new ApiError(
          'rate_limited',
          `Too many requests; retry after ${seconds} second${seconds === 1 ? '' : 's'}.`,
        ),
        echoedId,
        { ...own, headers: { 'retry-after': String(seconds) } },
      );
    }

    const body = await readBody(req);
    if (body === 'too_large') {
      return errorResponse(
        new ApiError('payload_too_large', 'The request body is too large.'),
        echoedId,
        own,
      );
    }
    const event = buildEvent({
      req,
      method,
      rawPath,
      rawQueryString,
      body,
      requestId,
      routeKey,
      pathParameters: resolved.kind === 'match' ? resolved.match.pathParameters : undefined,
    });
    const context = lambdaContext(requestId, route?.name ?? 'Fallback');
    if (!route) return normalize(await options.fallback(event, context));

    if (route.auth) {
      const key = event.headers['api-key'];
      // API Gateway answers a missing identity source itself; locally we answer the contract's 401.
      if (!key)
        return errorResponse(
          new ApiError('unauthorized', 'A valid api-key header is required.'),
          echoedId,
          own,
        );
      const auth = await options.authorizer(authorizerEvent(event, key));
      if (!auth.isAuthorized) return { statusCode: 403, headers: {}, body: '{"message":"Forbidden"}' };
      (event.requestContext as unknown as Record<string, unknown>).authorizer = {
        lambda: auth.context ?? {},
      };
    }
    const handler = await handlerFor(route);
    return normalize(await handler(event, context));
  }
}

/**
 * What the gateway answers before the stack is ready (`npm start` binds its port first, then
 * starts DynamoDB Local, which takes seconds): at once, from the route table alone, never waiting
 * for the stack. `GET /health` says it is starting; every other request gets the contract's 503
 * `service_unavailable`. Both carry `Retry-After`, so a client or a health check tries again.
 */
export function answerWhileStarting(req: IncomingMessage, res: ServerResponse): void {
  const requestId = newRequestId();
  const echoedId = urlSafeRequestId(requestId);
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const method = (req.method ?? 'GET').toUpperCase();
  const resolved = resolveRoute(method, q === -1 ? url : url.slice(0, q), routes);
  const health = resolved.kind === 'match' && resolved.match.route.name === 'Health';
  const retryAfter = String(RETRY_AFTER_SECONDS);
  const result: APIGatewayProxyStructuredResultV2 = health
    ? {
        statusCode: 503,
        headers: {
          'content-type': JSON_CONTENT_TYPE,
          'cache-control': 'no-store',
          'retry-after': retryAfter,
          'x-request-id': echoedId,
        },
        body: JSON.stringify({ status: 'starting' }),
      }
    : errorResponse(
        new ApiError(
          'service_unavailable',
          `The service is starting; retry in ${retryAfter} second${retryAfter === '1' ? '' : 's'}.`,
        ),
        echoedId,
        { origin: originOf('http', req.headers.host), headers: { 'cache-control': 'no-store' } },
      );
  // The request's body is not wanted: dropped, so the connection stays usable.
  req.resume();
  writeResult(res, result, requestId);
}

function readBody(req: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > GATEWAY_MAX_BODY) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const textTypes = /^(?:text\/|application\/(?:[\w.+-]+\+)?(?:json|xml|x-www-form-urlencoded|javascript))/i;

function buildEvent(input: {
  req: IncomingMessage;
  method: string;
  rawPath: string;
  rawQueryString: string;
  body: Buffer;
  requestId: string;
  routeKey: string;
  pathParameters: Record<string, string> | undefined;
}): APIGatewayProxyEventV2 {
  const { req } = input;
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (name === 'cookie')
      cookies.push(...(Array.isArray(value) ? value : [value]).flatMap((v) => v.split('; ')));
    else headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  // As API Gateway does (always `https` there): the scheme the client used, whatever it sent.
  headers['x-forwarded-proto'] = 'http';
  const now = new Date();
  const contentType = headers['content-type'] ?? '';
  const hasBody = input.body.length > 0;
  // Bytes that are not UTF-8 travel base64-encoded, as binary bodies do, so the handler sees
  // exactly what the client sent instead of U+FFFD replacements.
  const isText = !hasBody || (textTypes.test(contentType) && isUtf8(input.body));
  return {
    version: '2.0',
    routeKey: input.routeKey,
    rawPath: input.rawPath,
    rawQueryString: input.rawQueryString,
    ...(cookies.length ? { cookies } : {}),
    headers,
    ...(input.rawQueryString ? { queryStringParameters: parseQuery(input.rawQueryString) } : {}),
    ...(input.pathParameters ? { pathParameters: input.pathParameters } : {}),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'localhost',
      http: {
        method: input.method,
        path: input.rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: input.requestId,
      routeKey: input.routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    ...(hasBody
      ? {
          body: isText ? input.body.toString('utf8') : input.body.toString('base64'),
          isBase64Encoded: !isText,
        }
      : { isBase64Encoded: false }),
  } as APIGatewayProxyEventV2;
}

/** Query parameters the way payload 2.0 gives them: decoded, repeated names joined by commas. */
export function parseQuery(raw: string): Record<string, string> {
  // No prototype: names such as `constructor` or `__proto__` are ordinary parameters.
  const out: Record<string, string> = Object.create(null);
  for (const part of raw.split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    const name = safeDecode((eq === -1 ? part : part.slice(0, eq)).replace(/\+/g, ' '));
    const value = safeDecode((eq === -1 ? '' : part.slice(eq + 1)).replace(/\+/g, ' '));
    out[name] = Object.hasOwn(out, name) ? `${out[name]},${value}` : value;
  }
  return out;
}

function authorizerEvent(event: APIGatewayProxyEventV2, key: string): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:local:000000000000:local/$default/${event.routeKey.replace(' ', '')}`,
    identitySource: [key],
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    headers: event.headers as Record<string, string>,
    queryStringParameters: event.queryStringParameters as Record<string, string> | undefined,
    pathParameters: event.pathParameters as Record<string, string> | undefined,
    requestContext: event.requestContext,
  } as unknown as APIGatewayRequestAuthorizerEventV2;
}

/** A Lambda context as the runtime gives one, with the function's timeout as the deadline. */
export function lambdaContext(requestId: string, name: string, timeoutMs = 10_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** API Gateway accepts a structured result or any JSON value (which it wraps as a 200). */
function normalize(result: unknown): APIGatewayProxyStructuredResultV2 {
  if (result && typeof result === 'object' && 'statusCode' in result)
    return result as APIGatewayProxyStructuredResultV2;
  return {
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(result ?? null),
  };
}

function writeResult(
  res: ServerResponse,
  result: APIGatewayProxyStructuredResultV2,
  requestId: string,
): void {
  if (res.headersSent) return;
  const headers: Record<string, string | number | boolean | string[]> = { ...(result.headers ?? {}) };
  headers['x-request-id'] ??= urlSafeRequestId(requestId);
  // API Gateway's own header, with its id as it is.
  headers['apigw-requestid'] = requestId;
  const body = result.body
    ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8')
    : Buffer.alloc(0);
  // A HEAD answer names the length its GET would have; anything else is measured here.
  headers['content-length'] ??= body.length;
  if (result.cookies?.length) headers['set-cookie'] = result.cookies;
  res.writeHead(result.statusCode ?? 200, headers as Record<string, string>);
  res.end(body);
}
