import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RouteDefinition } from '../lib/routes.ts';
import { isProtected, type Stage } from './stage.ts';

/** The header that carries the key, as the contract names it (HTTP APIs lowercase headers). */
export const API_KEY_IDENTITY_SOURCE = '$request.header.api-key';

/**
 * How long API Gateway may reuse an authorizer answer for one key. The contract says a revoked key
 * stops working within 60 s, so this is the ceiling, and the authorizer must not add a cache of its
 * own on top of it.
 */
export const AUTHORIZER_CACHE_TTL = Duration.seconds(60);

/**
 * One JSON line per request. The default format is Apache CLF with the client IP; this one leaves
 * the IP out (the service records visits without one, and logs should not undo that) and adds what
 * explains a failure: the route, the authorizer's and the integration's errors, the latencies.
 */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    time: '$context.requestTime',
    method: '$context.httpMethod',
    path: '$context.path',
    routeKey: '$context.routeKey',
    status: '$context.status',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
    authorizerError: '$context.authorizer.error',
    userAgent: '$context.identity.userAgent',
  }),
);

export interface ReferralHttpApiProps {
  readonly stage: Stage;
  readonly routes: readonly RouteDefinition[];
  /** Route functions keyed by route name: exactly one per row of `routes`. */
  readonly routeFunctions: ReadonlyMap<string, lambda.IFunction>;
  readonly authorizerFunction: lambda.IFunction;
  readonly fallbackFunction: lambda.IFunction;
}

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

  constructor(scope: Construct, id: string, props: ReferralHttpApiProps) {
    super(scope, id);

    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      apiName: `referral-api-${props.stage}`,
      description: `Referral tracking API (${props.stage})`,
      // The `$default` route has no authorizer: the fallback only says 404/405 and reads no data.
      defaultIntegration: integrationFor('Fallback', props.fallbackFunction),
      // The stage is created below with access logging, which HttpApi's own default stage lacks.
      createDefaultStage: false,
    });

    // Access logs record what never reaches a function: the gateway's own 401s (missing key),
    // 429s (throttling) and integration failures such as a Lambda timeout.
    this.accessLogGroup = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
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

    for (const route of props.routes) {
      const fn = props.routeFunctions.get(route.name);
      if (!fn) throw new Error(`No function for route ${route.name}`);
      if (route.head && route.method !== 'GET') {
        // API Gateway would accept it, but HEAD only makes sense as the body-less twin of a GET,
        // and the local gateway only honours it there.
        throw new Error(`Route ${route.name}: head is only allowed on GET routes`);
      }
      const methods = [apigw.HttpMethod[route.method]];
      if (route.head) methods.push(apigw.HttpMethod.HEAD);
      this.httpApi.addRoutes({
        path: route.path,
        methods,
        // One integration per function, shared by its GET and HEAD routes.
        integration: integrationFor(route.name, fn),
        // Public rows say so explicitly, so a default authorizer added later cannot capture them.
        authorizer: route.auth ? this.authorizer : new apigw.HttpNoneAuthorizer(),
      });
    }
  }

  /** Base URL of the API, ending in `/`. */
  get url(): string {
    return this.stage.url;
  }
}

function integrationFor(name: string, fn: lambda.IFunction): HttpLambdaIntegration {
  return new HttpLambdaIntegration(`${name}Integration`, fn, {
    payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
  });
}
