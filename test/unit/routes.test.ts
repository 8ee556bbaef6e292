import { describe, expect, it } from 'vitest';
import { type RouteDefinition, resolveRoute, routes, safeDecode } from '../../lib/routes.ts';

const row = (method: RouteDefinition['method'], path: string, extra: Partial<RouteDefinition> = {}) =>
  ({
    name: `${method}${path}`,
    method,
    path,
    handler: 'http/x',
    auth: true,
    table: 'read',
    dynamoCalls: 2,
    throttle: 'api',
    summary: '',
    ...extra,
  }) satisfies RouteDefinition;

const table: RouteDefinition[] = [
  row('GET', '/r/{referral_code}', { auth: false }),
  row('GET', '/api/v1/referral_link'),
  row('POST', '/api/v1/referral_link'),
  row('GET', '/api/v1/referral_link/{campaign_id}/{referrer_id}'),
  row('GET', '/api/v1/a.b'),
  row('DELETE', '/api/v1/only-delete'),
];

describe('resolveRoute with the real route table', () => {
  it.each(['POST', 'GET', 'PATCH', 'DELETE'])('%s /api/v1/campaign matches its own route', (method) => {
    const resolved = resolveRoute(method, '/api/v1/campaign');
    expect(resolved.kind).toBe('match');
    if (resolved.kind !== 'match') return;
    expect(resolved.match.route.method).toBe(method);
    expect(resolved.match.route.path).toBe('/api/v1/campaign');
    expect(resolved.match.route.auth).toBe(true);
    expect(resolved.match.pathParameters).toEqual({});
  });

  it.each(['PUT', 'OPTIONS', 'TRACE', 'get'])(
    '%s /api/v1/campaign is 405 with the allowed methods',
    (method) => {
      const resolved = resolveRoute(method, '/api/v1/campaign');
      expect(resolved).toEqual({
        kind: 'method_not_allowed',
        allowed: expect.arrayContaining(['POST', 'GET', 'PATCH', 'DELETE']),
      });
    },
  );

  it.each([
    '/api/v1/campaign/',
    '/api/v1/campaigns/',
    '/api/v1/Campaign',
    '/api/v2/campaign',
    '//api/v1/campaign',
    '/api/v1/campaign%00',
    '/api/v1/campaign?id=1',
    '/',
    '',
    '/api/v1/../v1/campaign',
  ])('%j is not found', (path) => {
    expect(resolveRoute('GET', path)).toEqual({ kind: 'not_found' });
  });

  it('every row has a unique name and a unique method + path', () => {
    expect(new Set(routes.map((r) => r.name)).size).toBe(routes.length);
    expect(new Set(routes.map((r) => `${r.method} ${r.path}`)).size).toBe(routes.length);
  });
});

describe('DynamoDB call budgets of the route table', () => {
  // What one request may cost once warm; test/integration/round-trips.test.ts measures each.
  it('every row sets a whole budget of at most 2, but these: 3–7 calls in 2–3 round trips', () => {
    // A visit writes no link (the stream's rollups count it), so it pairs its calls instead: the
    // link read beside the visitor marker, then the visit's Put beside the campaign check; a repeat
    // visitor's reads the earlier visit between them (it counts only if it was written). A feed
    // page reads the items of its events and the first item past them beside the campaign check,
    // and from the start (no cursor) the first item before. A link action commits on its link
    // beside the campaign's read, where a transaction would bill the check as a write. No index
    // copies a link's counters: a list page reads them from the items after its Query, and a
    // signup by link id reads the link by key after the index gave its code. A conversion reads
    // its referred user (with the campaign) and then the user's link for the counters it answers,
    // and so does a refund for its conversion (a keyed replay of either reads the stored answer
    // after its transaction); a conversion list reads its page's links (and a filtered page's
    // records) after its Query. A reward list of every state reads the five states' index
    // partitions at once beside the campaign, then its page's items; a payout list of one recipient
    // its page's items after its index Query; a referred-user page reads its links and its users'
    // items (their clicks) after its Query, 100 keys a batch, so two batches for a full page of
    // 100; approve and void a reward's adjustments after the
    // reward, then one transaction; a payout replayed by its key reads the answer after its
    // transaction failed.
    const exceptions: Record<string, number> = {
      CreateConversion: 4,
      RefundConversion: 4,
      ListConversions: 3,
      ListRewards: 7,
      ApproveReward: 3,
      VoidReward: 3,
      CreatePayout: 3,
      ListPayouts: 3,
      Visit: 5,
      ListEvents: 4,
      CreateLinkAction: 3,
      ListCampaignLinks: 3,
      ListReferrerLinks: 3,
      ListReferredUsers: 4,
      CreateReferredUser: 3,
      // With an Idempotency-Key, the key's claim before the POST it cannot hold in a transaction.
      TestWebhook: 3,
    };
    for (const route of routes) {
      expect(Number.isInteger(route.dynamoCalls), route.name).toBe(true);
      expect(route.dynamoCalls, route.name).toBeGreaterThanOrEqual(0);
      expect(route.dynamoCalls, route.name).toBeLessThanOrEqual(exceptions[route.name] ?? 2);
    }
  });

  it('a route that never touches the table has budget 0, and one that does at least 1', () => {
    for (const route of routes) {
      if (route.table === 'none') expect(route.dynamoCalls, route.name).toBe(0);
      else expect(route.dynamoCalls, route.name).toBeGreaterThanOrEqual(1);
    }
  });

  it('the campaign endpoints stay at 1', () => {
    const campaign = routes.filter((r) => r.path === '/api/v1/campaign');
    expect(campaign.map((r) => r.method).sort()).toEqual(['DELETE', 'GET', 'PATCH', 'POST']);
    for (const route of campaign) expect(route.dynamoCalls, route.name).toBe(1);
  });
});

