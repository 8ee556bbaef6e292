import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createDocumentClient } from '../aws/clients.ts';
import { ApiKeyStore } from '../db/api-keys.ts';
import { backfillCampaignListKeys } from '../db/migrations/campaign-list-backfill.ts';
import { migrateRankings, rankingsMigrated } from '../db/migrations/rankings-migration.ts';
import {
  backfillReferredUserListKeys,
  referredUserListMigrated,
} from '../db/migrations/referred-user-list-keys.ts';
import { backfillSeriesDayTotals, seriesDayTotalsKept } from '../db/migrations/series-day-totals.ts';
import {
  describeSeriesMigration,
  migrateSeriesItems,
  seriesLayoutMigrated,
} from '../db/migrations/series-migration.ts';
import { REWARD_SOURCE_FILTERS, REWARD_STREAM_BATCHING } from '../db/reward-source-filter.ts';
import { generateApiKey } from '../domain/api-key-rules.ts';
import { ApiError } from '../domain/errors.ts';
import { errorBody, JSON_CONTENT_TYPE } from '../http/responses.ts';
import type { RouteDefinition, ThrottleClass } from '../routes.ts';
import { GSI2 } from '../table-definition.ts';
import {
  DEFAULT_ROUTE_THROTTLES,
  type RouteThrottle,
  type RouteThrottles,
  THROTTLE_CLASSES,
} from '../throttling.ts';
import {
  FIRST_ATTEMPT_CONCURRENCY,
  RETRY_CONCURRENCY,
  RETRY_CONCURRENCY_PER_CAMPAIGN,
} from '../webhooks/lanes.ts';
import {
  FEED_AND_ROLLUP_FILTERS,
  ROLLUP_STREAM_BATCHING,
  STREAM_CONSUMER_FILTERS,
  WEBHOOK_STREAM_BATCHING,
} from '../webhooks/stream-filter.ts';
import { ensureTable, type RunningDynamo, startDynamoLocal } from './dynamodb.ts';
import { LocalStackError } from './errors.ts';
import {
  type AuthorizerHandler,
  answerWhileStarting,
  createGateway,
  type LambdaHandler,
  lambdaContext,
} from './gateway.ts';
import { type RunningQueue, startLocalQueue } from './queue.ts';
import { type QueueHandler, startQueuePoller } from './queue-poller.ts';
import { type StreamHandler, startStreamPoller } from './stream-poller.ts';

export const LOCAL_TABLE_NAME = 'referrals-local';
/** The local queues' journal in DATA_DIR (see `queue-journal.ts`). */
export const QUEUE_JOURNAL_FILE = 'queue-journal.jsonl';
const projectRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

export interface LocalStackSettings {
  port: number;
  /** Directory for DynamoDB Local's files and the dev key; `memory` keeps nothing. */
  dataDir: string;
  /** `tenant:key` pairs; when empty, one dev key is generated once and kept in `dataDir`. */
  devApiKeys?: string;
  dynamodbEndpoint?: string;
  webhookRetryDelays?: string;
  host?: string;
  /**
   * Request-rate limits of the gateway, per throttle class and route key: the deployed stage's
   * figures when omitted, none with `false` (`LOCAL_THROTTLE`, see `parseLocalThrottle`).
   */
  throttles?: RouteThrottles | false;
  /** Told each step of the start (Java's first start takes seconds), for `npm start` to print. */
  onStep?: (step: string) => void;
  /** Told the base URL as soon as the port is bound, before the rest starts (`npm start` prints it). */
  onListening?: (baseUrl: string) => void;
  /** Told every answered request, for `npm start`'s one line per request (`LOCAL_REQUEST_LOG`). */
  onRequest?: (line: RequestLogLine) => void;
  /**
   * `false`: no table-stream poller (no stream consumer runs). For the bench's analytics part alone,
   * which queries a table of millions of items written straight into it with its stream off.
   */
  streamPoller?: boolean;
  /**
   * The rollup stream reader's batching window and tumbling window: the deployed mapping's
   * (`ROLLUP_STREAM_BATCHING`) unless given; test stacks pass shorter ones (fractions of a second
   * are fine locally).
   */
  rollupBatchingWindowMs?: number;
  rollupTumblingWindowSeconds?: number;
  /**
   * How old the counting consumer's sums get before they are written, and how long a campaign's
   * rankings gather raises (`lib/analytics/window.ts`): the deployed figures of `lib/config.ts`
   * (30 s and 10 s) unless given.
   */
  analyticsFlushAgeMs?: number;
  analyticsBoardAgeMs?: number;
  /**
   * How often the rewards' scheduled release runs (`functions/scheduled/release-rewards.ts`, every
   * minute in AWS): `LOCAL_REWARD_RELEASE_MS` (10 s) unless given; `false`: never (a test that
   * runs the release itself).
   */
  rewardReleaseIntervalMs?: number | false;
  /**
   * `false`: no state file for `npm run api-key` to find the stack by. For the tests' stacks, which
   * would otherwise write and remove the one of an `npm start` of the same checkout (an in-memory
   * stack's state file is `.data/local-stack.json`, the default DATA_DIR's).
   */
  stateFile?: boolean;
}

