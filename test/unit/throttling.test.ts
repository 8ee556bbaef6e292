import { describe, expect, it } from 'vitest';
import { LocalStackError } from '../../lib/local/errors.ts';
import { parseLocalThrottle, settingsFromEnv } from '../../lib/local/stack.ts';
import { TokenBucket } from '../../lib/local/token-bucket.ts';
import { routes } from '../../lib/routes.ts';
import { DEFAULT_ROUTE_THROTTLES, routeThrottles, throttleClassesByRouteKey } from '../../lib/throttling.ts';

describe('TokenBucket', () => {
  const clock = () => {
    let ms = 0;
    return { now: () => ms, advance: (by: number) => (ms += by) };
  };

  it('lets a burst through at once, then refuses until tokens come back at the rate', () => {
    const t = clock();
    const bucket = new TokenBucket({ rateLimit: 2, burstLimit: 3 }, t.now);
    expect([bucket.take(), bucket.take(), bucket.take()]).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(bucket.take()).toEqual({ ok: false, retryAfterSeconds: 1 });
    t.advance(499);
    expect(bucket.take().ok).toBe(false);
    t.advance(1);
    expect(bucket.take()).toEqual({ ok: true });
    expect(bucket.take().ok).toBe(false);
  });

  it('never holds more than the burst, however long it was idle', () => {
    const t = clock();
    const bucket = new TokenBucket({ rateLimit: 100, burstLimit: 2 }, t.now);
    t.advance(60_000);
    expect([bucket.take().ok, bucket.take().ok, bucket.take().ok]).toEqual([true, true, false]);
  });

  it('says in whole seconds, at least 1, when the next token is there', () => {
    const t = clock();
    const slow = new TokenBucket({ rateLimit: 0.25, burstLimit: 1 }, t.now);
    expect(slow.take().ok).toBe(true);
    expect(slow.take()).toEqual({ ok: false, retryAfterSeconds: 4 });
    t.advance(2500);
    expect(slow.take()).toEqual({ ok: false, retryAfterSeconds: 2 });
    const fast = new TokenBucket({ rateLimit: 1000, burstLimit: 1 }, t.now);
    expect(fast.take().ok).toBe(true);
    expect(fast.take()).toEqual({ ok: false, retryAfterSeconds: 1 });
  });
});

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
      'GET /api/v1/campaigns': 'api',
      'HEAD /api/v1/campaigns': 'api',
      'POST /api/v1/referred_user': 'api',
      'GET /api/v1/referred_user': 'api',
      'GET /api/v1/referred_users/{campaign_id}': 'api',
      'HEAD /api/v1/referred_user': 'api',
      'HEAD /api/v1/referred_users/{campaign_id}': 'api',
      'POST /api/v1/action/referral_link': 'api',
      'GET /api/v1/analytics/{campaign_id}': 'api',
      'HEAD /api/v1/analytics/{campaign_id}': 'api',
      'GET /api/v1/analytics/{campaign_id}/top': 'api',
      'HEAD /api/v1/analytics/{campaign_id}/top': 'api',
      'GET /api/v1/webhook_deliveries/{campaign_id}': 'api',
      'HEAD /api/v1/webhook_deliveries/{campaign_id}': 'api',
      'GET /api/v1/events/{campaign_id}': 'api',
      'HEAD /api/v1/events/{campaign_id}': 'api',
      'POST /api/v1/events/{event_id}/redeliver': 'api',
      'POST /api/v1/campaign/webhook_test': 'api',
      'POST /api/v1/campaign/rotate_webhook_secret': 'api',
      'POST /api/v1/conversion': 'api',
      'POST /api/v1/conversion/{id}/refund': 'api',
      'GET /api/v1/conversion': 'api',
      'HEAD /api/v1/conversion': 'api',
      'GET /api/v1/conversions/{campaign_id}': 'api',
      'HEAD /api/v1/conversions/{campaign_id}': 'api',
      'GET /api/v1/rewards/{campaign_id}': 'api',
      'HEAD /api/v1/rewards/{campaign_id}': 'api',
      'POST /api/v1/reward/{id}/approve': 'api',
      'POST /api/v1/reward/{id}/void': 'api',
      'GET /api/v1/balance/{campaign_id}/{recipient_id}': 'api',
      'HEAD /api/v1/balance/{campaign_id}/{recipient_id}': 'api',
      'POST /api/v1/payout': 'api',
      'GET /api/v1/payouts/{campaign_id}': 'api',
      'HEAD /api/v1/payouts/{campaign_id}': 'api',
      'GET /api/v1/health/ready': 'api',
      'HEAD /api/v1/health/ready': 'api',
      'GET /health': 'docs',
      'HEAD /health': 'docs',
      'GET /r/{referral_code}': 'redirect',
      'HEAD /r/{referral_code}': 'redirect',
      'GET /api/v1/openapi.json': 'docs',
      'HEAD /api/v1/openapi.json': 'docs',
      'GET /docs': 'docs',
      'HEAD /docs': 'docs',
      'GET /dashboard': 'docs',
      'HEAD /dashboard': 'docs',
      $default: 'api',
    });
  });

  it('the default figures, summed over every route key, stay below the account quota of 10,000/s', () => {
    expect(DEFAULT_ROUTE_THROTTLES).toEqual({
      redirect: { rateLimit: 2000, burstLimit: 4000 },
      api: { rateLimit: 100, burstLimit: 200 },
      docs: { rateLimit: 20, burstLimit: 40 },
    });
    const total = [...routeThrottles(routes).values()].reduce((sum, t) => sum + t.rateLimit, 0);
    expect(total).toBeLessThan(10_000);
  });
});

describe('LOCAL_THROTTLE', () => {
  it('unset or off: no limits; on: the deployed figures', () => {
    expect(parseLocalThrottle(undefined)).toBe(false);
    expect(parseLocalThrottle('')).toBe(false);
    expect(parseLocalThrottle('off')).toBe(false);
    expect(settingsFromEnv({ LOCAL_THROTTLE: 'OFF' }).throttles).toBe(false);
    expect(settingsFromEnv({}).throttles).toBe(false);
    expect(parseLocalThrottle('on')).toEqual(DEFAULT_ROUTE_THROTTLES);
    expect(settingsFromEnv({ LOCAL_THROTTLE: ' On ' }).throttles).toEqual(DEFAULT_ROUTE_THROTTLES);
  });

  it('replaces the figures of the classes it names and keeps the others', () => {
    expect(parseLocalThrottle('api=2/5, docs=0.5/1')).toEqual({
      redirect: DEFAULT_ROUTE_THROTTLES.redirect,
      api: { rateLimit: 2, burstLimit: 5 },
      docs: { rateLimit: 0.5, burstLimit: 1 },
    });
  });

  it.each(['yes', 'api=2', 'api=0/5', 'api=2/0', 'api=2/1.5', 'admin=2/5', 'api=-1/5', 'api=2/5,'])(
    'refuses %j with a one-line explanation',
    (value) => {
      expect(() => parseLocalThrottle(value)).toThrow(LocalStackError);
      expect(() => parseLocalThrottle(value)).toThrow(/LOCAL_THROTTLE/);
    },
  );
});
