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
  /** SNS topic that receives every alarm (and its return to OK). */
  readonly alarmTopicArn?: string;
  /**
   * `-c alarms=none`: the operator's explicit choice to deploy alarms that notify nobody. Without it
   * a protected stage (prod) refuses to synthesize when no `alarmTopicArn` is given.
   */
  readonly alarmsWithoutTopic: boolean;
  /**
   * Which alarms the stage gets: `full` (the default, and the only one a protected stage takes) or
   * `minimal` (`-c alarmSet=minimal`, for dev: the service-wide alarms and those guarding data,
   * without the per-route and per-index ones; docs/deploying.md lists both and their cost).
   */
  readonly alarmSet: AlarmSet;
  /** p99 duration (ms) above which a route function's latency alarm fires, by the route's class. */
  readonly latencyP99Ms: Readonly<Record<ThrottleClass, number>>;
  /** Lambda active tracing (X-Ray) on every function. */
  readonly tracing: boolean;
  /** Extra tags on every resource, for cost allocation (`-c costTags=team=growth,project=referrals`). */
  readonly costTags: Readonly<Record<string, string>>;
  /**
   * A customer-managed KMS key for the table and the log groups: `create` makes one in the stack
   * (`-c kms=true`), `keyArn` uses an existing one (`-c kmsKey=arn:aws:kms:…`); AWS-owned keys when
   * omitted.
   */
  readonly kms?: { readonly create: true } | { readonly keyArn: string };
  /**
   * The API served on a domain of the operator's (`-c domainName=go.example.com -c
   * certificateArn=…`), which every link's `share_url` is then built on; with `-c hostedZoneId`
   * and `-c hostedZoneName`, the alias records in that Route 53 zone too.
   */
  readonly customDomain?: CustomDomainSettings;
}

export interface CustomDomainSettings {
  /** The host name, e.g. `go.example.com`. */
  readonly domainName: string;
  /** An ACM certificate for the name, in the stack's region (a regional endpoint's). */
  readonly certificateArn: string;
  /** A public hosted zone that gets the A and AAAA alias records; none when omitted. */
  readonly hostedZone?: { readonly id: string; readonly name: string };
}

/** The alarm sets of `-c alarmSet=`; the first is the default. */
export const ALARM_SETS = ['full', 'minimal'] as const;
export type AlarmSet = (typeof ALARM_SETS)[number];

/** The context keys, as an operator types them. */
export const CONTEXT_KEYS = {
  rateLimit: 'throttleRateLimit',
  burstLimit: 'throttleBurstLimit',
  corsOrigins: 'corsOrigins',
  alarmTopicArn: 'alarmTopicArn',
  alarms: 'alarms',
  alarmSet: 'alarmSet',
  tracing: 'tracing',
  costTags: 'costTags',
  kms: 'kms',
  kmsKey: 'kmsKey',
  domainName: 'domainName',
  certificateArn: 'certificateArn',
  hostedZoneId: 'hostedZoneId',
  hostedZoneName: 'hostedZoneName',
} as const;

/** The context keys of each route class's latency threshold, e.g. `-c apiLatencyP99Ms=400`. */
export const LATENCY_CONTEXT_KEYS: Readonly<Record<ThrottleClass, string>> = {
  redirect: 'redirectLatencyP99Ms',
  api: 'apiLatencyP99Ms',
  docs: 'docsLatencyP99Ms',
};

/**
 * p99 Lambda duration per route class that raises a route's latency alarm (sustained 15 minutes,
 * once the route has traffic). Warm handlers answer in tens of milliseconds (a few DynamoDB calls;
 * `bench/results.md` measures p99 ≤ 55 ms locally), so these leave room for cold starts and
 * DynamoDB's slower moments and still catch a real regression:
 * - `redirect` 250 ms: the visitor waits for the 302 before the landing page even starts.
 * - `api` 500 ms: server-to-server calls, the authorizer included (its own function, same class).
 * - `docs` 1,000 ms: the reference page and its 1 MB script, gzipped and base64-encoded.
 */
