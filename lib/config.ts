/**
 * The service's configuration: every setting a function or the local stack passes through the
 * environment, read here and nowhere else. Each setting is read when it is asked for, and the
 * modules that need one ask at their load (a cold start), so a missing required setting fails the
 * cold start loudly instead of a request later. (Read on access rather than once for all: the local
 * stack sets the variables after some modules have loaded, and a function that needs no table must
 * not need TABLE_NAME.)
 */
function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}

function positiveNumber(name: string): number | undefined {
  const value = Number(process.env[name]);
  return process.env[name] !== undefined && process.env[name] !== '' && Number.isFinite(value) && value >= 0
    ? value
    : undefined;
}

function optional(name: string): string | undefined {
  const value = process.env[name];
  return value === undefined || value === '' ? undefined : value;
}

/**
 * `PUBLIC_BASE_URL` as a public base: an absolute http(s) URL without query or fragment, kept
 * without its trailing slashes so that a path can follow it.
 */
function publicBase(name: string): string {
  const value = required(name).replace(/\/+$/, '');
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash || value.includes('#')) {
    throw new Error(`${name} must be an absolute http(s) URL without query or fragment, got "${value}"`);
  }
  return value;
}

export const config = {
  get tableName(): string {
    return required('TABLE_NAME');
  },
  /**
   * What every link's `share_url` starts with: the stage's custom domain when it has one, else the
   * API's own URL (the stack sets it on every function), locally the gateway's
   * `http://127.0.0.1:{PORT}` (the local stack sets it once its port is bound). Read when a link
   * object is made, so a function or script that makes none does not need it.
   */
  get publicBaseUrl(): string {
    return publicBase('PUBLIC_BASE_URL');
  },
  /** The `service` of every log line and metric. */
  get serviceName(): string {
    return optional('POWERTOOLS_SERVICE_NAME') ?? 'referral-api';
  },
  get logLevel(): 'INFO' | 'DEBUG' | 'WARN' | 'ERROR' {
    const level = optional('LOG_LEVEL')?.toUpperCase();
    return level === 'DEBUG' || level === 'WARN' || level === 'ERROR' ? level : 'INFO';
  },
  /** The X-Ray trace id of the invocation (Lambda sets it per invocation), as log lines carry it. */
  get xrayTraceId(): string | undefined {
    return /Root=([^;]+)/.exec(optional('_X_AMZN_TRACE_ID') ?? '')?.[1];
  },
  /** `POWERTOOLS_METRICS_DISABLED=true` turns business metrics off, as it does for Powertools. */
  get metricsDisabled(): boolean {
    return optional('POWERTOOLS_METRICS_DISABLED')?.toLowerCase() === 'true';
  },
  /** The stage as set (unset for tests and scripts), where `stage` defaults to `local`. */
  get stageSet(): string | undefined {
    return optional('STAGE');
  },
  /** Deployment stage; `local` only for the local stack. */
  get stage(): string {
    return process.env.STAGE ?? 'local';
  },
  /**
   * Webhook URLs with `http` or private addresses are accepted only when this is set, and never in
   * a deployed stage (the stack does not set it, and the check below refuses it outside `local`).
   */
  get allowPrivateWebhooks(): boolean {
    return process.env.ALLOW_PRIVATE_WEBHOOKS === 'true' && (process.env.STAGE ?? 'local') === 'local';
  },
  /** The webhook first-attempt queue (FIFO), where the stream consumer sends events. */
  get webhookQueueUrl(): string {
    return required('WEBHOOK_QUEUE_URL');
  },
  /** The webhook retry lane's queue. */
  get webhookRetryQueueUrl(): string {
    return required('WEBHOOK_RETRY_QUEUE_URL');
  },
  get webhookDlqUrl(): string {
    return required('WEBHOOK_DLQ_URL');
  },
  /** Comma-separated seconds replacing the retry schedule (`retryDelaysFrom` checks them). */
  get webhookRetryDelays(): string | undefined {
    return process.env.WEBHOOK_RETRY_DELAYS;
  },
  /**
   * How long a webhook URL may fail every attempt before it is disabled: 3 days, unless
   * `WEBHOOK_DISABLE_AFTER_SECONDS` says otherwise (the local stack, to try it without waiting).
   */
  get webhookDisableAfterSeconds(): number {
    const value = Number(process.env.WEBHOOK_DISABLE_AFTER_SECONDS);
    return Number.isFinite(value) && value > 0 ? value : 3 * 24 * 60 * 60;
  },
  get purgeQueueUrl(): string {
    return required('PURGE_QUEUE_URL');
  },
  /** The delay of a purge's follow-up pass (`functions/queue/purge-campaign.ts`). */
  get purgeSweepDelaySeconds(): number {
    return Number(process.env.PURGE_SWEEP_DELAY_SECONDS ?? 60);
  },
  /**
   * How long the counting consumer sums an item's interactions in its window before writing them
   * (`lib/analytics/window.ts`): series by link and referrer and the referrers' totals. Deployed
   * 30 s (with the 45 s tumbling window, the contract's 60 s); test stacks shorten it.
   */
  get analyticsFlushAgeMs(): number {
    return positiveNumber('ANALYTICS_FLUSH_AGE_MS') ?? 30_000;
  },
  /** How long a campaign's rankings gather raises before they are merged (deployed 10 s). */
  get analyticsBoardAgeMs(): number {
    return positiveNumber('ANALYTICS_BOARD_AGE_MS') ?? 10_000;
  },
  /** Ids reserved per counter update (`lib/db/ids.ts`). */
  get idBlockSize(): number {
    return Number(process.env.ID_BLOCK_SIZE ?? 100);
  },
  /** A DynamoDB other than the region's (DynamoDB Local); unset in AWS. */
  get dynamodbEndpoint(): string | undefined {
    return optional('DYNAMODB_ENDPOINT');
  },
  /** An SQS other than the region's (the local queue); unset in AWS. */
  get sqsEndpoint(): string | undefined {
    return optional('AWS_ENDPOINT_URL_SQS');
  },
  /** One DynamoDB or SQS attempt's limit, when set (the local stack raises it). */
  get attemptTimeoutMs(): number | undefined {
    return Number(process.env.DYNAMODB_ATTEMPT_TIMEOUT_MS) || undefined;
  },
  /**
   * FAULT INJECTION, for tests only (`test/faults/visit-crash.test.ts`): `n` makes the process
   * SIGKILL itself right after its n-th visitor marker write, before that visit's item, as a crash
   * between the two would. Only on the local stack, like the private webhooks above.
   */
  get faultKillAfterVisitorMarker(): number | undefined {
    const n = Number(optional('FAULT_KILL_AFTER_VISITOR_MARKER'));
    return Number.isSafeInteger(n) && n > 0 && (process.env.STAGE ?? 'local') === 'local' ? n : undefined;
  },
  get region(): string | undefined {
    return optional('AWS_REGION');
  },
  /**
   * Credentials for a local endpoint, which takes any: the environment's when set, else fixed
   * ones, so no AWS profile is needed. In AWS the SDK's default chain (the role) applies.
   */
  get localCredentials(): { accessKeyId: string; secretAccessKey: string } {
    return {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    };
  },
};
