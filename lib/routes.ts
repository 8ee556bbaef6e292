/**
 * The route table: the single source of truth for the HTTP surface.
 *
 * The CDK stack makes one Lambda function and one HTTP API route per row, the local gateway
 * dispatches by the same rows, and later the OpenAPI document is built from them. Adding an
 * endpoint is one row here plus one handler file under `functions/`.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * What a function may do to the table: the CDK stack turns this into least-privilege grants.
 * `none`: the function never touches the table (the OpenAPI document and the reference page).
 */
export type TableAccess = 'none' | 'read' | 'write' | 'read-write';

/**
 * Which request-rate budget a route draws on (figures in `lib/throttling.ts`): `redirect` for the
 * public hot path visitors follow, `api` for the key-protected endpoints, `docs` for the public
 * document and its reference page. Named on each row, not guessed from its path, so a new row
 * decides its budget the moment it is written.
 */
export type ThrottleClass = 'redirect' | 'api' | 'docs';

export interface RouteDefinition {
  /** Stable identifier, used for the function's construct id and logical name. */
  readonly name: string;
  readonly method: HttpMethod;
  /** Path in API Gateway syntax, e.g. `/r/{referral_code}`. */
  readonly path: string;
  /** Handler module under `functions/`, without extension; it must export `handler`. */
  readonly handler: string;
  /** Whether the route sits behind the api-key authorizer. */
  readonly auth: boolean;
  readonly table: TableAccess;
  /** Memory in MB; small JSON handlers are I/O bound, so 256 MB buys enough CPU for cold starts. */
  readonly memoryMb?: number;
  /**
   * The function's timeout in seconds, when not the HTTP functions' 10 s: a route that waits on
   * something slower than the table (the webhook test's POST, up to 15 s plus 3 s of DNS).
   * API Gateway's integration timeout (30 s) bounds it.
   */
  readonly timeoutSeconds?: number;
  /**
   * DynamoDB calls one request may make once warm, id-block reservations and the authorizer's key
   * lookup excepted: 1 for the campaign endpoints, at most 2 for the others,
   * 0 for routes that never touch the table. Reads and transactions count alike.
   * test/integration/round-trips.test.ts enforces it per route and `npm run bench` reports
   * against it.
   */
  readonly dynamoCalls: number;
  /** Its request-rate budget; each of its route keys (a GET and its HEAD twin) gets its own bucket. */
  readonly throttle: ThrottleClass;
  readonly summary: string;
}

export const routes: readonly RouteDefinition[] = [
  {
    name: 'CreateReferralLink',
    method: 'POST',
    path: '/api/v1/referral_link',
    handler: 'http/post-referral-link',
    auth: true,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Create a referral link',
  },
  {
    name: 'GetReferralLink',
    method: 'GET',
    path: '/api/v1/referral_link',
    handler: 'http/get-referral-link',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Fetch one referral link by id or code',
  },
  {
    name: 'ListCampaignLinks',
    method: 'GET',
    path: '/api/v1/campaign_referral_links/{campaign_id}',
    handler: 'http/list-campaign-links',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List a campaign's referral links, oldest first",
  },
  {
    name: 'ListReferrerLinks',
    method: 'GET',
    path: '/api/v1/referral_link/{campaign_id}/{referrer_id}',
    handler: 'http/list-referrer-links',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List one referrer's links in a campaign, oldest first",
  },
  {
    name: 'CreateReferredUserAction',
    method: 'POST',
    path: '/api/v1/action/referred_user',
    handler: 'http/post-referred-user-action',
    auth: true,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Record an action of a referred user',
  },
  {
    name: 'CreateCampaign',
    method: 'POST',
    path: '/api/v1/campaign',
    handler: 'http/post-campaign',
    auth: true,
    table: 'write',
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Create a campaign',
  },
  {
    name: 'GetCampaign',
    method: 'GET',
    path: '/api/v1/campaign',
    handler: 'http/get-campaign',
    auth: true,
    table: 'read',
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Fetch a campaign',
  },
  {
    name: 'UpdateCampaign',
    method: 'PATCH',
    path: '/api/v1/campaign',
    handler: 'http/patch-campaign',
    auth: true,
    table: 'read-write',
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Update a campaign',
  },
  {
    name: 'DeleteCampaign',
    method: 'DELETE',
    path: '/api/v1/campaign',
    handler: 'http/delete-campaign',
    auth: true,
    table: 'write',
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Delete a campaign',
  },
  {
    name: 'CreateReferredUser',
    method: 'POST',
    path: '/api/v1/referred_user',
    handler: 'http/post-referred-user',
    auth: true,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Create a referred user (a signup through a link)',
  },
  {
    name: 'GetReferredUser',
    method: 'GET',
    path: '/api/v1/referred_user',
    handler: 'http/get-referred-user',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Fetch a referred user of a campaign',
  },
  {
    name: 'CreateLinkAction',
    method: 'POST',
    path: '/api/v1/action/referral_link',
    handler: 'http/post-link-action',
    auth: true,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Record an action on a referral link',
  },
  {
    name: 'Visit',
    method: 'GET',
    path: '/r/{referral_code}',
    handler: 'http/visit',
    auth: false,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'redirect',
    summary: 'Redirect a visitor to the link and record a visit',
  },
  {
    name: 'ListWebhookDeliveries',
    method: 'GET',
    path: '/api/v1/webhook_deliveries/{campaign_id}',
    handler: 'http/list-webhook-deliveries',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List a campaign's webhook delivery attempts, newest first",
  },
  {
    name: 'ListEvents',
    method: 'GET',
    path: '/api/v1/events/{campaign_id}',
    handler: 'http/list-events',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List a campaign's events (the webhook bodies), oldest first",
  },
  {
    name: 'RedeliverEvent',
    method: 'POST',
    path: '/api/v1/events/{event_id}/redeliver',
    handler: 'http/post-event-redelivery',
    auth: true,
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Deliver an event again',
  },
  {
    name: 'TestWebhook',
    method: 'POST',
    path: '/api/v1/campaign/webhook_test',
    handler: 'http/post-webhook-test',
    auth: true,
    // The campaign read, and the attempt's line in the delivery log.
    table: 'read-write',
    dynamoCalls: 2,
    throttle: 'api',
    timeoutSeconds: 25,
    summary: "Send a webhook.test event to the campaign's webhook URL now",
  },
  {
    name: 'RotateWebhookSecret',
    method: 'POST',
    path: '/api/v1/campaign/rotate_webhook_secret',
    handler: 'http/post-webhook-secret-rotation',
    auth: true,
    table: 'read-write',
    // One UpdateItem; with an Idempotency-Key a read and a transaction (the stored answer is the campaign).
    dynamoCalls: 2,
    throttle: 'api',
    summary: "Replace the campaign's webhook signing secret",
  },
  {
    name: 'GetOpenApiDocument',
    method: 'GET',
    path: '/api/v1/openapi.json',
    handler: 'http/get-openapi',
    auth: false,
    table: 'none',
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'The OpenAPI 3.1 document of this API',
  },
  {
    name: 'GetApiReference',
    method: 'GET',
    path: '/docs',
    handler: 'http/get-docs',
    auth: false,
    table: 'none',
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'The API reference page',
  },
];

