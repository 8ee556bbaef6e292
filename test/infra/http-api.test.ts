import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { addReferralApiStack } from '../../infra/stack.ts';
import { type RouteDefinition, type RouteRow, routes } from '../../lib/routes.ts';
import {
  type CfnResource,
  logicalIdOf,
  referencedId,
  referencedIds,
  resourcesOfType,
  type Synthesized,
  synth,
  synthProd,
  tempOutdir,
} from './synth.ts';

const OPENAPI_ROUTE_KEY = 'GET /api/v1/openapi.json';
const routeKey = (r: RouteDefinition) => `${r.method} ${r.path}`;

/** Route keys the API must have for a route table: one per row, a HEAD twin where asked. */
const expectedRouteKeys = (table: readonly RouteDefinition[]) => [
  ...table.flatMap((r) => (r.method === 'GET' ? [routeKey(r), `HEAD ${r.path}`] : [routeKey(r)])),
  '$default',
];

/**
 * Rows the real table does not (yet) have, so the public and HEAD paths of the wiring are tested
 * whatever `lib/routes.ts` holds. Handlers point at existing modules: only the wiring matters here.
 */
const syntheticRoutes: readonly RouteRow[] = [
  {
    name: 'PrivateThing',
    method: 'GET',
    path: '/api/v1/thing/{id}',
    handler: 'http/get-campaign',
    auth: true,
    table: 'read',
    dynamo: ['GetItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'private',
  },
  {
    name: 'OpenApiDocument',
    method: 'GET',
    path: '/api/v1/openapi.json',
    handler: 'http/fallback',
    auth: false,
    table: 'read',
    dynamo: ['GetItem'],
    dynamoCalls: 2,
    throttle: 'docs',
    summary: 'public document',
  },
  {
    name: 'PublicRedirect',
    method: 'GET',
    path: '/r/{code}',
    handler: 'http/fallback',
    auth: false,
    table: 'read',
    dynamo: ['GetItem'],
    dynamoCalls: 2,
    throttle: 'redirect',
    summary: 'public, with HEAD',
  },
];

let real: Synthesized;
let synthetic: Synthesized;

beforeAll(() => {
  real = synth({ stage: 'dev' });
  // Without cdk-nag: the synthetic public rows have no acknowledged reason (test/infra/nag.test.ts
  // checks that such a row fails the synth).
  synthetic = synth({ stage: 'dev', routes: syntheticRoutes, withoutNag: true });
});

function apiRoutes(s: Synthesized): Map<string, CfnResource> {
  const byKey = new Map<string, CfnResource>();
  for (const [, r] of resourcesOfType(s.json, 'AWS::ApiGatewayV2::Route')) {
    const key = r.Properties?.RouteKey as string;
    expect(byKey.has(key), `duplicate route ${key}`).toBe(false);
    byKey.set(key, r);
  }
  return byKey;
}

/** The function a route invokes: route -> integration -> IntegrationUri. */
function targetFunctionOf(s: Synthesized, route: CfnResource): string {
  const integrationIds = [...referencedIds(route.Properties?.Target)];
  expect(integrationIds).toHaveLength(1);
  const integration = s.json.Resources[integrationIds[0] as string];
  expect(integration?.Type).toBe('AWS::ApiGatewayV2::Integration');
  expect(integration?.Properties?.IntegrationType).toBe('AWS_PROXY');
  expect(integration?.Properties?.PayloadFormatVersion).toBe('2.0');
  const fnId = referencedId(integration?.Properties?.IntegrationUri);
  expect(fnId).toBeDefined();
  return fnId as string;
}

function authorizerId(s: Synthesized): string {
  const authorizers = resourcesOfType(s.json, 'AWS::ApiGatewayV2::Authorizer');
  expect(authorizers).toHaveLength(1);
  return authorizers[0]![0];
}

function checkWiring(s: Synthesized, table: readonly RouteDefinition[]) {
  const byKey = apiRoutes(s);
  expect([...byKey.keys()].sort()).toEqual(expectedRouteKeys(table).sort());
  const authId = authorizerId(s);

  for (const row of table) {
    const fnId = logicalIdOf(s.stack.functions.byRoute.get(row.name)!);
    const keys = row.method === 'GET' ? [routeKey(row), `HEAD ${row.path}`] : [routeKey(row)];
    for (const key of keys) {
      const route = byKey.get(key)!;
      expect(targetFunctionOf(s, route), key).toBe(fnId);
      if (row.auth) {
        expect(route.Properties?.AuthorizationType, key).toBe('CUSTOM');
        expect(referencedId(route.Properties?.AuthorizerId), key).toBe(authId);
      } else {
        expect(route.Properties?.AuthorizationType ?? 'NONE', key).toBe('NONE');
        expect(route.Properties?.AuthorizerId, key).toBeUndefined();
      }
    }
  }

  // The catch-all: no authorizer, straight to the fallback.
  const fallbackRoute = byKey.get('$default')!;
  expect(fallbackRoute.Properties?.AuthorizationType ?? 'NONE').toBe('NONE');
  expect(fallbackRoute.Properties?.AuthorizerId).toBeUndefined();
  expect(targetFunctionOf(s, fallbackRoute)).toBe(logicalIdOf(s.stack.functions.fallback));
}

describe('route table (the contract of who needs a key)', () => {
  it('puts every /api/v1 route except the OpenAPI document behind the api key, and nothing else', () => {
    for (const r of routes) {
      const needsKey = r.path.startsWith('/api/v1/') && routeKey(r) !== OPENAPI_ROUTE_KEY;
      expect(r.auth, routeKey(r)).toBe(needsKey);
    }
  });
});

describe('HTTP API', () => {
  it('is one HTTP API with an auto-deployed $default stage', () => {
    real.template.resourcePropertiesCountIs('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' }, 1);
    real.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { Name: 'referral-api-dev' });
    real.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
    real.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
    });
  });

  it('has exactly one route per row of lib/routes.ts (plus HEAD twins) and $default, each to its function', () => {
    checkWiring(real, routes);
  });

  it('wires public rows without an authorizer and HEAD twins to the GET function', () => {
    checkWiring(synthetic, syntheticRoutes);
    const byKey = apiRoutes(synthetic);
    expect(byKey.get(OPENAPI_ROUTE_KEY)?.Properties?.AuthorizationType).toBe('NONE');
    const get = byKey.get('GET /r/{code}')!;
    const head = byKey.get('HEAD /r/{code}')!;
    expect(head.Properties?.Target).toEqual(get.Properties?.Target);
  });

  it('authorizes with the api-key header, simple responses, payload 2.0 and a cache of at most 60 s', () => {
    const authorizer = real.json.Resources[authorizerId(real)]!.Properties ?? {};
    expect(authorizer.AuthorizerType).toBe('REQUEST');
    expect(authorizer.IdentitySource).toEqual(['$request.header.api-key']);
    expect(authorizer.EnableSimpleResponses).toBe(true);
    expect(authorizer.AuthorizerPayloadFormatVersion).toBe('2.0');
    // A revoked key must stop working within 60 s: the cache may not outlive that.
    expect(authorizer.AuthorizerResultTtlInSeconds).toBe(60);
    expect([...referencedIds(authorizer.AuthorizerUri)]).toEqual([
      logicalIdOf(real.stack.functions.authorizer),
    ]);
  });

  it('lets API Gateway invoke the authorizer and every route function', () => {
    const permitted = new Set(
      resourcesOfType(real.json, 'AWS::Lambda::Permission')
        .filter(([, p]) => p.Properties?.Principal === 'apigateway.amazonaws.com')
        .map(([, p]) => referencedId(p.Properties?.FunctionName)),
    );
    for (const fn of real.stack.functions.all)
      expect(permitted.has(logicalIdOf(fn)), fn.node.path).toBe(true);
  });

  it('writes JSON access logs without client IPs to a log group with retention', () => {
    const stage = resourcesOfType(real.json, 'AWS::ApiGatewayV2::Stage')[0]![1];
    const settings = stage.Properties?.AccessLogSettings;
    const format = JSON.parse(settings.Format as string) as Record<string, string>;
    expect(format.reqId).toBe('$context.requestId');
    expect(format.status).toBe('$context.status');
    // Why the gateway itself refused a request (throttled, no api-key header).
    expect(format.gwError).toBe('$context.error.message');
    expect(Object.values(format)).not.toContain('$context.identity.sourceIp');
    const group = real.json.Resources[referencedId(settings.DestinationArn)!];
    expect(group?.Type).toBe('AWS::Logs::LogGroup');
    expect(group?.Properties?.RetentionInDays).toBe(30);
  });
});

