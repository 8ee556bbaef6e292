import { Token } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import type { ThrottleClass } from '../lib/routes.ts';
import {
  DEFAULT_ROUTE_THROTTLES,
  type RouteThrottle,
  type RouteThrottles,
  THROTTLE_CLASSES,
} from '../lib/throttling.ts';

/**
 * Operator settings of a stage, from CDK context (`-c key=value` or cdk.json's `context`), each
 * with a default that is safe for production. `-c` values arrive as strings; they are checked
 * here so that a typo fails the synth instead of deploying an API without limits.
 */
export interface StackSettings {
  /**
   * The stage's default throttling: what a route without figures of its own would get (every
   * route of the table and `$default` have their own, below).
   */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** Per-route throttling by throttle class: each route key gets its class's figures. */
  readonly routeThrottles: RouteThrottles;
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

/** The context keys of each throttle class's figures, e.g. `-c redirectThrottleRateLimit=3000`. */
export const ROUTE_THROTTLE_CONTEXT_KEYS: Readonly<
  Record<ThrottleClass, { readonly rateLimit: string; readonly burstLimit: string }>
> = {
  redirect: { rateLimit: 'redirectThrottleRateLimit', burstLimit: 'redirectThrottleBurstLimit' },
  api: { rateLimit: 'apiThrottleRateLimit', burstLimit: 'apiThrottleBurstLimit' },
  docs: { rateLimit: 'docsThrottleRateLimit', burstLimit: 'docsThrottleBurstLimit' },
};

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
  const routeThrottles = Object.fromEntries(
    THROTTLE_CLASSES.map((throttleClass): [ThrottleClass, RouteThrottle] => {
      const keys = ROUTE_THROTTLE_CONTEXT_KEYS[throttleClass];
      const defaults = DEFAULT_ROUTE_THROTTLES[throttleClass];
      return [
        throttleClass,
        {
          rateLimit: positiveNumber(keys.rateLimit, ctx(keys.rateLimit), defaults.rateLimit),
          burstLimit: positiveInteger(keys.burstLimit, ctx(keys.burstLimit), defaults.burstLimit),
        },
      ];
    }),
  ) as Record<ThrottleClass, RouteThrottle>;
  return {
    throttle: { rateLimit, burstLimit },
    routeThrottles,
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
