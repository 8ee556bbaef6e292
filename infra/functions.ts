import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RouteRow } from '../lib/routes.ts';
import { afterBundlingCommands, BUNDLE_FILES, BUNDLING as SHARED_BUNDLING } from './bundling.ts';
import { AUTHORIZER_GRANT, grantTable } from './grants.ts';
import { isProtected, type Stage } from './stage.ts';

/** Repository root, found from this file so synth works whatever the current directory is. */
export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/** The service name in every structured log line (Powertools reads it). */
export const SERVICE_NAME = 'referral-api';

/**
 * Memory of the HTTP functions. They are I/O bound (a few DynamoDB calls each); 256 MB buys enough
 * CPU for a quick cold start (Lambda allots CPU in proportion to memory) at a quarter of the cost
 * per ms of 1 GB. A route row may ask for more (`memoryMb` in `lib/routes.ts`).
 */
export const DEFAULT_MEMORY_MB = 256;
/**
 * Timeout of the HTTP functions. They answer in well under a second; 10 s bounds a stuck call (and
 * its cost) while staying below API Gateway's 30 s integration limit, so a stuck function ends in
 * the gateway's own 5xx after 10 s rather than holding the client for 30.
 */
export const HTTP_TIMEOUT = Duration.seconds(10);

export { ESM_REQUIRE_BANNER } from './bundling.ts';

/**
 * NodejsFunction's form of the shared bundling settings (`infra/bundling.ts`, which the bench and the
 * bundle-size test build with too).
 */
export const BUNDLING: BundlingOptions = {
  // Local esbuild (a devDependency) does the bundling: no Docker needed on laptops or CI.
  forceDockerBundling: false,
  format: SHARED_BUNDLING.format === 'esm' ? OutputFormat.ESM : OutputFormat.CJS,
  target: SHARED_BUNDLING.target,
  minify: SHARED_BUNDLING.minify,
  sourceMap: SHARED_BUNDLING.sourceMap,
  sourcesContent: SHARED_BUNDLING.sourcesContent,
  externalModules: [...SHARED_BUNDLING.externalModules],
  mainFields: [...SHARED_BUNDLING.mainFields],
  banner: SHARED_BUNDLING.banner,
  // esbuild's per-bundle size summary, printed for every function of every synth (the
  // infrastructure tests synthesise a dozen stacks), says nothing a failed build would not.
  logLevel: LogLevel.ERROR,
};

/**
 * `BUNDLING`, plus for a function that reads files beside its bundle (`BUNDLE_FILES`, e.g. the
 * reference page's Redoc script) the hook that writes them into its asset directory.
 */
export function bundlingFor(handler: string): BundlingOptions {
  if (!BUNDLE_FILES[handler]) return BUNDLING;
  return {
    ...BUNDLING,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (inputDir, outputDir) => afterBundlingCommands(handler, inputDir, outputDir),
    },
  };
}

/** Settings every function of the stack shares, beyond the stage (`-c tracing`, `-c kms…`). */
export interface FunctionDefaults {
  readonly stage: Stage;
  /** Lambda active tracing (X-Ray) on every function; off when omitted. */
  readonly tracing?: boolean;
  /** Customer-managed key for the functions' log groups; CloudWatch Logs' own encryption when omitted. */
  readonly logEncryptionKey?: kms.IKey;
}

export interface ServiceFunctionOptions extends FunctionDefaults {
  /** Handler module under `functions/`, without extension, e.g. `http/get-campaign`. */
  readonly handler: string;
  /** Memory in MB; `DEFAULT_MEMORY_MB` when omitted. */
  readonly memoryMb?: number;
  /** `HTTP_TIMEOUT` when omitted; queue and stream consumers set their own. */
  readonly timeout?: Duration;
  /** Shown in the console next to the generated function name. */
  readonly description?: string;
  /** Extra environment; the common variables are always set. */
  readonly environment?: Record<string, string>;
  /** Concurrency reserved for (and capping) this function; none when omitted. */
  readonly reservedConcurrency?: number;
  /** `false`: JSON logs with system logs at WARN, so no START/END/REPORT lines (`RouteRow.platformLogs`). */
  readonly platformLogs?: false;
}

/**
 * One Lambda function with the house defaults: its own esbuild bundle, Node.js 22 on arm64 (cheaper
 * per ms than x86 and fast to cold start), an explicit log group with a retention period, so logs
 * neither live forever nor depend on Lambda creating the group on first invocation, and its own
 * role that may write to that log group and nothing else until the caller grants more. (Not the
 * AWSLambdaBasicExecutionRole managed policy: it allows writing to every log group of the account.)
 */
