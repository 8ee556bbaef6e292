import { Logger } from '@aws-lambda-powertools/logger';
import { config } from '../config.ts';

/** Keys whose values are credentials, in any spelling a header, body or error might use. */
const SECRET_KEY = /^(api[-_]?key|authorization|x-api-key|webhook[-_]?secret|secret)$/i;
/**
 * Credential values, wherever they appear: an api key (`rk_` + 43 base64url chars, see
 * `lib/auth/api-keys.ts`) or a webhook secret (`whsec_` + base64), e.g. quoted in an error message.
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

/**
 * Structured JSON logs (Powertools). Every line carries the service; the HTTP middleware adds the
 * request id, route and tenant. Never log the api-key or a webhook secret: request headers are not
 * logged at all, only ids, route and status, and `redactSecrets` masks what slips through.
 */
export const logger = new Logger({
  serviceName: config.serviceName,
  logLevel: config.logLevel,
  jsonReplacerFn: redactSecrets,
});
