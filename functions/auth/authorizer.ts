import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from 'aws-lambda';
import { ApiKeyStore } from '../../lib/auth/api-keys.ts';
import { db, tableName } from '../../lib/db/client.ts';

const store = new ApiKeyStore(db, tableName);

/**
 * HTTP API Lambda authorizer (simple responses). It always allows and hands the tenant to the
 * handler, with an empty tenant for an unknown or revoked key: the handler then answers the
 * contract's 401 body, where a deny here would make API Gateway answer its own 403.
 */
export async function handler(
  event: APIGatewayRequestAuthorizerEventV2,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<{ tenant: string }>> {
  const key = event.headers?.['api-key'] ?? event.identitySource?.[0] ?? '';
  const tenant = key ? ((await store.tenantOf(key)) ?? '') : '';
  return { isAuthorized: true, context: { tenant } };
}