export const DEFAULT_LATENCY_P99_MS: Readonly<Record<ThrottleClass, number>> = {
  redirect: 250,
  api: 500,
  docs: 1000,
};

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
  const latencyP99Ms = Object.fromEntries(
    THROTTLE_CLASSES.map((c): [ThrottleClass, number] => [
      c,
      positiveNumber(LATENCY_CONTEXT_KEYS[c], ctx(LATENCY_CONTEXT_KEYS[c]), DEFAULT_LATENCY_P99_MS[c]),
    ]),
  ) as Record<ThrottleClass, number>;
  const alarmTopicArn = parseTopicArn(ctx(CONTEXT_KEYS.alarmTopicArn));
  const alarmsWithoutTopic = parseAlarmsOptOut(ctx(CONTEXT_KEYS.alarms));
  if (alarmTopicArn && alarmsWithoutTopic) {
    throw new Error(
      `-c ${CONTEXT_KEYS.alarms}=none and -c ${CONTEXT_KEYS.alarmTopicArn} contradict each other: give one of them`,
    );
  }
  return {
    throttle: { rateLimit, burstLimit },
    routeThrottles,
    corsOrigins: parseCorsOrigins(ctx(CONTEXT_KEYS.corsOrigins)),
    alarmTopicArn,
    alarmsWithoutTopic,
    alarmSet: parseAlarmSet(ctx(CONTEXT_KEYS.alarmSet)),
    latencyP99Ms,
    tracing: parseBoolean(CONTEXT_KEYS.tracing, ctx(CONTEXT_KEYS.tracing)),
    costTags: parseCostTags(ctx(CONTEXT_KEYS.costTags)),
    kms: parseKms(ctx(CONTEXT_KEYS.kms), ctx(CONTEXT_KEYS.kmsKey)),
    customDomain: parseCustomDomain({
      domainName: ctx(CONTEXT_KEYS.domainName),
      certificateArn: ctx(CONTEXT_KEYS.certificateArn),
      hostedZoneId: ctx(CONTEXT_KEYS.hostedZoneId),
      hostedZoneName: ctx(CONTEXT_KEYS.hostedZoneName),
    }),
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

/** `-c alarms=none`, the explicit opt-out; unset means "notify" (and prod then needs a topic). */
export function parseAlarmsOptOut(value: unknown): boolean {
  if (isUnset(value)) return false;
  if (String(value).trim() === 'none') return true;
  throw new Error(
    `-c ${CONTEXT_KEYS.alarms}=${String(value)}: the only value is "none" (alarms that notify nobody); to notify, give -c ${CONTEXT_KEYS.alarmTopicArn}=<SNS topic ARN>`,
  );
}

/** `full` or `minimal`; `full` when unset. */
export function parseAlarmSet(value: unknown): AlarmSet {
  if (isUnset(value)) return ALARM_SETS[0];
  const set = String(value).trim();
  if ((ALARM_SETS as readonly string[]).includes(set)) return set as AlarmSet;
  throw new Error(`-c ${CONTEXT_KEYS.alarmSet}=${String(value)}: expected one of ${ALARM_SETS.join(', ')}`);
}

/** `true`/`false` (a string from `-c`, a boolean from cdk.json); false when unset. */
export function parseBoolean(key: string, value: unknown): boolean {
  if (isUnset(value)) return false;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new Error(`-c ${key}=${String(value)}: expected true or false`);
}

/** What AWS accepts in a tag key or value (letters, digits, spaces and `_ . : / = + - @`). */
const TAG_CHARS = /^[\p{L}\p{Z}\p{N}_.:/=+\-@]*$/u;
/** Tags the stack sets itself, which a cost tag must not replace. */
export const RESERVED_TAG_KEYS = ['service', 'stage'] as const;

/**
 * `team=growth,project=referrals` (a comma list of key=value, or an object in cdk.json). Keys are
 * 1-128 characters, values up to 256, both of the characters AWS allows; `aws:` is AWS's own prefix
 * and `service`/`stage` are set by the stack.
 */
export function parseCostTags(value: unknown): Record<string, string> {
  if (isUnset(value)) return {};
  const entries: Array<[string, string]> =
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)])
      : String(value)
          .split(',')
          .filter((pair) => pair.trim() !== '')
          .map((pair) => {
            const eq = pair.indexOf('=');
            if (eq < 0)
              throw new Error(`-c ${CONTEXT_KEYS.costTags}: ${JSON.stringify(pair)} is not key=value`);
            return [pair.slice(0, eq), pair.slice(eq + 1)];
          });
  const tags: Record<string, string> = {};
  for (const [rawKey, rawValue] of entries) {
    const key = rawKey.trim();
    const tagValue = rawValue.trim();
    const bad = (why: string) => new Error(`-c ${CONTEXT_KEYS.costTags}: tag ${JSON.stringify(key)} ${why}`);
    if (key === '' || key.length > 128 || !TAG_CHARS.test(key)) throw bad('is not a valid tag key');
    if (tagValue.length > 256 || !TAG_CHARS.test(tagValue)) throw bad('has an invalid value');
    if (key.toLowerCase().startsWith('aws:')) throw bad('uses the reserved aws: prefix');
    if ((RESERVED_TAG_KEYS as readonly string[]).includes(key)) throw bad('is set by the stack itself');
    if (key in tags) throw bad('is given twice');
    tags[key] = tagValue;
  }
  return tags;
}

