import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { ACCESS_LOG_FIELDS } from '../lib/observability/access-log.ts';
import { answersHead, DEFAULT_ROUTE_KEY, type RouteDefinition } from '../lib/routes.ts';
import { type RouteThrottles, routeThrottles } from '../lib/throttling.ts';
import { isProtected, type Stage } from './stage.ts';

/** The header that carries the key, as the contract names it (HTTP APIs lowercase headers). */
export const API_KEY_IDENTITY_SOURCE = '$request.header.api-key';

/**
 * How long API Gateway may reuse an authorizer answer for one key. The contract says a revoked key
 * stops working within 60 s, so this is the ceiling, and the authorizer must not add a cache of its
 * own on top of it.
 */
export const AUTHORIZER_CACHE_TTL = Duration.seconds(60);

/** One JSON line per request (`ACCESS_LOG_FIELDS`, `lib/observability/access-log.ts`). */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS));

export interface ReferralHttpApiProps {
  readonly stage: Stage;
  readonly routes: readonly RouteDefinition[];
  /** Route functions keyed by route name: exactly one per row of `routes`. */
  readonly routeFunctions: ReadonlyMap<string, lambda.IFunction>;
  readonly authorizerFunction: lambda.IFunction;
  readonly fallbackFunction: lambda.IFunction;
  /**
   * Default-stage throttling: steady requests per second and burst (token bucket size), for any
   * route without figures of its own.
   */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Figures per throttle class; every route key (HEAD twins and `$default` too) gets its row's. */
  readonly routeThrottles: RouteThrottles;
  /** Browser origins allowed to call the API; empty or omitted: no CORS configuration at all. */
  readonly corsOrigins?: readonly string[];
  /** Customer-managed key for the access log group; CloudWatch Logs' own encryption when omitted. */
  readonly logEncryptionKey?: kms.IKey;
}

/** Request headers a browser client sends: the JSON content type and the key. */
export const CORS_ALLOW_HEADERS = ['content-type', 'api-key'];
/** Response headers a browser client may read: request id, list paging and the redirect target. */
export const CORS_EXPOSE_HEADERS = ['x-request-id', 'x-next-cursor', 'link', 'location'];

/**
 * The HTTP API (payload format 2.0): one route per route-table row, a HEAD twin where the row asks
 * for one, the api-key authorizer on the rows that need it, and a `$default` route to the fallback
 * so unmatched requests get the contract's 404/405 bodies instead of API Gateway's own.
 */
export class ReferralHttpApi extends Construct {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  readonly authorizer: HttpLambdaAuthorizer;
  readonly accessLogGroup: logs.LogGroup;
  /**
   * Every route without the authorizer, by path (`$default` for the catch-all), so that each
   * can be reviewed on its own (cdk-nag APIG4 in `infra/nag.ts`).
   */
  readonly publicRoutes: ReadonlyArray<{ readonly path: string; readonly route: IConstruct }>;

