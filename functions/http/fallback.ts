import { ApiError } from '../../lib/domain/errors.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { errorBody, publicOrigin } from '../../lib/http/responses.ts';
import { resolveRoute } from '../../lib/routes.ts';

/**
 * The `$default` route: API Gateway sends here every request no route matched, so unknown paths
 * and methods get the contract's 404 `route_not_found` / 405 `method_not_allowed` bodies instead of
 * the gateway's own `{"message":"Not Found"}`.
 */
// No operation of its own (no row, nothing to validate): the fallback ships no validator.
export const handler = httpHandler({ name: 'Fallback', auth: false }, async ({ event }) => {
  const method = event.requestContext.http.method;
  const resolved = resolveRoute(method, event.rawPath);
  if (resolved.kind === 'method_not_allowed' || resolved.kind === 'match') {
    // A match here means the route exists under HEAD/GET semantics API Gateway did not apply.
    const allowed = resolved.kind === 'match' ? [resolved.match.route.method] : resolved.allowed;
    return {
      status: 405,
      headers: { allow: allowed.join(', ') },
      body: errorBody(
        new ApiError('method_not_allowed', `Method ${method} is not allowed here.`),
        publicOrigin(event),
      ),
    };
  }
  throw new ApiError('route_not_found', 'No route matches this path.');
});
