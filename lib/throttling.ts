/**
 * Request-rate limits per route, shared by the CDK stack (the HTTP API stage's `RouteSettings`)
 * and the local gateway (a token bucket per route key), so that both throttle alike. Kept free
 * of CDK imports: the local stack loads it at run time.
 *
 * Every route key has its own bucket: a flood of one route (visits, random api keys on one
 * endpoint, 404s) spends that route's budget and no other's.
 */
import { DEFAULT_ROUTE_KEY, type RouteDefinition, routeKeysOf, type ThrottleClass } from './routes.ts';

/** API Gateway's token bucket: `rateLimit` requests per second refill up to `burstLimit` at once. */
export interface RouteThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export type RouteThrottles = Readonly<Record<ThrottleClass, RouteThrottle>>;

export const THROTTLE_CLASSES: readonly ThrottleClass[] = ['redirect', 'api', 'docs'];

/**
 * Per route key. Chosen so that their sum over every route key of the table stays below the
 * account's regional API Gateway quota (10,000/s, shared by every API of the account): even with
 * every route flooded at once, each keeps its own budget.
 * - `redirect` 2,000/s, burst 4,000: the product's hot path (a campaign mail or post sends its
 *   visitors within minutes); about 100 concurrent visits at ~50 ms each, well within Lambda's
 *   default 1,000 concurrent executions.
 * - `api` 100/s, burst 200 per endpoint (150/s until the conversion endpoints, 120/s until the
 *   rewards endpoints, each of which would have passed the quota): far above what one integration sends to one endpoint,
 *   and a flood of random keys on one endpoint costs at most that many authorizer calls a second.
 * - `docs` 20/s, burst 40: a static document and page that people and generators fetch now and
 *   then.
 */
export const DEFAULT_ROUTE_THROTTLES: RouteThrottles = {
  redirect: { rateLimit: 2000, burstLimit: 4000 },
  api: { rateLimit: 100, burstLimit: 200 },
  docs: { rateLimit: 20, burstLimit: 40 },
};

/**
 * `$default` answers 404/405 to whatever matched no row: mostly API clients with a wrong path or
 * method, so it gets the API's budget, one bucket of its own.
 */
export const DEFAULT_ROUTE_THROTTLE_CLASS: ThrottleClass = 'api';

/** Each route key of a table (HEAD twins and `$default` included) with its throttle class. */
export function throttleClassesByRouteKey(table: readonly RouteDefinition[]): Map<string, ThrottleClass> {
  const byKey = new Map<string, ThrottleClass>();
  for (const route of table) for (const key of routeKeysOf(route)) byKey.set(key, route.throttle);
  byKey.set(DEFAULT_ROUTE_KEY, DEFAULT_ROUTE_THROTTLE_CLASS);
  return byKey;
}

/** Each route key of a table with its limits. */
export function routeThrottles(
  table: readonly RouteDefinition[],
  figures: RouteThrottles = DEFAULT_ROUTE_THROTTLES,
): Map<string, RouteThrottle> {
  return new Map(
    [...throttleClassesByRouteKey(table)].map(([key, throttleClass]) => [key, figures[throttleClass]]),
  );
}
