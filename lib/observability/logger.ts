import { config } from '../config.ts';

/** Keys whose values are credentials, in any spelling a header, body or error might use. */
const SECRET_KEY = /^(api[-_]?key|authorization|x-api-key|webhook[-_]?secret|secret)$/i;
/**
 * Credential values, wherever they appear: an api key (`rk_` + 43 base64url chars, see
 * `lib/domain/api-key-rules.ts`) or a webhook secret (`whsec_` + base64), e.g. quoted in an error
 * message.
 */
const SECRET_VALUE = /\b(rk_[A-Za-z0-9_-]{20,}|whsec_[A-Za-z0-9+/=]{20,})/g;

export const REDACTED = '[redacted]';

/**
 * The last line of defence for "never log the api-key or a webhook secret": the code logs no
 * headers and no campaign bodies, and this replacer (run on every key of every log line, the
 * child loggers' included) masks anything that still looks like a credential.
 */
export function redactSecrets(key: string, value: unknown): unknown {
  if (key && SECRET_KEY.test(key) && value !== null && value !== undefined && value !== '') return REDACTED;
  if (typeof value === 'string' && value.length >= 23) return value.replace(SECRET_VALUE, REDACTED);
  return value;
}

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
const RANK: Record<LogLevel, number> = { DEBUG: 8, INFO: 12, WARN: 16, ERROR: 20 };

/** An Error as a log field, as Powertools Logger writes one: name, location, message, stack. */
function errorFields(error: Error): Record<string, unknown> {
  const location = /\(?([^\s()]+:\d+:\d+)\)?$/m.exec(error.stack?.split('\n')[1] ?? '')?.[1] ?? '';
  return { name: error.name, location, message: error.message, stack: error.stack, cause: error.cause };
}

/** `redactSecrets`, with Error values anywhere in a line written as their fields. */
function replacer(key: string, value: unknown): unknown {
  return redactSecrets(key, value instanceof Error ? errorFields(value) : value);
}

/**
 * Structured JSON logs, one line per entry, in the shape Powertools Logger writes (`level`,
 * `message`, `timestamp`, `service`, `xray_trace_id`, then the entry's and the logger's keys), so
 * CloudWatch Logs Insights queries written for Powertools work on them. Never log the api-key or a
 * webhook secret: request headers are not logged at all, only ids, route and status, and
 * `redactSecrets` masks what slips through.
 *
 * Written here rather than taken from `@aws-lambda-powertools/logger`: that package (with its
 * commons) is 20 KiB of every function's bundle, 40 % of all the code our functions carry beyond
 * their bare-SDK floor, for the four methods below; each function's bundle and cold import are
 * held within 15 % of that floor (`npm run bench`, `test/unit/bundle-size.test.ts`).
 */
export class Logger {
  readonly #keys: Record<string, unknown> = {};
  /** Shared with the children, so a level set on the root applies to every logger. */
  readonly #level: { rank: number };

  constructor(level: { rank: number } = { rank: RANK[config.logLevel] }) {
    this.#level = level;
  }

  debug(message: string, extra?: object | Error): void {
    this.#write('DEBUG', message, extra);
  }
  info(message: string, extra?: object | Error): void {
    this.#write('INFO', message, extra);
  }
  warn(message: string, extra?: object | Error): void {
    this.#write('WARN', message, extra);
  }
  error(message: string, extra?: object | Error): void {
    this.#write('ERROR', message, extra);
  }

  /** Keys added to every later line of this logger (the request's id, route and tenant). */
  appendKeys(keys: Record<string, unknown>): void {
    Object.assign(this.#keys, keys);
  }
  resetKeys(): void {
    for (const key of Object.keys(this.#keys)) delete this.#keys[key];
  }
  /** A logger with keys of its own, at the level of this one. */
  createChild(): Logger {
    return new Logger(this.#level);
  }
  setLogLevel(level: LogLevel): void {
    this.#level.rank = RANK[level];
  }
  getLevelName(): LogLevel {
    return (Object.keys(RANK) as LogLevel[]).find((l) => RANK[l] === this.#level.rank) ?? 'INFO';
  }

  #write(level: LogLevel, message: string, extra: object | Error | undefined): void {
    if (RANK[level] < this.#level.rank) return;
    const line: Record<string, unknown> = {
      level,
      message,
      timestamp: new Date().toISOString(),
      service: config.serviceName,
      xray_trace_id: config.xrayTraceId,
      ...this.#keys,
      ...(extra instanceof Error ? { error: extra } : extra),
    };
    let text: string;
    try {
      text = JSON.stringify(line, replacer);
    } catch {
      // A field that cannot be written (a cycle, a BigInt): the line without the fields.
      const { level: l, timestamp, service } = line;
      text = JSON.stringify(
        { level: l, message, timestamp, service, log_error: 'fields not serializable' },
        replacer,
      );
    }
    (RANK[level] >= RANK.WARN ? process.stderr : process.stdout).write(`${text}\n`);
  }
}

export const logger = new Logger();