/** One answered request of the local gateway. */
export interface RequestLogLine {
  method: string;
  /** The path as requested, query string excluded (it may hold a referred user's id). */
  path: string;
  status: number;
  ms: number;
  requestId: string;
}

export interface LocalStack {
  baseUrl: string;
  port: number;
  dynamodbEndpoint: string;
  tableName: string;
  queue: RunningQueue;
  apiKeys: Array<{ tenant: string; key: string }>;
  stop(): Promise<void>;
}

/** Settings from the environment, with the contract's defaults. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): LocalStackSettings {
  const port = env.PORT === undefined || env.PORT === '' ? 3000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new LocalStackError(`PORT must be a port number, got "${env.PORT}".`);
  }
  return {
    port,
    dataDir: env.DATA_DIR || '.data',
    devApiKeys: env.DEV_API_KEYS || undefined,
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    webhookRetryDelays: env.WEBHOOK_RETRY_DELAYS || undefined,
    throttles: parseLocalThrottle(env.LOCAL_THROTTLE),
    // The counting consumer writes its window's sums (series by link and referrer, rankings)
    // within a few seconds here, where the deployed stage takes up to a minute to keep a visit
    // cheap (docs/analytics.md): on one machine nobody pays per write, and a newcomer trying the
    // walkthrough should not wait a minute for a ranking. The deployed figures are one setting
    // away (`ANALYTICS_FLUSH_AGE_MS=30000 ANALYTICS_BOARD_AGE_MS=10000
    // ROLLUP_TUMBLING_WINDOW_SECONDS=45`); the bench runs with them.
    rollupTumblingWindowSeconds: LOCAL_TUMBLING_WINDOW_SECONDS,
    analyticsFlushAgeMs: LOCAL_FLUSH_AGE_MS,
    analyticsBoardAgeMs: 0,
    ...optionalNumber(env, 'ROLLUP_BATCHING_WINDOW_MS', 'rollupBatchingWindowMs'),
    ...optionalNumber(env, 'ROLLUP_TUMBLING_WINDOW_SECONDS', 'rollupTumblingWindowSeconds'),
    ...optionalNumber(env, 'ANALYTICS_FLUSH_AGE_MS', 'analyticsFlushAgeMs', true),
    ...optionalNumber(env, 'ANALYTICS_BOARD_AGE_MS', 'analyticsBoardAgeMs', true),
  };
}

/** `npm start`'s window for the counting consumer (see `settingsFromEnv`). */
export const LOCAL_TUMBLING_WINDOW_SECONDS = 10;
export const LOCAL_FLUSH_AGE_MS = 2_000;