export function serviceFunction(
  scope: Construct,
  id: string,
  options: ServiceFunctionOptions,
): NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}LogGroup`, {
    retention: logs.RetentionDays.ONE_MONTH,
    encryptionKey: options.logEncryptionKey,
    // Keep prod logs after a stack deletion for forensics; dev logs go with the stack.
    removalPolicy: isProtected(options.stage) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
  });

  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: `Execution role of functions/${options.handler}.ts (${options.stage})`,
  });
  logGroup.grantWrite(role);

  return new NodejsFunction(scope, id, {
    entry: join(projectRoot, 'functions', `${options.handler}.ts`),
    description: options.description,
    role,
    handler: 'handler',
    projectRoot,
    depsLockFilePath: join(projectRoot, 'package-lock.json'),
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    memorySize: options.memoryMb ?? DEFAULT_MEMORY_MB,
    timeout: options.timeout ?? HTTP_TIMEOUT,
    reservedConcurrentExecutions: options.reservedConcurrency,
    logGroup,
    ...(options.platformLogs === false
      ? { loggingFormat: lambda.LoggingFormat.JSON, systemLogLevelV2: lambda.SystemLogLevel.WARN }
      : {}),
    // X-Ray segments for each invocation (Lambda's own, no SDK in the bundle); `PassThrough`, the
    // default, otherwise. Adds xray:PutTraceSegments and PutTelemetryRecords (resource `*`) to the role.
    tracing: options.tracing ? lambda.Tracing.ACTIVE : undefined,
    environment: {
      STAGE: options.stage,
      POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
      // Stack traces in the logs point at the TypeScript sources, not the minified bundle.
      NODE_OPTIONS: '--enable-source-maps',
      ...options.environment,
    },
    bundling: bundlingFor(options.handler),
  });
}

export interface ApiFunctionsProps extends FunctionDefaults {
  readonly table: dynamodb.ITable;
  /** Route rows with their exact DynamoDB actions, which each function is granted. */
  readonly routes: readonly RouteRow[];
}

/**
 * Every function behind the HTTP API: one per route-table row (never listed by hand), the api-key
 * authorizer and the `$default` fallback.
 */
export class ApiFunctions extends Construct {
  /** Route functions keyed by the route's `name`. */
  readonly byRoute: ReadonlyMap<string, NodejsFunction>;
  readonly authorizer: NodejsFunction;
  readonly fallback: NodejsFunction;

  constructor(scope: Construct, id: string, props: ApiFunctionsProps) {
    super(scope, id);
    const { stage, table } = props;
    const defaults: FunctionDefaults = {
      stage,
      tracing: props.tracing,
      logEncryptionKey: props.logEncryptionKey,
    };
    const tableEnv = { TABLE_NAME: table.tableName };

    const byRoute = new Map<string, NodejsFunction>();
    for (const route of props.routes) {
      if (byRoute.has(route.name)) throw new Error(`Duplicate route name ${route.name} in the route table`);
      const touchesTable = route.dynamo.length > 0 || (route.queryIndexes ?? []).length > 0;
      const fn = serviceFunction(this, route.name, {
        ...defaults,
        handler: route.handler,
        memoryMb: route.memoryMb,
        timeout: route.timeoutSeconds ? Duration.seconds(route.timeoutSeconds) : undefined,
        platformLogs: route.platformLogs,
        description: `${route.method} ${route.path}: ${route.summary} (${stage})`,
        // A function that never touches the table gets neither a grant nor the table's name.
        environment: touchesTable ? tableEnv : {},
      });
      grantTable(fn, table, { actions: route.dynamo, queryIndexes: route.queryIndexes });
      byRoute.set(route.name, fn);
    }
    this.byRoute = byRoute;

    // The authorizer only looks keys up, one GetItem each: it can neither change them nor list them.
    this.authorizer = serviceFunction(this, 'Authorizer', {
      ...defaults,
      handler: 'auth/authorizer',
      description: `api-key authorizer (${stage})`,
      environment: tableEnv,
    });
    grantTable(this.authorizer, table, AUTHORIZER_GRANT);

    // The fallback answers 404/405 from the route table alone: no table name, no grant, so a bug
    // in the one function every unmatched request reaches cannot touch data.
    this.fallback = serviceFunction(this, 'Fallback', {
      ...defaults,
      handler: 'http/fallback',
      description: `404/405 for unmatched requests (${stage})`,
    });
  }

  /** Every function, e.g. for alarms or tags added by later constructs. */
  get all(): NodejsFunction[] {
    return [...this.byRoute.values(), this.authorizer, this.fallback];
  }
}