describe('HTTP API throttling and CORS (stack properties from context)', () => {
  const stageOf = (s: Synthesized) =>
    resourcesOfType(s.json, 'AWS::ApiGatewayV2::Stage')[0]![1].Properties ?? {};
  const apiOf = (s: Synthesized) => resourcesOfType(s.json, 'AWS::ApiGatewayV2::Api')[0]![1].Properties ?? {};

  it('throttles the default stage at 1,000 requests/s with a burst of 2,000 by default, in every stage', () => {
    for (const s of [real, synthProd()]) {
      expect(stageOf(s).DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: 1000,
        ThrottlingBurstLimit: 2000,
      });
    }
  });

  it('takes other limits from -c throttleRateLimit= and -c throttleBurstLimit=', () => {
    const s = synth({ stage: 'dev', context: { throttleRateLimit: '50', throttleBurstLimit: '100' } });
    expect(stageOf(s).DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 });
  });

  it('refuses a limit that is not a positive number instead of deploying without one', () => {
    for (const context of [
      { throttleRateLimit: 'lots' },
      { throttleBurstLimit: '-1' },
      { throttleBurstLimit: '1.5' },
    ]) {
      const app = new App({ outdir: tempOutdir(), context: { ...context, 'aws:cdk:bundling-stacks': [] } });
      expect(() => addReferralApiStack(app), JSON.stringify(context)).toThrow(/throttle/);
    }
  });

  const REDIRECT = { ThrottlingRateLimit: 2000, ThrottlingBurstLimit: 4000 };
  const API = { ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 };
  const DOCS = { ThrottlingRateLimit: 20, ThrottlingBurstLimit: 40 };

  it('gives every route key its own limits by its row’s class: redirect high, api per route, docs low', () => {
    const expected = {
      'GET /r/{referral_code}': REDIRECT,
      'HEAD /r/{referral_code}': REDIRECT,
      'POST /api/v1/referral_link': API,
      'GET /api/v1/referral_link': API,
      'HEAD /api/v1/referral_link': API,
      'GET /api/v1/campaign_referral_links/{campaign_id}': API,
      'HEAD /api/v1/campaign_referral_links/{campaign_id}': API,
      'GET /api/v1/referral_link/{campaign_id}/{referrer_id}': API,
      'HEAD /api/v1/referral_link/{campaign_id}/{referrer_id}': API,
      'POST /api/v1/action/referred_user': API,
      'POST /api/v1/campaign': API,
      'GET /api/v1/campaign': API,
      'HEAD /api/v1/campaign': API,
      'PATCH /api/v1/campaign': API,
      'DELETE /api/v1/campaign': API,
      'GET /api/v1/campaigns': API,
      'HEAD /api/v1/campaigns': API,
      'POST /api/v1/referred_user': API,
      'GET /api/v1/referred_user': API,
      'HEAD /api/v1/referred_user': API,
      'GET /api/v1/referred_users/{campaign_id}': API,
      'HEAD /api/v1/referred_users/{campaign_id}': API,
      'POST /api/v1/action/referral_link': API,
      'GET /api/v1/analytics/{campaign_id}': API,
      'HEAD /api/v1/analytics/{campaign_id}': API,
      'GET /api/v1/analytics/{campaign_id}/top': API,
      'HEAD /api/v1/analytics/{campaign_id}/top': API,
      'GET /api/v1/webhook_deliveries/{campaign_id}': API,
      'HEAD /api/v1/webhook_deliveries/{campaign_id}': API,
      'GET /api/v1/events/{campaign_id}': API,
      'HEAD /api/v1/events/{campaign_id}': API,
      'POST /api/v1/events/{event_id}/redeliver': API,
      'POST /api/v1/campaign/webhook_test': API,
      'POST /api/v1/campaign/rotate_webhook_secret': API,
      'POST /api/v1/conversion': API,
      'POST /api/v1/conversion/{id}/refund': API,
      'GET /api/v1/conversion': API,
      'HEAD /api/v1/conversion': API,
      'GET /api/v1/conversions/{campaign_id}': API,
      'HEAD /api/v1/conversions/{campaign_id}': API,
      'GET /api/v1/rewards/{campaign_id}': API,
      'HEAD /api/v1/rewards/{campaign_id}': API,
      'POST /api/v1/reward/{id}/approve': API,
      'POST /api/v1/reward/{id}/void': API,
      'GET /api/v1/balance/{campaign_id}/{recipient_id}': API,
      'HEAD /api/v1/balance/{campaign_id}/{recipient_id}': API,
      'POST /api/v1/payout': API,
      'GET /api/v1/payouts/{campaign_id}': API,
      'HEAD /api/v1/payouts/{campaign_id}': API,
      'GET /api/v1/health/ready': API,
      'HEAD /api/v1/health/ready': API,
      'GET /health': DOCS,
      'HEAD /health': DOCS,
      'GET /api/v1/openapi.json': DOCS,
      'HEAD /api/v1/openapi.json': DOCS,
      'GET /docs': DOCS,
      'HEAD /docs': DOCS,
      'GET /dashboard': DOCS,
      'HEAD /dashboard': DOCS,
      $default: API,
    };
    for (const s of [real, synthProd()]) {
      s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { RouteSettings: Match.exact(expected) });
    }
    // Exactly the routes the API has: none without limits of its own, none for a missing route.
    expect(Object.keys(stageOf(real).RouteSettings).sort()).toEqual([...apiRoutes(real).keys()].sort());
  });

  it('takes each class from the row, not from its path', () => {
    expect(stageOf(synthetic).RouteSettings).toEqual({
      'GET /api/v1/thing/{id}': API,
      'HEAD /api/v1/thing/{id}': API,
      'GET /api/v1/openapi.json': DOCS,
      'HEAD /api/v1/openapi.json': DOCS,
      'GET /r/{code}': REDIRECT,
      'HEAD /r/{code}': REDIRECT,
      $default: API,
    });
  });

  it('creates the stage after every route it names (CloudFormation refuses an unknown route key)', () => {
    const stageResource = resourcesOfType(real.json, 'AWS::ApiGatewayV2::Stage')[0]![1] as CfnResource & {
      DependsOn?: string[];
    };
    const routeIds = resourcesOfType(real.json, 'AWS::ApiGatewayV2::Route').map(([id]) => id);
    expect(routeIds.length).toBe(Object.keys(stageOf(real).RouteSettings).length);
    expect(stageResource.DependsOn).toEqual(expect.arrayContaining(routeIds));
  });

  it('takes each class’s figures from -c <class>ThrottleRateLimit= and -c <class>ThrottleBurstLimit=', () => {
    const s = synth({
      stage: 'dev',
      context: {
        redirectThrottleRateLimit: '5000',
        redirectThrottleBurstLimit: '5000',
        apiThrottleRateLimit: '50.5',
        docsThrottleBurstLimit: '10',
      },
    });
    const settings = stageOf(s).RouteSettings;
    expect(settings['GET /r/{referral_code}']).toEqual({
      ThrottlingRateLimit: 5000,
      ThrottlingBurstLimit: 5000,
    });
    expect(settings['HEAD /r/{referral_code}']).toEqual({
      ThrottlingRateLimit: 5000,
      ThrottlingBurstLimit: 5000,
    });
    expect(settings['POST /api/v1/campaign']).toEqual({
      ThrottlingRateLimit: 50.5,
      ThrottlingBurstLimit: 200,
    });
    expect(settings.$default).toEqual({ ThrottlingRateLimit: 50.5, ThrottlingBurstLimit: 200 });
    expect(settings['GET /docs']).toEqual({ ThrottlingRateLimit: 20, ThrottlingBurstLimit: 10 });
    // The stage default is its own setting.
    expect(stageOf(s).DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: 1000,
      ThrottlingBurstLimit: 2000,
    });
  });

  it('refuses a route limit that is not a positive number, naming the key', () => {
    for (const [key, value] of [
      ['redirectThrottleRateLimit', '0'],
      ['apiThrottleBurstLimit', '12.5'],
      ['docsThrottleRateLimit', 'slow'],
    ] as const) {
      const app = new App({ outdir: tempOutdir(), context: { [key]: value, 'aws:cdk:bundling-stacks': [] } });
      expect(() => addReferralApiStack(app), key).toThrow(new RegExp(`-c ${key}=`));
    }
  });

  it('has no CORS configuration unless origins are configured', () => {
    expect(apiOf(real).CorsConfiguration).toBeUndefined();
    expect(apiOf(synthProd()).CorsConfiguration).toBeUndefined();
  });

  it('allows exactly the configured origins with -c corsOrigins=a,b', () => {
    const s = synth({
      stage: 'dev',
      context: { corsOrigins: 'https://app.example.com, https://admin.example.com:8443' },
    });
    expect(apiOf(s).CorsConfiguration).toEqual({
      AllowOrigins: ['https://app.example.com', 'https://admin.example.com:8443'],
      AllowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
      AllowHeaders: ['content-type', 'api-key'],
      ExposeHeaders: ['x-request-id', 'x-next-cursor', 'link', 'location'],
      AllowCredentials: false,
      MaxAge: 3600,
    });
  });

  it('refuses a CORS entry that is not an origin', () => {
    for (const corsOrigins of ['app.example.com', 'https://app.example.com/path', 'ftp://x.example']) {
      const app = new App({ outdir: tempOutdir(), context: { corsOrigins, 'aws:cdk:bundling-stacks': [] } });
      expect(() => addReferralApiStack(app), corsOrigins).toThrow(/corsOrigins/);
    }
  });
});
