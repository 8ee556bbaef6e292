import { Token } from 'aws-cdk-lib';
import type { Node } from 'constructs';

/**
 * Operator settings of a stage, from CDK context (`-c key=value` or cdk.json's `context`), each
 * with a default that is safe for production. `-c` values arrive as strings; they are checked
 * here so that a typo fails the synth instead of deploying an API without limits.
 */
export interface StackSettings {
  /** Default-stage throttling of the HTTP API: steady requests per second and burst size. */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Browser origins allowed by CORS; empty means no CORS configuration at all. */
  readonly corsOrigins: readonly string[];
  /** SNS topic that receives every alarm (and its return to OK); none means alarms only. */
  readonly alarmTopicArn?: string;
}

/** The context keys, as an operator types them. */
export const CONTEXT_KEYS = {
  rateLimit: 'throttleRateLimit',
  burstLimit: 'throttleBurstLimit',
  corsOrigins: 'corsOrigins',
  alarmTopicArn: 'alarmTopicArn',
} as const;

/**
 * 1,000 requests/s steady and 2,000 burst: far above what one tenant's integration needs, far
 * below the account's regional limit (10,000/s shared by every API in the account and region), so
 * one runaway client is slowed down before it can starve other APIs or run up the Lambda bill.
 */
export const DEFAULT_THROTTLE = { rateLimit: 1000, burstLimit: 2000 } as const;

export function readStackSettings(node: Node): StackSettings {
  const ctx = (key: string): unknown => node.tryGetContext(key);
  const rateLimit = positiveNumber(
    CONTEXT_KEYS.rateLimit,
    ctx(CONTEXT_KEYS.rateLimit),
    DEFAULT_THROTTLE.rateLimit,
  );
  const burstLimit = positiveInteger(
    CONTEXT_KEYS.burstLimit,
    ctx(CONTEXT_KEYS.burstLimit),
    DEFAULT_THROTTLE.burstLimit,
  );
  return {
    throttle: { rateLimit, burstLimit },
    corsOrigins: parseCorsOrigins(ctx(CONTEXT_KEYS.corsOrigins)),
    alarmTopicArn: parseTopicArn(ctx(CONTEXT_KEYS.alarmTopicArn)),
  };
}

const isUnset = (value: unknown) => value === undefined || value === null || value === '';

function positiveNumber(key: string, value: unknown, fallback: number): number {
  if (isUnset(value)) return fallback;
  const n = typeof value === 'number' ? value : Number(String(value).trim());
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`-c ${key}=${String(value)}: expected a positive number`);
  return n;
}

function positiveInteger(key: string, value: unknown, fallback: number): number {
  const n = positiveNumber(key, value, fallback);
  if (!Number.isInteger(n)) throw new Error(`-c ${key}=${String(value)}: expected a whole number`);
  return n;
}

/**
 * `https://app.example.com,https://admin.example.com` (a comma list, or a JSON array in cdk.json).
 * Each entry must be an origin (scheme, host, optional port; no path) or `*`.
 */
export function parseCorsOrigins(value: unknown): string[] {
  if (isUnset(value)) return [];
  const list = Array.isArray(value) ? value.map(String) : String(value).split(',');
  const origins = list.map((o) => o.trim()).filter((o) => o !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new Error(
        `-c ${CONTEXT_KEYS.corsOrigins}: ${JSON.stringify(origin)} is not an origin like https://app.example.com`,
      );
    }
  }
  return origins;
}

export function parseTopicArn(value: unknown): string | undefined {
  if (isUnset(value)) return undefined;
  const arn = String(value).trim();
  if (!Token.isUnresolved(arn) && !/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]{1,256}$/.test(arn)) {
    throw new Error(`-c ${CONTEXT_KEYS.alarmTopicArn}: ${JSON.stringify(arn)} is not an SNS topic ARN`);
  }
  return arn;
}
