import { type App, Aws, CfnOutput, RemovalPolicy, Stack, type StackProps, Tags } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { type RouteRow, routes as routeTable, type ThrottleClass } from '../lib/routes.ts';
import { tableDefinition } from '../lib/table-definition.ts';
import { DEFAULT_ROUTE_THROTTLES, type RouteThrottles } from '../lib/throttling.ts';
import { Alarms, type LatencyMonitoredFunction, type MonitoredFunction } from './alarms.ts';
import { CustomDomain } from './custom-domain.ts';
import { ApiFunctions, type FunctionDefaults } from './functions.ts';
import { ReferralHttpApi } from './http-api.ts';
import { addNagSuppressions } from './nag.ts';
import { Purge } from './purge.ts';
import { Rewards } from './rewards.ts';
import { Rollups } from './rollups.ts';
import {
  type AlarmSet,
  CONTEXT_KEYS,
  DEFAULT_LATENCY_P99_MS,
  DEFAULT_THROTTLE,
  readStackSettings,
  type StackSettings,
} from './settings.ts';
import { isProtected, parseStage, type Stage, stackNameFor } from './stage.ts';
import { ReferralTable } from './table.ts';
import { Webhooks } from './webhooks.ts';

export interface ReferralApiStackProps extends StackProps {
  readonly stage: Stage;
  /**
   * The route table to deploy. Always `lib/routes.ts` in the app; tests pass a table with rows the
   * real one does not have yet (public, HEAD) to exercise those paths of the wiring.
   */
  readonly routes?: readonly RouteRow[];
  /** Default-stage throttling of the HTTP API; `DEFAULT_THROTTLE` (1,000/s, burst 2,000) when omitted. */
  readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number };
  /** Per-route throttling by class; `DEFAULT_ROUTE_THROTTLES` of `lib/throttling.ts` when omitted. */
  readonly routeThrottles?: RouteThrottles;
  /** Browser origins allowed by CORS; none (no CORS configuration) when omitted or empty. */
  readonly corsOrigins?: readonly string[];
  /** SNS topic ARN that receives every alarm and its return to OK. */
  readonly alarmTopicArn?: string;
  /**
   * Deploy the alarms without a topic on purpose (`-c alarms=none`). A protected stage (prod)
   * without a topic and without this refuses to synthesize: its alarms would page nobody.
   */
  readonly alarmsWithoutTopic?: boolean;
  /** `full` when omitted; `minimal` (`-c alarmSet=minimal`) only on a stage that is not protected. */
  readonly alarmSet?: AlarmSet;
  /** p99 duration thresholds (ms) per route class; `DEFAULT_LATENCY_P99_MS` when omitted. */
  readonly latencyP99Ms?: Readonly<Record<ThrottleClass, number>>;
  /** Lambda active tracing (X-Ray) on every function; off when omitted. */
  readonly tracing?: boolean;
  /** Tags added to every resource for cost allocation, beside `service` and `stage`. */
  readonly costTags?: Readonly<Record<string, string>>;
  /** A customer-managed key for the table and the log groups, made here or an existing one. */
  readonly kms?: StackSettings['kms'];
  /** The API on a domain of the operator's, `share_url` built on it; the execute-api URL when omitted. */
  readonly customDomain?: StackSettings['customDomain'];
}

/**
 * The whole service for one stage: the table, one function per route behind the HTTP API, webhook
 * delivery and campaign purge off the table stream, and the alarms over all of it.
 */
export class ReferralApiStack extends Stack {
  readonly stage: Stage;
  /** The route table this stack was built from. */
  readonly routes: readonly RouteRow[];
  readonly table: dynamodb.Table;
  /** The customer-managed key of the table and the log groups, with `-c kms=true` or `-c kmsKey=`. */
  readonly dataKey?: kms.IKey;
  readonly tracing: boolean;
  readonly functions: ApiFunctions;
  readonly api: ReferralHttpApi;
  readonly customDomain?: CustomDomain;
  /**
   * What every link's `share_url` starts with (`PUBLIC_BASE_URL` of every function): the custom
   * domain's `https://<name>` when one is set, else the API's own `https://<id>.execute-api…`.
   */
  readonly publicBaseUrl: string;
  readonly webhooks: Webhooks;
  readonly purge: Purge;
  readonly rewards: Rewards;
  readonly rollups: Rollups;
  readonly alarms: Alarms;
  readonly alarmTopic?: sns.ITopic;

