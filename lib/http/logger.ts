import { Logger } from '@aws-lambda-powertools/logger';

/**
 * Structured JSON logs (Powertools). Never log the api-key or a webhook secret: request headers
 * are not logged at all, only ids, route and status.
 */
export const logger = new Logger({
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'referral-api',
  logLevel: (process.env.LOG_LEVEL as 'INFO' | 'DEBUG' | 'WARN' | 'ERROR' | undefined) ?? 'INFO',
});