  constructor(scope: Construct, id: string, props: ReferralHttpApiProps) {
    super(scope, id);

    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      apiName: `referral-api-${props.stage}`,
      description: `Referral tracking API (${props.stage})`,
      // The `$default` route has no authorizer: the fallback only says 404/405 and reads no data.
      defaultIntegration: integrationFor('Fallback', props.fallbackFunction),
      // The stage is created below with access logging, which HttpApi's own default stage lacks.
      createDefaultStage: false,
      // Only when origins are configured: without CORS headers browsers on other origins are
      // refused, which is right for an API called with a secret key from servers. When set, API
      // Gateway answers preflight OPTIONS itself (no route, no authorizer, no function).
      corsPreflight: props.corsOrigins?.length
        ? {
            allowOrigins: [...props.corsOrigins],
            allowMethods: [
              apigw.CorsHttpMethod.GET,
              apigw.CorsHttpMethod.HEAD,
              apigw.CorsHttpMethod.POST,
              apigw.CorsHttpMethod.PATCH,
              apigw.CorsHttpMethod.DELETE,
            ],
            allowHeaders: CORS_ALLOW_HEADERS,
            exposeHeaders: CORS_EXPOSE_HEADERS,
            // The key travels in a header, never in cookies.
            allowCredentials: false,
            maxAge: Duration.hours(1),
          }
        : undefined,
    });

    // Access logs record what never reaches a function: the gateway's own 401s (missing key),
    // 429s (throttling) and integration failures such as a Lambda timeout.
    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      encryptionKey: props.logEncryptionKey,
      removalPolicy: isProtected(props.stage) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(this.accessLogGroup),
        format: ACCESS_LOG_FORMAT,
      },
      // Requests over the limits get the gateway's own 429 `{"message":"Too Many Requests"}`:
      // HTTP APIs cannot customise gateway responses, so not the contract's `rate_limited` body.
      throttle: { rateLimit: props.throttle.rateLimit, burstLimit: props.throttle.burstLimit },
    });

    this.authorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', props.authorizerFunction, {
      authorizerName: `api-key-${props.stage}`,
      // The identity source is the cache key. Its cost: a request with no `api-key` header at all
      // is refused by API Gateway itself (401 `{"message":"Unauthorized"}`) without invoking the
      // authorizer, so only unknown and revoked keys get the contract's 401 body from the handler.
      identitySource: [API_KEY_IDENTITY_SOURCE],
      // Simple responses: the authorizer returns `{ isAuthorized, context: { tenant } }`.
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      resultsCacheTtl: AUTHORIZER_CACHE_TTL,
    });

    const publicRoutes: Array<{ path: string; route: IConstruct }> = [];
    const defaultRoute = this.httpApi.node.tryFindChild('DefaultRoute');
    if (!defaultRoute) throw new Error('HttpApi made no DefaultRoute for the fallback');
    publicRoutes.push({ path: DEFAULT_ROUTE_KEY, route: defaultRoute });
    const allRoutes: IConstruct[] = [defaultRoute];

    for (const route of props.routes) {
      const fn = props.routeFunctions.get(route.name);
      if (!fn) throw new Error(`No function for route ${route.name}`);
      const methods = [apigw.HttpMethod[route.method]];
      if (answersHead(route)) methods.push(apigw.HttpMethod.HEAD);
      const added = this.httpApi.addRoutes({
        path: route.path,
        methods,
        // One integration per function, shared by its GET and HEAD routes.
        integration: integrationFor(route.name, fn),
        // Public rows say so explicitly, so a default authorizer added later cannot capture them.
        authorizer: route.auth ? this.authorizer : new apigw.HttpNoneAuthorizer(),
      });
      allRoutes.push(...added);
      if (!route.auth) for (const r of added) publicRoutes.push({ path: route.path, route: r });
    }
    this.publicRoutes = publicRoutes;

    // Each route key its own budget, so that a flood of one route (visits, random api keys on one
    // endpoint) cannot spend the others'. The stage names routes by key only, and CloudFormation
    // refuses a key whose route does not exist yet, hence the dependency on every route. (A JSON
    // property of the L1 resource: written in CloudFormation's own casing.)
    const stage = this.stage.node.defaultChild as apigw.CfnStage;
    stage.routeSettings = Object.fromEntries(
      [...routeThrottles(props.routes, props.routeThrottles)].map(([key, limit]) => [
        key,
        { ThrottlingRateLimit: limit.rateLimit, ThrottlingBurstLimit: limit.burstLimit },
      ]),
    );
    for (const route of allRoutes) this.stage.node.addDependency(route);
  }

  /** Base URL of the API, ending in `/`. */
  get url(): string {
    return this.stage.url;
  }
}

/**
 * A Lambda integration that grants API Gateway the invoke once, for its first route. The stock one
 * adds a permission per route, but its source ARN names the path in any stage and for any method, so
 * a GET row's HEAD twin got a second, identical one: 22 resources of nothing, in a stack that the
 * rewards endpoints brought past CloudFormation's 500 (docs/deploying.md, "Resources").
 */
class OncePermittedLambdaIntegration extends HttpLambdaIntegration {
  private permitted = false;

  protected override completeBind(options: apigw.HttpRouteIntegrationBindOptions): void {
    if (this.permitted) return;
    this.permitted = true;
    super.completeBind(options);
  }
}

function integrationFor(name: string, fn: lambda.IFunction): HttpLambdaIntegration {
  return new OncePermittedLambdaIntegration(`${name}Integration`, fn, {
    payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
  });
}
