/**
 * The HTTP API's access log line (`infra/http-api.ts`): one JSON object per request. The default
 * format is Apache CLF with the client IP; this one leaves the IP out (the service records visits
 * without one, and logs should not undo that) and adds what explains a failure: the route, the
 * authorizer's and the integration's errors, the latencies. Here rather than in `infra/` so the
 * bench's cost model sizes the same line.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  // The dimension of the authorizer-failure metric counted from these lines (`infra/alarms.ts`).
  apiId: '$context.apiId',
  time: '$context.requestTime',
  method: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  // The gateway's own refusals (throttling, a missing api-key header) say why here.
  gatewayError: '$context.error.message',
  authorizerError: '$context.authorizer.error',
  // "true" when the authorizer could not read the key in time (the route then answers 503).
  authorizerUnavailable: '$context.authorizer.unavailable',
  userAgent: '$context.identity.userAgent',
} as const;
