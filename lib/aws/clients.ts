/**
 * The service's AWS SDK clients, DynamoDB and SQS, for the functions, the local stack and the
 * tools alike: every client the service makes is made here, with the same bounded attempts, and
 * pointed at a local endpoint the same way (`lib/config.ts`).
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { config } from '../config.ts';
import { DeadlineExceededError, remainingMs } from './deadline.ts';

/**
 * One attempt's limit once connected: DynamoDB answers in milliseconds when it is well. The local
 * stack raises it (`DYNAMODB_ATTEMPT_TIMEOUT_MS`): DynamoDB Local on a busy laptop or CI machine
 * has pauses of its own, and a request's deadline bounds the wait there anyway.
 */
export const ATTEMPT_TIMEOUT_MS = 1_500;

/** Read when a client is made (the local stack sets the variable after this module loads). */
const attemptTimeoutFromEnv = () => config.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
export const CONNECT_TIMEOUT_MS = 1_000;
/** Attempts per call (the first and two retries, with the SDK's jittered backoff between). */
export const MAX_ATTEMPTS = 3;

/**
 * The SDK's HTTP handler with each attempt cut at the current deadline: an attempt never outlives
 * its request, and a retry that would start after the deadline does not start (the SDK does not
 * retry `DeadlineExceededError`, which it does not know as transient).
 */
class DeadlineBoundHandler extends NodeHttpHandler {
  constructor(readonly attemptTimeoutMs: number) {
    super({
      // An attempt timeout raised for a busy machine (the local stack, tests, tools) raises the
      // connection's too: a loaded CI machine once took DynamoDB Local over 1 s to accept.
      connectionTimeout: Math.max(
        CONNECT_TIMEOUT_MS,
        attemptTimeoutMs > ATTEMPT_TIMEOUT_MS ? attemptTimeoutMs : 0,
      ),
      requestTimeout: attemptTimeoutMs,
      // A timed-out attempt is an error to retry, not a warning in the log.
      throwOnRequestTimeout: true,
    });
  }

  override handle(...[request, options]: Parameters<NodeHttpHandler['handle']>) {
    const remaining = remainingMs();
    if (remaining === undefined) return super.handle(request, options);
    if (remaining <= 0) return Promise.reject(new DeadlineExceededError());
    return super.handle(request, {
      ...options,
      requestTimeout: Math.min(options?.requestTimeout ?? this.attemptTimeoutMs, remaining),
    });
  }
}

/**
 * The SDK's default logger writes nothing but has an `info`, and its logger middleware builds the
 * log entry whenever `logger.info` exists: every call walks its input and output through the
 * operation's schema to mask sensitive fields, for a line nobody writes. Measured on the local
 * stack under visits and actions, that walk was 3 % of the process's CPU. Without `info` the
 * entry is never built; warnings and errors go nowhere, as with the default.
 */
const QUIET_SDK_LOGGER = {
  debug() {},
  warn() {},
  error() {},
} as unknown as DynamoDBClientConfig['logger'];

/**
 * Client settings every AWS SDK client of the service takes; tools doing slow administrative
 * calls (creating a table) pass a longer attempt timeout.
 */
export function boundedClientConfig(attemptTimeoutMs = attemptTimeoutFromEnv()) {
  return {
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: new DeadlineBoundHandler(attemptTimeoutMs),
    logger: QUIET_SDK_LOGGER,
  };
}

/**
 * Client settings: bounded attempts (above), and a local endpoint when one is configured
 * (local stack, tests, CLI).
 */
export function dynamoClientConfig(
  endpoint = config.dynamodbEndpoint,
  region?: string,
  attemptTimeoutMs?: number,
): DynamoDBClientConfig {
  const resolvedRegion = region ?? config.region;
  const bounded = boundedClientConfig(attemptTimeoutMs);
  if (!endpoint) return resolvedRegion ? { ...bounded, region: resolvedRegion } : bounded;
  return {
    ...bounded,
    endpoint,
    region: resolvedRegion ?? 'us-east-1',
    credentials: config.localCredentials,
  };
}

/**
 * A document client; `attemptTimeoutMs` is for tools and tests that load or check data in bulk,
 * which a machine busy with a test run can make slower than a request's attempt may be.
 */
export function createDocumentClient(
  endpoint?: string,
  region?: string,
  attemptTimeoutMs?: number,
): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient(dynamoClientConfig(endpoint, region, attemptTimeoutMs)),
    {
      marshallOptions: { removeUndefinedValues: true },
    },
  );
}

/**
 * An SQS client. In Lambda the defaults apply (region and role credentials from the environment)
 * with bounded attempts. On the local stack `AWS_ENDPOINT_URL_SQS` (or `endpoint`) points at the
 * local queue, which takes any credentials. The local stack's own pollers and tools pass
 * `bounded: false`: a receive may wait longer than one request's attempt may.
 */
export function createSqsClient(options: { endpoint?: string; bounded?: boolean } = {}): SQSClient {
  const endpoint = options.endpoint ?? config.sqsEndpoint;
  const bounded = options.bounded === false ? {} : boundedClientConfig();
  if (!endpoint) return new SQSClient(bounded);
  return new SQSClient({
    ...bounded,
    endpoint,
    region: config.region ?? 'us-east-1',
    credentials: config.localCredentials,
  });
}