  constructor(scope: Construct, id: string, props: ReferralApiStackProps) {
    super(scope, id, props);
    this.stage = props.stage;
    const routes = props.routes ?? routeTable;
    this.routes = routes;
    if (isProtected(props.stage) && !props.alarmTopicArn && !props.alarmsWithoutTopic) {
      throw new Error(
        `${this.stackName}: the alarms of stage ${props.stage} would notify nobody. Give ` +
          `-c ${CONTEXT_KEYS.alarmTopicArn}=arn:aws:sns:<region>:<account>:<topic> (every alarm and its ` +
          `return to OK are sent there), or -c ${CONTEXT_KEYS.alarms}=none to deploy them without ` +
          'notifications on purpose.',
      );
    }
    const alarmSet = props.alarmSet ?? 'full';
    if (isProtected(props.stage) && alarmSet !== 'full') {
      throw new Error(
        `${this.stackName}: -c ${CONTEXT_KEYS.alarmSet}=${alarmSet} is for dev stages; stage ${props.stage} ` +
          'keeps the full set (its per-route and per-function alarms say where an incident is).',
      );
    }
    this.tracing = props.tracing ?? false;
    // Tags on every resource (not only the stack) so cost reports can split by service and stage,
    // and by whatever the operator adds (`-c costTags=`; activate them in the Billing console).
    Tags.of(this).add('service', 'referral-api');
    Tags.of(this).add('stage', props.stage);
    for (const [key, value] of Object.entries(props.costTags ?? {})) Tags.of(this).add(key, value);

    this.dataKey = props.kms ? this.dataKeyFor(props.kms) : undefined;
    const defaults: FunctionDefaults = {
      stage: props.stage,
      tracing: this.tracing,
      logEncryptionKey: this.dataKey,
    };

    this.table = new ReferralTable(this, 'Storage', {
      stage: props.stage,
      encryptionKey: this.dataKey,
    }).table;

    this.functions = new ApiFunctions(this, 'Functions', {
      ...defaults,
      table: this.table,
      routes,
    });

    this.api = new ReferralHttpApi(this, 'Api', {
      stage: props.stage,
      routes,
      routeFunctions: this.functions.byRoute,
      authorizerFunction: this.functions.authorizer,
      fallbackFunction: this.functions.fallback,
      throttle: props.throttle ?? DEFAULT_THROTTLE,
      routeThrottles: props.routeThrottles ?? DEFAULT_ROUTE_THROTTLES,
      corsOrigins: props.corsOrigins,
      logEncryptionKey: this.dataKey,
    });

    this.customDomain = props.customDomain
      ? new CustomDomain(this, 'CustomDomain', {
          ...props.customDomain,
          httpApi: this.api.httpApi,
          stage: this.api.stage,
        })
      : undefined;
    this.publicBaseUrl = this.customDomain?.url ?? this.api.httpApi.apiEndpoint;

    this.alarmTopic = props.alarmTopicArn
      ? sns.Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn)
      : undefined;

    this.webhooks = new Webhooks(this, 'Webhooks', {
      ...defaults,
      table: this.table,
      alarmTopic: this.alarmTopic,
      reserveConcurrency: isProtected(props.stage),
    });

    this.purge = new Purge(this, 'Purge', {
      ...defaults,
      table: this.table,
      alarmTopic: this.alarmTopic,
    });

    this.rewards = new Rewards(this, 'Rewards', {
      ...defaults,
      table: this.table,
      alarmTopic: this.alarmTopic,
    });

    this.rollups = new Rollups(this, 'Rollups', {
      ...defaults,
      table: this.table,
      purgeQueue: this.purge.queue,
      failureQueue: this.purge.streamFailureQueue,
    });

