/**
 * The HTTP API's access log line (`infra/http-api.ts`): one JSON object per request. The default
 * format is Apache CLF with the client IP; this one leaves the IP out (the service records visits
 * without one, and logs should not undo that) and adds what explains a failure: the route, the
 * authorizer's and the integration's errors, the latencies. Here rather than in `infra/` so the
 * bench's cost model sizes the same line.
 *
 * The keys are short because the line is written for every request, the redirect's included:
 * CloudWatch Logs bills its bytes, and the keys were 227 of a visit's 483 (about $0.04 per million
 * visits for the 94 bytes saved). Each key is named after its `$context` variable (`fn` is the
 * integration, always a Lambda function here; `gw` the gateway; `auth` the authorizer), and
 * docs/deploying.md lists them.
 */
export const ACCESS_LOG_FIELDS = {
  reqId: '$context.requestId',
  // The dimension of the authorizer-failure metric counted from these lines (`infra/alarms.ts`).
  api: '$context.apiId',
  time: '$context.requestTime',
  method: '$context.httpMethod',
  path: '$context.path',
  route: '$context.routeKey',
  status: '$context.status',
  bytes: '$context.responseLength',
  // Milliseconds: the whole request at the gateway, and the integration's part of it.
  ms: '$context.responseLatency',
  fnMs: '$context.integrationLatency',
  fnStatus: '$context.integrationStatus',
  fnError: '$context.integrationErrorMessage',
  // The gateway's own refusals (throttling, a missing api-key header) say why here.
  gwError: '$context.error.message',
  authError: '$context.authorizer.error',
  // "true" when the authorizer could not read the key in time (the route then answers 503).
  authDown: '$context.authorizer.unavailable',
  ua: '$context.identity.userAgent',
} as const;
