import { SQSClient } from '@aws-sdk/client-sqs';
import { boundedClientConfig } from '../db/client-config.ts';

/**
 * The SQS client of the webhook code. In Lambda the defaults apply (region and role credentials
 * from the environment). On the local stack `AWS_ENDPOINT_URL_SQS` points at the local queue,
 * which takes any credentials, so fixed local ones are used and no AWS profile is needed.
 */
export function createSqsClient(): SQSClient {
  const endpoint = process.env.AWS_ENDPOINT_URL_SQS;
  if (!endpoint) return new SQSClient(boundedClientConfig());
  return new SQSClient({
    ...boundedClientConfig(),
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    },
  });
}

/** A required setting, read at cold start: a missing one fails loudly instead of losing events. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Missing required environment variable ${name}`);
  return value;
}