function optionalNumber<K extends keyof LocalStackSettings>(
  env: NodeJS.ProcessEnv,
  name: string,
  key: K,
  zeroAllowed = false,
) {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !zeroAllowed))
    throw new LocalStackError(
      `${name} must be a ${zeroAllowed ? 'non-negative' : 'positive'} number, got "${raw}".`,
    );
  return { [key]: value } as Partial<LocalStackSettings>;
}

/**
 * `LOCAL_THROTTLE`: unset or `off` for no limits, `on` for the deployed stage's figures, or
 * `<class>=<rate>/<burst>` pairs replacing some classes' figures (the others deployed), e.g.
 * `api=2/5,docs=1/1` to see a 429 with a few requests.
 *
 * Off unless asked for: the deployed limits are per-route budgets that keep one runaway client
 * from spending the AWS account's quota. On one machine they would only turn a load or
 * concurrency test against `npm start` into 429s, where AWS would have scaled out.
 */
export function parseLocalThrottle(value: string | undefined): RouteThrottles | false {
  const setting = (value ?? '').trim().toLowerCase();
  if (setting === '' || setting === 'off') return false;
  const figures: Record<ThrottleClass, RouteThrottle> = { ...DEFAULT_ROUTE_THROTTLES };
  if (setting === 'on') return figures;
  for (const entry of value!.split(',').map((e) => e.trim())) {
    const m = /^([a-z]+)=(\d+(?:\.\d+)?)\/(\d+)$/.exec(entry);
    const name = m?.[1] as ThrottleClass | undefined;
    const rateLimit = Number(m?.[2]);
    const burstLimit = Number(m?.[3]);
    if (!name || !THROTTLE_CLASSES.includes(name) || !(rateLimit > 0) || !(burstLimit >= 1)) {
      throw new LocalStackError(
        `LOCAL_THROTTLE is "off", "on" or <class>=<rate>/<burst> pairs with a class of ${THROTTLE_CLASSES.join(', ')} and positive figures (e.g. api=2/5); "${entry}" is not.`,
      );
    }
    figures[name] = { rateLimit, burstLimit };
  }
  return figures;
}

export function parseDevApiKeys(value: string): Array<{ tenant: string; key: string }> {
  return value
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const colon = pair.indexOf(':');
      if (colon <= 0 || colon === pair.length - 1) {
        throw new LocalStackError(`DEV_API_KEYS entries are tenant:key pairs; "${pair}" is not.`);
      }
      return { tenant: pair.slice(0, colon), key: pair.slice(colon + 1) };
    });
}

/** Where the running stack writes its endpoints, so `npm run api-key` can find it. */
export function stateFile(dataDir: string): string {
  return join(dataDir === 'memory' ? join(projectRoot, '.data') : resolve(dataDir), 'local-stack.json');
}

/**
 * Start the whole service on this machine: DynamoDB Local (unless an endpoint is given), the
 * table, the local queue, the api keys and the gateway. Everything started is stopped by `stop()`.
 */
