import { describe, expect, it } from 'vitest';
import { routes } from '../../lib/routes.ts';
import { DEFAULT_ROUTE_THROTTLES, routeThrottles, throttleClassesByRouteKey } from '../../lib/throttling.ts';

describe('route throttle classes', () => {
  it('gives every route key of the table a class: HEAD twins their row’s, $default the API’s', () => {
    expect(Object.fromEntries(throttleClassesByRouteKey(routes))).toEqual({
      'POST /api/v1/referral_link': 'api',
      'GET /api/v1/referral_link': 'api',
      'HEAD /api/v1/referral_link': 'api',
      'GET /api/v1/campaign_referral_links/{campaign_id}': 'api',
      'HEAD /api/v1/campaign_referral_links/{campaign_id}': 'api',
      'GET /api/v1/referral_link/{campaign_id}/{referrer_id}': 'api',
      'HEAD /api/v1/referral_link/{campaign_id}/{referrer_id}': 'api',
      'POST /api/v1/action/referred_user': 'api',
      'POST /api/v1/campaign': 'api',
      'GET /api/v1/campaign': 'api',
      'HEAD /api/v1/campaign': 'api',
      'PATCH /api/v1/campaign': 'api',
      'DELETE /api/v1/campaign': 'api',
      'POST /api/v1/referred_user': 'api',
      'GET /api/v1/referred_user': 'api',
      'HEAD /api/v1/referred_user': 'api',
      'POST /api/v1/action/referral_link': 'api',
      'GET /r/{referral_code}': 'redirect',
      'HEAD /r/{referral_code}': 'redirect',
      'GET /api/v1/openapi.json': 'docs',
      'HEAD /api/v1/openapi.json': 'docs',
      'GET /docs': 'docs',
      'HEAD /docs': 'docs',
      $default: 'api',
    });
  });

  it('the default figures, summed over every route key, stay below the account quota of 10,000/s', () => {
    expect(DEFAULT_ROUTE_THROTTLES).toEqual({
      redirect: { rateLimit: 2000, burstLimit: 4000 },
      api: { rateLimit: 200, burstLimit: 400 },
      docs: { rateLimit: 20, burstLimit: 40 },
    });
    const total = [...routeThrottles(routes).values()].reduce((sum, t) => sum + t.rateLimit, 0);
    expect(total).toBeLessThan(10_000);
  });
});