/** `-c kms=true` (a key made by the stack) or `-c kmsKey=<key ARN>` (an existing key). */
export function parseKms(
  create: unknown,
  keyArn: unknown,
): { readonly create: true } | { readonly keyArn: string } | undefined {
  const wanted = parseBoolean(CONTEXT_KEYS.kms, create);
  if (isUnset(keyArn)) return wanted ? { create: true } : undefined;
  const arn = String(keyArn).trim();
  if (!isUnset(create) && !wanted) {
    throw new Error(`-c ${CONTEXT_KEYS.kms}=false and -c ${CONTEXT_KEYS.kmsKey} contradict each other`);
  }
  if (!Token.isUnresolved(arn) && !/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/.test(arn)) {
    throw new Error(
      `-c ${CONTEXT_KEYS.kmsKey}: ${JSON.stringify(arn)} is not a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)`,
    );
  }
  return { keyArn: arn };
}

/** A DNS name of at least two labels, lowercase, without a trailing dot (what API Gateway takes). */
const HOST_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * `-c domainName` with `-c certificateArn` (both or neither), and optionally `-c hostedZoneId`
 * with `-c hostedZoneName` (both or neither; the zone given by its attributes, so synth still
 * needs no lookup). The domain must be the zone's name or under it.
 */
export function parseCustomDomain(values: {
  domainName: unknown;
  certificateArn: unknown;
  hostedZoneId: unknown;
  hostedZoneName: unknown;
}): CustomDomainSettings | undefined {
  const k = CONTEXT_KEYS;
  const text = (value: unknown) => (isUnset(value) ? undefined : String(value).trim());
  const domainName = text(values.domainName)?.toLowerCase().replace(/\.$/, '');
  const certificateArn = text(values.certificateArn);
  const zoneId = text(values.hostedZoneId);
  const zoneName = text(values.hostedZoneName)?.toLowerCase().replace(/\.$/, '');
  if (!domainName && !certificateArn) {
    if (zoneId || zoneName) {
      throw new Error(
        `-c ${k.hostedZoneId} and -c ${k.hostedZoneName} need -c ${k.domainName} and -c ${k.certificateArn}`,
      );
    }
    return undefined;
  }
  if (!domainName || !certificateArn) {
    throw new Error(`-c ${k.domainName} and -c ${k.certificateArn} go together: give both, or neither`);
  }
  if (!HOST_NAME.test(domainName)) {
    throw new Error(
      `-c ${k.domainName}: ${JSON.stringify(domainName)} is not a domain name like go.example.com`,
    );
  }
  if (
    !Token.isUnresolved(certificateArn) &&
    !/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/.test(certificateArn)
  ) {
    throw new Error(
      `-c ${k.certificateArn}: ${JSON.stringify(certificateArn)} is not an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)`,
    );
  }
  if (!zoneId && !zoneName) return { domainName, certificateArn };
  if (!zoneId || !zoneName) {
    throw new Error(`-c ${k.hostedZoneId} and -c ${k.hostedZoneName} go together: give both, or neither`);
  }
  if (!/^Z[A-Z0-9]{1,31}$/.test(zoneId)) {
    throw new Error(`-c ${k.hostedZoneId}: ${JSON.stringify(zoneId)} is not a Route 53 hosted zone id (Z…)`);
  }
  if (domainName !== zoneName && !domainName.endsWith(`.${zoneName}`)) {
    throw new Error(`-c ${k.domainName}: ${domainName} is not in the hosted zone ${zoneName}`);
  }
  return { domainName, certificateArn, hostedZone: { id: zoneId, name: zoneName } };
}
