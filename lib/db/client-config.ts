import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Client settings: a local endpoint when one is configured (local stack, tests, CLI). */
export function dynamoClientConfig(
  endpoint = process.env.DYNAMODB_ENDPOINT,
  region?: string,
): DynamoDBClientConfig {
  const resolvedRegion = region ?? process.env.AWS_REGION;
  if (!endpoint) return resolvedRegion ? { region: resolvedRegion } : {};
  return {
    endpoint,
    region: resolvedRegion ?? 'us-east-1',
    credentials: {
      accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local',
      secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
    },
  };
}

export function createDocumentClient(endpoint?: string, region?: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient(dynamoClientConfig(endpoint, region)), {
    marshallOptions: { removeUndefinedValues: true },
  });
}