export async function startLocalStack(settings: LocalStackSettings): Promise<LocalStack> {
  const host = settings.host ?? '127.0.0.1';
  const inMemory = settings.dataDir === 'memory';
  const dataDir = inMemory ? undefined : resolve(settings.dataDir);
  const stoppers: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    stoppers.length = 0;
  };

  // Take the port first: a port in use should fail before Java is started, and a request sent
  // while the rest starts is answered at once (503 with Retry-After, `answerWhileStarting`)
  // instead of waiting for seconds.
  let dispatch: Server | undefined;
  const { createServer } = await import('node:http');
  const onRequest = settings.onRequest;
  const server = createServer((req, res) => {
    if (onRequest) {
      const started = performance.now();
      // The gateway passes its headers to writeHead, which does not keep them for getHeader.
      let requestId = '';
      const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
      res.writeHead = ((...args: unknown[]) => {
        const headers = args.find((a) => typeof a === 'object' && a !== null) as
          | Record<string, unknown>
          | undefined;
        requestId = String(headers?.['x-request-id'] ?? '');
        return writeHead(...args);
      }) as typeof res.writeHead;
      res.once('finish', () =>
        onRequest({
          method: req.method ?? '',
          path: (req.url ?? '').split('?')[0]!,
          status: res.statusCode,
          ms: performance.now() - started,
          requestId,
        }),
      );
    }
    if (dispatch) dispatch.emit('request', req, res);
    else answerWhileStarting(req, res);
  });
  // What API Gateway answers itself (oversized or malformed request lines and headers) still
  // gets the contract's error body here, instead of Node's bare 431/400. Node's parser refuses a
  // request line plus headers over `http.maxHeaderSize` (16 KiB unless --max-http-header-size
  // says otherwise) before any handler runs.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (!socket.writable) return void socket.destroy();
    const error =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new ApiError('request_headers_too_large', 'The request line and headers are too large.')
        : new ApiError('validation_failed', 'The HTTP request is malformed.');
    // No Host is parsed yet: the documentation link is relative.
    const body = JSON.stringify(errorBody(error));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\ncontent-type: ${JSON_CONTENT_TYPE}\r\n` +
        `x-request-id: ${randomUUID()}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new LocalStackError(
              `Port ${settings.port} on ${host} is already in use; set PORT to a free port.`,
            )
          : err.code === 'EACCES'
            ? new LocalStackError(
                `Port ${settings.port} on ${host} is not allowed; set PORT to a port above 1024.`,
              )
            : err,
      );
    });
    server.listen(settings.port, host, () => resolveListen());
  });
  stoppers.push(
    () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  );
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : settings.port;
  const baseUrl = `http://${host}:${port}`;
  settings.onListening?.(baseUrl);

  try {
    let dynamo: RunningDynamo | undefined;
    let endpoint = settings.dynamodbEndpoint;
    const step = settings.onStep ?? (() => undefined);
    if (!endpoint) {
      step('starting DynamoDB Local (a Java process; its first start takes several seconds)');
      dynamo = await startDynamoLocal(dataDir ? join(dataDir, 'dynamodb') : undefined);
      stoppers.push(() => dynamo!.stop());
      endpoint = dynamo.endpoint;
    }
    step(`creating the table ${LOCAL_TABLE_NAME} if it does not exist`);
    await prepareLocalTable(endpoint, LOCAL_TABLE_NAME, step);
    if (dataDir) mkdirSync(dataDir, { recursive: true });
    step('starting the local queues and restoring their journal');
    const queue = await startLocalQueue(dataDir ? join(dataDir, QUEUE_JOURNAL_FILE) : undefined);
    stoppers.push(() => queue.stop());

    // The handlers read their configuration at module load, exactly as in Lambda.
    Object.assign(process.env, {
      TABLE_NAME: LOCAL_TABLE_NAME,
      DYNAMODB_ENDPOINT: endpoint,
      STAGE: 'local',
      // Every link's share_url: this gateway's own address, as the contract says for the local stack.
      PUBLIC_BASE_URL: baseUrl,
      ALLOW_PRIVATE_WEBHOOKS: process.env.ALLOW_PRIVATE_WEBHOOKS ?? 'true',
      WEBHOOK_QUEUE_URL: queue.webhookQueueUrl,
      WEBHOOK_RETRY_QUEUE_URL: queue.webhookRetryQueueUrl,
      WEBHOOK_DLQ_URL: queue.webhookDlqUrl,
      PURGE_QUEUE_URL: queue.purgeQueueUrl,
      // Locally the follow-up sweep of a purge runs after a second, not a minute.
      PURGE_SWEEP_DELAY_SECONDS: process.env.PURGE_SWEEP_DELAY_SECONDS ?? '1',
      AWS_ENDPOINT_URL_SQS: queue.endpoint,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'WARN',
      // DynamoDB Local's own pauses (a JVM on a busy machine) are not an outage; a request's
      // 5 s deadline bounds the wait all the same.
      DYNAMODB_ATTEMPT_TIMEOUT_MS: process.env.DYNAMODB_ATTEMPT_TIMEOUT_MS ?? '4000',
      ...(settings.webhookRetryDelays ? { WEBHOOK_RETRY_DELAYS: settings.webhookRetryDelays } : {}),
      ...(settings.analyticsFlushAgeMs === undefined
        ? {}
        : { ANALYTICS_FLUSH_AGE_MS: String(settings.analyticsFlushAgeMs) }),
      ...(settings.analyticsBoardAgeMs === undefined
        ? {}
        : { ANALYTICS_BOARD_AGE_MS: String(settings.analyticsBoardAgeMs) }),
    });

    step('provisioning the api keys');
    const apiKeys = await provisionKeys(endpoint, settings.devApiKeys, dataDir);
    step('loading the handlers, the stream consumers and the queue consumers');

    const load = async (module: string) =>
      (await import(pathToFileURL(join(projectRoot, 'functions', `${module}.ts`)).href)) as {
        handler: unknown;
      };
    const authorizer = (await load('auth/authorizer')).handler as AuthorizerHandler;
    const fallback = (await load('http/fallback')).handler as LambdaHandler;
    // Webhooks: table stream -> first-attempt queue -> delivery, failures and slow endpoints ->
    // retry queue -> retry delivery, through the same handlers and lanes as in AWS
    // (lib/webhooks/lanes.ts); and campaign purges: stream (campaign REMOVE) -> purge queue ->
    // purge function.
    const logPollerError = (what: string) => (err: unknown) =>
      console.error(`local ${what} poller: ${err instanceof Error ? err.message : String(err)}`);
    // The table stream's three readers, as the three event source mappings in AWS, with their
    // filters: webhooks (the queue, action items) at once, the feed, the rollups and purge
    // triggers gathered for a second, in tumbling windows, and the rewards at once.
    const streamPollers =
      settings.streamPoller === false
        ? []
        : [
            startStreamPoller({
              endpoint,
              tableName: LOCAL_TABLE_NAME,
              handler: (await load('stream/enqueue-webhook-events')).handler as StreamHandler,
              filters: STREAM_CONSUMER_FILTERS,
              batchSize: WEBHOOK_STREAM_BATCHING.batchSize,
              checkpointFile: dataDir ? join(dataDir, 'stream-checkpoint.json') : undefined,
              onError: logPollerError('stream'),
            }),
            startStreamPoller({
              endpoint,
              tableName: LOCAL_TABLE_NAME,
              handler: (await load('stream/feed-and-rollups')).handler as StreamHandler,
              filters: FEED_AND_ROLLUP_FILTERS,
              batchSize: ROLLUP_STREAM_BATCHING.batchSize,
              batchingWindowMs:
                settings.rollupBatchingWindowMs ?? ROLLUP_STREAM_BATCHING.windowSeconds * 1000,
              tumblingWindowSeconds:
                settings.rollupTumblingWindowSeconds ?? ROLLUP_STREAM_BATCHING.tumblingWindowSeconds,
              checkpointFile: dataDir ? join(dataDir, 'rollup-stream-checkpoint.json') : undefined,
              onError: logPollerError('rollup stream'),
            }),
            // The rewards' reader: signups, conversions and refunds make and change rewards.
            startStreamPoller({
              endpoint,
              tableName: LOCAL_TABLE_NAME,
              handler: (await load('stream/create-rewards')).handler as StreamHandler,
              filters: REWARD_SOURCE_FILTERS,
              batchSize: REWARD_STREAM_BATCHING.batchSize,
              checkpointFile: dataDir ? join(dataDir, 'reward-stream-checkpoint.json') : undefined,
              onError: logPollerError('reward stream'),
            }),
          ];
    for (const poller of streamPollers) stoppers.push(() => poller.stop());
    const firstAttemptPoller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: queue.webhookQueueUrl,
      handler: (await load('queue/deliver-webhook')).handler as QueueHandler,
      concurrency: FIRST_ATTEMPT_CONCURRENCY,
      // A FIFO queue: one message of a group at a time.
      perGroup: 1,
      // With every slot busy, look again soon: a slot that frees should start the next first
      // attempt at once. (An idle poller waits in a long poll, woken by the next message.)
      idleMs: 25,
      onError: logPollerError('queue'),
    });
    stoppers.push(() => firstAttemptPoller.stop());
    const retryPoller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: queue.webhookRetryQueueUrl,
      handler: (await load('queue/retry-webhook')).handler as QueueHandler,
      concurrency: RETRY_CONCURRENCY,
      perGroup: RETRY_CONCURRENCY_PER_CAMPAIGN,
      onError: logPollerError('retry queue'),
    });
    stoppers.push(() => retryPoller.stop());
    const purge = (await load('queue/purge-campaign')).handler as (e: unknown, c: unknown) => Promise<never>;
    const purgePoller = startQueuePoller({
      endpoint: queue.endpoint,
      queueUrl: queue.purgeQueueUrl,
      // The purge paces itself by the invocation's remaining time, as under a 5-minute Lambda timeout.
      handler: (event) => purge(event, lambdaContext(randomUUID(), 'PurgeCampaign', 300_000)),
      concurrency: 1,
      onError: logPollerError('purge'),
    });
    stoppers.push(() => purgePoller.stop());
    if (settings.rewardReleaseIntervalMs !== false) {
      const release = (await load('scheduled/release-rewards')).handler as () => Promise<unknown>;
      stoppers.push(
        startTimer(
          settings.rewardReleaseIntervalMs ?? LOCAL_REWARD_RELEASE_MS,
          release,
          logPollerError('reward release'),
        ),
      );
    }

    const gateway = createGateway({
      authorizer,
      fallback,
      throttles: settings.throttles,
      loadHandler: async (route: RouteDefinition) => (await load(route.handler)).handler as LambdaHandler,
    });

    if (settings.stateFile !== false) {
      const state = stateFile(settings.dataDir);
      mkdirSync(join(state, '..'), { recursive: true });
      writeFileSync(
        state,
        JSON.stringify({
          baseUrl,
          dynamodbEndpoint: endpoint,
          tableName: LOCAL_TABLE_NAME,
          pid: process.pid,
        }),
      );
      stoppers.unshift(async () => rmSync(state, { force: true }));
    }
    // Ready: from here on requests reach the handlers.
    dispatch = gateway;

    return {
      baseUrl,
      port,
      dynamodbEndpoint: endpoint,
      tableName: LOCAL_TABLE_NAME,
      queue,
      apiKeys,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The table as the definition wants it: created when missing; on one kept from an earlier version,
 * every index whose definition changed rebuilt (`ensureTable`). A table whose GSI2 is stale was
 * made before GSI2 held the campaign list (README, "Decisions"): its campaigns get their list keys
 * first, so that the rebuilt index lists them all. A table without the series layout's marker
 * may hold analytics series an item per hour and per day: they are moved into day items
 * (`migrateSeriesItems`; on a new table, a Scan of nothing and the marker), and then day items
 * written before they kept their day totals get them (`backfillSeriesDayTotals`); referred users
 * written before their list existed get its keys (`backfillReferredUserListKeys`). Every step is
 * idempotent, and a start cut short does what is left again.
 */
export async function prepareLocalTable(
  endpoint: string,
  tableName: string,
  step: (message: string) => void = () => undefined,
): Promise<void> {
  await ensureTable(endpoint, tableName, {
    onStep: step,
    beforeIndexRebuild: async (stale) => {
      if (!stale.includes(GSI2.indexName)) return;
      const db = createDocumentClient(endpoint, undefined, 30_000);
      try {
        const { found, updated } = await backfillCampaignListKeys(db, tableName);
        step(`campaign list: ${updated} of ${found} campaigns written before it got their list keys`);
      } finally {
        db.destroy();
      }
    },
  });
  const db = createDocumentClient(endpoint, undefined, 30_000);
  try {
    if (!(await seriesLayoutMigrated(db, tableName))) {
      const moved = await migrateSeriesItems(db, tableName);
      if (moved.hours + moved.days > 0) step(describeSeriesMigration(moved));
    }
    // After the move above, which adds hours alone.
    if (!(await seriesDayTotalsKept(db, tableName))) {
      const written = await backfillSeriesDayTotals(db, tableName);
      if (written > 0) step(`analytics series: ${written} day items given their day totals`);
    }
    if (!(await rankingsMigrated(db, tableName))) {
      const moved = await migrateRankings(db, tableName);
      if (moved > 0) step(`analytics rankings: ${moved} entries moved to their boards`);
    }
    if (!(await referredUserListMigrated(db, tableName))) {
      const { found, updated } = await backfillReferredUserListKeys(db, tableName);
      if (found > 0) step(`referred-user list: ${updated} of ${found} referred users given their list keys`);
    }
  } finally {
    db.destroy();
  }
}

/**
 * `DEV_API_KEYS` keys are stored exactly as given. Without it, one key for tenant `dev` is made
 * on the first start, kept in the data directory and reused afterwards. A revoked key stays
 * revoked: the generated one is replaced by a new key, a given one stops the start.
 */
async function provisionKeys(
  endpoint: string,
  devApiKeys: string | undefined,
  dataDir: string | undefined,
): Promise<Array<{ tenant: string; key: string }>> {
  const db = createDocumentClient(endpoint);
  const store = new ApiKeyStore(db, LOCAL_TABLE_NAME);
  try {
    const file = !devApiKeys && dataDir ? join(dataDir, 'dev-api-key.json') : undefined;
    const newDevKey = () => {
      const dev = { tenant: 'dev', key: generateApiKey() };
      if (file) writeFileSync(file, JSON.stringify(dev), { mode: 0o600 });
      return dev;
    };
    let wanted: Array<{ tenant: string; key: string }>;
    if (devApiKeys) wanted = parseDevApiKeys(devApiKeys);
    else if (file && existsSync(file))
      wanted = [JSON.parse(readFileSync(file, 'utf8')) as { tenant: string; key: string }];
    else wanted = [newDevKey()];
    for (let i = 0; i < wanted.length; i++) {
      const { tenant, key } = wanted[i]!;
      const stored = await store.status(key);
      if (stored.state !== 'unknown' && stored.tenant !== tenant) {
        throw new LocalStackError(
          `The key given for tenant "${tenant}" is a key of tenant "${stored.tenant}".`,
        );
      }
      if (stored.state === 'live') continue;
      if (stored.state === 'revoked') {
        if (devApiKeys) {
          throw new LocalStackError(
            `The key given for tenant "${tenant}" in DEV_API_KEYS was revoked; revoked keys stay revoked, give another one.`,
          );
        }
        wanted[i] = newDevKey();
      }
      try {
        await store.create(wanted[i]!.tenant, wanted[i]!.key);
      } catch (err) {
        throw new LocalStackError(
          `Cannot provision the key for tenant "${tenant}": ${(err as Error).message}`,
        );
      }
    }
    return wanted;
  } finally {
    db.destroy();
  }
}

/**
 * The rewards' release runs every 10 s locally (every minute in AWS, `infra/rewards.ts`): a
 * reward whose hold ends shows as approved within seconds, and a run with nothing due is one Query.
 */
export const LOCAL_REWARD_RELEASE_MS = 10_000;

/**
 * Run `job` every `intervalMs`, one run at a time (the next is scheduled when one ends), as an
 * EventBridge rule runs a function. Returns the stop, which waits for a run in progress.
 */
function startTimer(intervalMs: number, job: () => Promise<unknown>, onError: (err: unknown) => void) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const tick = () => {
    running = job()
      .then(() => undefined, onError)
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
