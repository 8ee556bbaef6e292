import { DASHBOARD_CSP, dashboardPage, dashboardScript, dashboardStyles } from '../../lib/dashboard/page.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { sendAsset } from '../../lib/http/static-asset.ts';
import { GetDashboard } from '../../lib/operations/compiled.ts';

/** Versioned in the URL (`v`), so cached for good. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/**
 * `GET /dashboard`, public: the dashboard's page, and with `?asset=app.js` / `?asset=app.css` the
 * script and stylesheet it loads. The page holds no data: everything it shows comes from the API,
 * called with the key the user pastes.
 */
export const handler = httpHandler(GetDashboard, async ({ event, query }) => {
  const acceptEncoding = event.headers?.['accept-encoding'];
  if (query.asset === 'app.js') {
    return sendAsset(acceptEncoding, dashboardScript, {
      'content-type': 'text/javascript; charset=utf-8',
      'cache-control': IMMUTABLE,
    });
  }
  if (query.asset === 'app.css') {
    return sendAsset(acceptEncoding, dashboardStyles, {
      'content-type': 'text/css; charset=utf-8',
      'cache-control': IMMUTABLE,
    });
  }
  return sendAsset(acceptEncoding, dashboardPage, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'content-security-policy': DASHBOARD_CSP,
    'referrer-policy': 'no-referrer',
  });
});