    const minimal = alarmSet === 'minimal';
    this.alarms = new Alarms(this, 'Alarms', {
      stage: props.stage,
      httpStage: this.api.stage,
      // A minimal set leaves the API's functions to the 5xx-rate and authorizer alarms, and keeps
      // the faults of those behind queues, streams and the schedule, which no request shows.
      functions: minimal ? this.backgroundFunctions : this.monitoredFunctions,
      streamConsumers: [
        { label: 'WebhookStreamConsumer', fn: this.webhooks.streamConsumer },
        { label: 'RollupStreamConsumer', fn: this.rollups.streamConsumer },
        { label: 'RewardStreamConsumer', fn: this.rewards.streamConsumer },
      ],
      latencyFunctions: minimal ? [] : this.latencyMonitoredFunctions,
      latencyP99Ms: props.latencyP99Ms ?? DEFAULT_LATENCY_P99_MS,
      table: this.table,
      indexNames: tableDefinition.globalSecondaryIndexes.map((gsi) => gsi.indexName),
      watchTableThrottles: !minimal,
      accessLogGroup: this.api.accessLogGroup,
      alarmTopic: this.alarmTopic,
    });

    // Every function, not only those that return links today: the stream and queue functions write
    // the link objects of webhook bodies and the feed too, and a new one needs nothing added here.
    // (The API's endpoint is the API's Ref alone: no function is needed to make it, so no cycle.)
    for (const fn of this.allFunctions) fn.addEnvironment('PUBLIC_BASE_URL', this.publicBaseUrl);

    const output = (id: string, value: string, description: string) =>
      new CfnOutput(this, id, { value, description: `${description} (${props.stage})` });
    output('Stage', props.stage, 'Deployment stage');
    output('ApiUrl', this.api.url, 'Base URL of the HTTP API');
    output(
      'PublicBaseUrl',
      this.publicBaseUrl,
      'Base of every share_url: the custom domain, else the API URL',
    );
    if (this.customDomain && !props.customDomain?.hostedZone) {
      output(
        'CustomDomainTarget',
        this.customDomain.regionalDomainName,
        `Point a CNAME (or alias) record of ${props.customDomain?.domainName} at this name`,
      );
    }
    output('TableName', this.table.tableName, 'DynamoDB table');
    output(
      'WebhookFirstAttemptQueueUrl',
      this.webhooks.firstAttemptQueue.queueUrl,
      'Webhook first-attempt queue (FIFO)',
    );
    output(
      'WebhookRetryQueueUrl',
      this.webhooks.retryQueue.queueUrl,
      'Webhook retry queue (retries and slow endpoints)',
    );
    output('WebhookDeadLetterQueueUrl', this.webhooks.deadLetterQueue.queueUrl, 'Webhook dead-letter queue');
    output(
      'WebhookFirstAttemptDeadLetterQueueUrl',
      this.webhooks.firstAttemptDeadLetterQueue.queueUrl,
      'First-attempt messages no invocation finished (FIFO)',
    );
    output(
      'WebhookStreamFailureQueueUrl',
      this.webhooks.streamFailureQueue.queueUrl,
      'Table stream ranges the webhook consumer gave up on',
    );
    output('PurgeQueueUrl', this.purge.queue.queueUrl, 'Campaign purge queue');
    output(
      'PurgeDeadLetterQueueUrl',
      this.purge.deadLetterQueue.queueUrl,
      'Campaign purge dead-letter queue',
    );
    output(
      'PurgeStreamFailureQueueUrl',
      this.purge.streamFailureQueue.queueUrl,
      'Table stream ranges the purge trigger gave up on',
    );
    // No key exists after the first deploy; this is the exact command to issue one.
    output(
      'CreateApiKeyCommand',
      `npm run api-key -- create --tenant <name> --table ${this.table.tableName} --region ${Aws.REGION}`,
      'Issue an api key for a tenant against this stage',
    );