describe('resolveRoute with path parameters', () => {
  it('extracts and percent-decodes parameters', () => {
    expect(resolveRoute('GET', '/api/v1/referral_link/c-1/user%40example.com', table)).toEqual({
      kind: 'match',
      match: { route: table[3], pathParameters: { campaign_id: 'c-1', referrer_id: 'user@example.com' } },
    });
  });

  it('keeps a malformed escape as written instead of throwing', () => {
    const resolved = resolveRoute('GET', '/r/%E0%A4%A', table);
    expect(resolved.kind === 'match' && resolved.match.pathParameters).toEqual({ referral_code: '%E0%A4%A' });
  });

  it('a parameter never spans a slash, and an empty segment does not match', () => {
    expect(resolveRoute('GET', '/r/a/b', table)).toEqual({ kind: 'not_found' });
    expect(resolveRoute('GET', '/r/', table)).toEqual({ kind: 'not_found' });
    expect(resolveRoute('GET', '/api/v1/referral_link/c-1', table)).toEqual({ kind: 'not_found' });
  });

  it('an encoded slash stays inside one parameter', () => {
    const resolved = resolveRoute('GET', '/api/v1/referral_link/c/a%2Fb', table);
    expect(resolved.kind === 'match' && resolved.match.pathParameters).toEqual({
      campaign_id: 'c',
      referrer_id: 'a/b',
    });
  });

  it('answers HEAD with the GET row of a path, and only where there is one', () => {
    const head = resolveRoute('HEAD', '/r/ABC623KC', table);
    expect(head.kind === 'match' && head.match.route).toBe(table[0]);
    const api = resolveRoute('HEAD', '/api/v1/referral_link', table);
    expect(api.kind === 'match' && api.match.route).toBe(table[1]);
    expect(resolveRoute('HEAD', '/api/v1/only-delete', table)).toEqual({
      kind: 'method_not_allowed',
      allowed: ['DELETE'],
    });
  });

  it('collects every method of a path for the 405', () => {
    expect(resolveRoute('DELETE', '/api/v1/referral_link', table)).toEqual({
      kind: 'method_not_allowed',
      allowed: ['GET', 'POST'],
    });
  });

  it('treats regex characters in literal segments literally', () => {
    expect(resolveRoute('GET', '/api/v1/a.b', table).kind).toBe('match');
    expect(resolveRoute('GET', '/api/v1/aXb', table)).toEqual({ kind: 'not_found' });
  });
});

describe('safeDecode', () => {
  it('decodes valid escapes and keeps malformed ones', () => {
    expect(safeDecode('a%20b%E2%9C%93')).toBe('a b✓');
    expect(safeDecode('%')).toBe('%');
    expect(safeDecode('%E0%A4%A')).toBe('%E0%A4%A');
    expect(safeDecode('%ZZ')).toBe('%ZZ');
    expect(safeDecode('%00')).toBe('\u0000');
  });
});
