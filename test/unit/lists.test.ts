import { describe, expect, it } from 'vitest';
import { listResult, listUrl } from '../../lib/http/lists.ts';
import { resolveRoute, routeNamed } from '../../lib/routes.ts';

const campaignId = '3f0c2a57-9d7e-4b8f-a1c2-7e5d9b0a4c61';
const referrerRoute = routeNamed('ListReferrerLinks');
const campaignRoute = routeNamed('ListCampaignLinks');

/** The one `<url>; rel="next"` a Link header may hold, or a failure naming what else it holds. */
function nextOf(link: string | undefined): URL {
  const m = /^<([^<>\s"]+)>; rel="next"$/.exec(link ?? '');
  if (!m?.[1]) throw new Error(`not exactly one next relation: ${link}`);
  return new URL(m[1], 'https://api.example');
}

describe('Link header of a list page', () => {
  const page = { items: [], nextCursor: 'eyJhIjoxfQ' };

  it.each([
    '>; rel="x", <https://evil.example/>',
    '>; rel="x", <',
    'a>, <b>; rel="prev"',
    '"quoted"; rel=next',
    'a/b/../c',
    'with space',
    '100% real?x=1&cursor=evil#frag',
    'ünïcödé 😀',
    'line\u2028separator',
    "it's (fine)*!",
  ])('for referrer %j holds exactly one relation that resolves back to the same referrer', (referrerId) => {
    const result = listResult(
      page,
      { path: referrerRoute.path, params: { campaign_id: campaignId, referrer_id: referrerId } },
      25,
    );
    const link = result.headers?.link;
    expect(link?.match(/</g)).toHaveLength(1);
    expect(link?.match(/rel=/g)).toHaveLength(1);
    const next = nextOf(link);
    expect(next.origin).toBe('https://api.example');
    // The gateway (local and API Gateway alike) routes the path and decodes its parameters.
    const resolved = resolveRoute('GET', next.pathname);
    expect(resolved.kind).toBe('match');
    if (resolved.kind !== 'match') return;
    expect(resolved.match.route.name).toBe('ListReferrerLinks');
    expect(resolved.match.pathParameters).toEqual({ campaign_id: campaignId, referrer_id: referrerId });
    expect([...next.searchParams]).toEqual([
      ['limit', '25'],
      ['cursor', page.nextCursor],
    ]);
    expect(result.headers?.['x-next-cursor']).toBe(page.nextCursor);
  });

  it('is a path of the campaign list for the campaign list', () => {
    const result = listResult(page, { path: campaignRoute.path, params: { campaign_id: campaignId } }, 100);
    expect(result.headers?.link).toBe(
      `</api/v1/campaign_referral_links/${campaignId}?limit=100&cursor=${page.nextCursor}>; rel="next"`,
    );
  });

  it('is absent on the last page, as is x-next-cursor', () => {
    const result = listResult(
      { items: [1] },
      { path: campaignRoute.path, params: { campaign_id: campaignId } },
      1,
    );
    expect(result).toEqual({ status: 200, body: [1] });
  });

  it('percent-encodes query values too', () => {
    expect(listUrl({ path: '/x/{a}', params: { a: '&' } }, { cursor: 'a&b=c', limit: '1' })).toBe(
      '/x/%26?cursor=a%26b%3Dc&limit=1',
    );
  });

  it('refuses a template parameter without a value rather than leaving it in the URL', () => {
    expect(() => listUrl({ path: referrerRoute.path, params: { campaign_id: campaignId } }, {})).toThrow(
      /referrer_id/,
    );
  });
});