    addNagSuppressions({
      publicRoutes: this.api.publicRoutes,
      functions: this.allFunctions,
      streamConsumers: [
        this.webhooks.streamConsumer,
        this.rollups.streamConsumer,
        this.rewards.streamConsumer,
      ],
      tracing: this.tracing,
      streamFailureQueues: [
        this.webhooks.streamFailureQueue,
        this.purge.streamFailureQueue,
        this.rewards.streamFailureQueue,
      ],
    });
  }

  /**
   * The customer-managed key: an existing one by ARN, or one made here with yearly rotation, kept
   * with the prod data it protects. Its policy is the default (the account's IAM policies decide,
   * which is how each function gets `kms:Decrypt` through DynamoDB only) plus CloudWatch Logs,
   * which encrypts the log groups with it, for this stack's log groups alone.
   */
  private dataKeyFor(setting: NonNullable<StackSettings['kms']>): kms.IKey {
    if ('keyArn' in setting) return kms.Key.fromKeyArn(this, 'DataKey', setting.keyArn);
    const key = new kms.Key(this, 'DataKey', {
      description: `Table and logs of ${this.stackName}`,
      enableKeyRotation: true,
      removalPolicy: isProtected(this.stage) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchLogsOfThisStack',
        principals: [new iam.ServicePrincipal(`logs.${Aws.REGION}.amazonaws.com`)],
        actions: [
          'kms:Decrypt',
          'kms:DescribeKey',
          'kms:Encrypt',
          'kms:GenerateDataKey',
          'kms:GenerateDataKeyWithoutPlaintext',
          'kms:ReEncryptFrom',
          'kms:ReEncryptTo',
        ],
        resources: ['*'],
        conditions: {
          ArnLike: {
            'kms:EncryptionContext:aws:logs:arn': `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:${this.stackName}-*`,
          },
        },
      }),
    );
    return key;
  }

  /** Every function with the short label its alarms are named after. */
  get monitoredFunctions(): MonitoredFunction[] {
    return [
      ...[...this.functions.byRoute].map(([label, fn]) => ({ label, fn })),
      { label: 'Authorizer', fn: this.functions.authorizer },
      { label: 'Fallback', fn: this.functions.fallback },
      ...this.backgroundFunctions,
    ];
  }

  /** The functions no request waits for: fed by queues, the table stream or a schedule. */
  get backgroundFunctions(): MonitoredFunction[] {
    return [
      { label: 'WebhookDelivery', fn: this.webhooks.firstAttemptFunction },
      { label: 'WebhookRetry', fn: this.webhooks.retryFunction },
      { label: 'WebhookStreamConsumer', fn: this.webhooks.streamConsumer },
      { label: 'Purge', fn: this.purge.purgeFunction },
      { label: 'RollupStreamConsumer', fn: this.rollups.streamConsumer },
      { label: 'RewardRelease', fn: this.rewards.releaseFunction },
      { label: 'RewardStreamConsumer', fn: this.rewards.streamConsumer },
    ];
  }

  /** The functions on the request path, each with the class its latency threshold comes from. */
  get latencyMonitoredFunctions(): LatencyMonitoredFunction[] {
    return [
      // A row with a timeout of its own waits on something outside the service (the webhook test
      // on the customer's endpoint, up to 18 s): its duration is the customer's, not ours to page on.
      ...this.routes
        .filter((route) => route.timeoutSeconds === undefined)
        .map((route) => {
          const fn = this.functions.byRoute.get(route.name);
          if (!fn) throw new Error(`No function for route ${route.name}`);
          return { label: route.name, fn, routeClass: route.throttle };
        }),
      // Every keyed request waits for it (when API Gateway's cache misses).
      { label: 'Authorizer', fn: this.functions.authorizer, routeClass: 'api' as const },
    ];
  }

  /** Every Lambda function of the stack: the API's, webhook delivery's and the purge's. */
  get allFunctions(): NodejsFunction[] {
    return this.monitoredFunctions.map((f) => f.fn as NodejsFunction);
  }
}

/**
 * Adds the stack for the stage named by the `stage` context value (`dev` when unset). `infra/app.ts`
 * and the infra tests both build the app through here, so the tests check what `cdk synth` makes.
 */
export function addReferralApiStack(
  app: App,
  options: { routes?: readonly RouteRow[] } = {},
): ReferralApiStack {
  const stage = parseStage(app.node.tryGetContext('stage'));
  const settings = readStackSettings(app.node);
  return new ReferralApiStack(app, stackNameFor(stage), {
    stage,
    routes: options.routes,
    throttle: settings.throttle,
    routeThrottles: settings.routeThrottles,
    corsOrigins: settings.corsOrigins,
    alarmTopicArn: settings.alarmTopicArn,
    alarmsWithoutTopic: settings.alarmsWithoutTopic,
    alarmSet: settings.alarmSet,
    latencyP99Ms: settings.latencyP99Ms,
    tracing: settings.tracing,
    costTags: settings.costTags,
    kms: settings.kms,
    customDomain: settings.customDomain,
    description: `Referral tracking API (${stage})`,
  });
}
