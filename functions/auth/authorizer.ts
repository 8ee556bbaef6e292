import type {
  APIGatewayRequestAuthorizerEventV2,
  APIGatewaySimpleAuthorizerWithContextResult,
} from 'aws-lambda';
import { isDependencyFailure, withDeadline } from '../../lib/aws/deadline.ts';
import { ApiKeyStore } from '../../lib/db/api-keys.ts';
import { db, tableName } from '../../lib/db/table/client.ts';

const store = new ApiKeyStore(db, tableName);

/** The key lookup's time, all attempts together: a hung lookup must not hold the request. */
export const AUTHORIZER_BUDGET_MS = 2_000;

export type AuthorizerContext = { tenant: string; unavailable?: 'true' };

/**
 * HTTP API Lambda authorizer (simple responses). It always allows and hands the tenant to the
 * handler, with an empty tenant for an unknown or revoked key: the handler then answers the
 * contract's 401 body, where a deny here would make API Gateway answer its own 403.
 *
 * When the table cannot be read in time, it allows with `unavailable`, and the handler answers
 * 503 `service_unavailable` with `Retry-After`. Throwing instead would make API Gateway answer its
 * own 500, which the contract rules out for a dependency failure. The cost: API Gateway caches
 * this answer like any other, so a key first seen during an outage gets 503s for up to the cache's
 * 60 s after the table is back.
 */
export async function handler(
  event: APIGatewayRequestAuthorizerEventV2,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerContext>> {
  const key = event.headers?.['api-key'] ?? event.identitySource?.[0] ?? '';
  if (!key) return { isAuthorized: true, context: { tenant: '' } };
  try {
    const tenant = await withDeadline(Date.now() + AUTHORIZER_BUDGET_MS, () => store.tenantOf(key));
    return { isAuthorized: true, context: { tenant: tenant ?? '' } };
  } catch (err) {
    if (!isDependencyFailure(err)) throw err;
    return { isAuthorized: true, context: { tenant: '', unavailable: 'true' } };
  }
}