/** The row of a route, by name: for handlers that build URLs of their own route. */
export function routeNamed(name: string): RouteDefinition {
  const route = routes.find((r) => r.name === name);
  if (!route) throw new Error(`no route named ${name}`);
  return route;
}

/**
 * Every GET route also answers `HEAD` (contract, Conventions): the same function, status and
 * headers, no body. API Gateway routes are per method, so the stack adds a HEAD twin of each.
 */
export function answersHead(route: RouteDefinition): boolean {
  return route.method === 'GET';
}

/** The catch-all route key: API Gateway's name for "no row matched". */
export const DEFAULT_ROUTE_KEY = '$default';

/** The API Gateway route keys of a row: `METHOD /path`, and `HEAD /path` beside a GET. */
export function routeKeysOf(route: RouteDefinition): string[] {
  const key = `${route.method} ${route.path}`;
  return answersHead(route) ? [key, `HEAD ${route.path}`] : [key];
}

/** The route key API Gateway gives a request that matched `route` with `method`. */
export function routeKeyFor(route: RouteDefinition, method: string): string {
  return `${method === 'HEAD' && answersHead(route) ? 'HEAD' : route.method} ${route.path}`;
}

export interface RouteMatch {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

interface CompiledPath {
  regex: RegExp;
  names: string[];
}

const compiled = new Map<string, CompiledPath>();

function compile(path: string): CompiledPath {
  let entry = compiled.get(path);
  if (!entry) {
    const names: string[] = [];
    const pattern = path
      .split('/')
      .map((segment) => {
        const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
        if (param?.[1]) {
          names.push(param[1]);
          return '([^/]+)';
        }
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    entry = { regex: new RegExp(`^${pattern}$`), names };
    compiled.set(path, entry);
  }
  return entry;
}

function matchPath(route: RouteDefinition, rawPath: string): Record<string, string> | undefined {
  const { regex, names } = compile(route.path);
  const m = regex.exec(rawPath);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    const raw = m[i + 1] ?? '';
    params[name] = safeDecode(raw);
  });
  return params;
}

/** Percent-decoding that never throws: malformed escapes are kept as written. */
export function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Resolve a request to a route the way API Gateway does: an exact method and path match wins;
 * a path that exists under another method is a 405; anything else is a 404.
 */
export function resolveRoute(
  method: string,
  rawPath: string,
  table: readonly RouteDefinition[] = routes,
):
  | { kind: 'match'; match: RouteMatch }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' } {
  const allowed: string[] = [];
  for (const route of table) {
    const pathParameters = matchPath(route, rawPath);
    if (!pathParameters) continue;
    if (route.method === method || (method === 'HEAD' && answersHead(route))) {
      return { kind: 'match', match: { route, pathParameters } };
    }
    allowed.push(route.method);
  }
  return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' };
}
