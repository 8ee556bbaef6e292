/**
 * Endpoint 13: `GET /r/{referral_code}`, public. 302 to the link's URL and a `visit` action with
 * the user agent and referer (never an IP address); HEAD and crawlers are redirected, not counted.
 */
import { request } from 'node:http';
import { isbot as isBot } from 'isbot';
import { beforeAll, describe, expect, it } from 'vitest';
import { ErrorResponse } from '../../lib/domain/schemas.ts';
import { baseUrl, TENANT_A } from '../support/api.ts';
import { expectShape } from '../support/assertions.ts';
import { type ActionBody, createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { settledClicks } from '../support/settled.ts';
import { eventDataOf, visitItems } from '../support/table.ts';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A request with exactly the headers given (fetch would add its own user-agent). */
function raw(method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const url = new URL(path, baseUrl());
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0';
const EDGE_ANDROID =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 EdgA/126.0.0.0';

/** Real user agents of the crawlers and link previewers the contract names. */
const CRAWLERS: Array<[string, string]> = [
  ['Slackbot', 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)'],
  ['facebookexternalhit', 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)'],
  ['Twitterbot', 'Twitterbot/1.0'],
  ['LinkedInBot', 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)'],
  ['Discordbot', 'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)'],
  ['WhatsApp', 'WhatsApp/2.23.20.0 A'],
  ['TelegramBot', 'TelegramBot (like TwitterBot)'],
  ['Googlebot', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
  ['bingbot', 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)'],
];

/** The visit items (actions) stored for a link. */
async function visits(campaignId: string, code: string): Promise<Record<string, unknown>[]> {
  const items = await visitItems(TENANT_A.tenant, campaignId);
  return items.filter(
    (i) =>
      String(i.SK).startsWith('A#') &&
      i.link_code === code &&
      eventDataOf<ActionBody>(i)?.action_type === 'visit',
  );
}

/** The bot visits stored for a link: counted apart, never actions. */
async function botVisits(campaignId: string, code: string): Promise<Record<string, unknown>[]> {
  return (await visitItems(TENANT_A.tenant, campaignId)).filter(
    (i) => i.type === 'bot_visit' && i.link_code === code,
  );
}

let campaignId: string;

beforeAll(async () => {
  campaignId = (await createCampaign({ url: 'https://example.com/p?x=1', name: 'visits' })).id;
});

describe('GET /r/{referral_code} (endpoint 13)', () => {
  it('302 to the referral_link, no api-key needed, and a visit with user_agent and referer', async () => {
    const link = await createLink(campaignId, { referrer_id: 'visitor-host' });
    const res = await raw('GET', `/r/${link.referral_code}`, {
      'user-agent': CHROME,
      referer: 'https://news.example.org/post/1',
      'x-forwarded-for': '203.0.113.9',
    });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`https://example.com/p?x=1&rfa=${link.referral_code}`);
    expect(res.headers.location).toBe(link.referral_link);
    expect(res.headers['x-request-id']).toBeTruthy();

    expect(await settledClicks(link.referral_code, 1)).toBe(1);
    const stored = await visits(campaignId, link.referral_code);
    expect(stored).toHaveLength(1);
    const action = eventDataOf<ActionBody>(stored[0]);
    expect(action.metadata).toEqual({ user_agent: CHROME, referer: 'https://news.example.org/post/1' });
    expect(action.referred_user).toBeNull();
    expect(action.referral_link).toEqual({ ...link, total_clicks: 1 });
    // No IP address anywhere in the stored item (the gateway sees 127.0.0.1 as the source), the
    // link's share_url aside: locally the public base is the gateway's own 127.0.0.1 address.
    expect(action.referral_link.share_url).toBe(`${baseUrl()}/r/${link.referral_code}`);
    const dump = JSON.stringify(stored[0]).replaceAll(`${baseUrl()}/r/`, '<public base>/r/');
    expect(dump).not.toContain('127.0.0.1');
    expect(dump).not.toContain('203.0.113.9');
    expect(dump).not.toMatch(/sourceIp|source_ip|"ip"|x-forwarded-for/i);
  });

  it('works for a custom code, with an api-key header present or not', async () => {
    const link = await createLink(campaignId, { referral_code: `visit_Custom-${Date.now()}` });
    const res = await raw('GET', `/r/${link.referral_code}`, { 'user-agent': FIREFOX, 'api-key': 'garbage' });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(link.referral_link);
    expect(await settledClicks(link.referral_code, 1)).toBe(1);
  });

  it('without user-agent or referer the visit has metadata {}; each is stored only when sent', async () => {
    const link = await createLink(campaignId);
    expect((await raw('GET', `/r/${link.referral_code}`)).status).toBe(302);
    expect((await raw('GET', `/r/${link.referral_code}`, { 'user-agent': SAFARI_IPHONE })).status).toBe(302);
    expect((await raw('GET', `/r/${link.referral_code}`, { referer: 'https://a.example/' })).status).toBe(
      302,
    );
    const metadata = (await visits(campaignId, link.referral_code))
      .map((i) => eventDataOf<ActionBody>(i).metadata)
      .sort((a, b) => Object.keys(a).join().localeCompare(Object.keys(b).join()));
    expect(metadata).toEqual([{}, { referer: 'https://a.example/' }, { user_agent: SAFARI_IPHONE }]);
    expect(await settledClicks(link.referral_code, 3)).toBe(3);
  });

  it('keeps the visit metadata bounded when headers are huge', async () => {
    const link = await createLink(campaignId);
    const res = await raw('GET', `/r/${link.referral_code}`, {
      'user-agent': `${CHROME} ${'x'.repeat(5000)}`,
      referer: `https://example.org/${'y'.repeat(5000)}`,
    });
    expect(res.status).toBe(302);
    const [item] = await visits(campaignId, link.referral_code);
    expect(item).toBeDefined();
    const metadata = eventDataOf<ActionBody>(item).metadata;
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBeLessThanOrEqual(8192);
    expect(String(metadata.user_agent)).toMatch(/^Mozilla\/5\.0 .+ x+$/);
  });

  it('every browser visit counts: normal browsers are not taken for bots', async () => {
    const link = await createLink(campaignId);
    for (const ua of [CHROME, SAFARI_IPHONE, FIREFOX, EDGE_ANDROID]) {
      const res = await raw('GET', `/r/${link.referral_code}`, { 'user-agent': ua });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(link.referral_link);
    }
    expect(await settledClicks(link.referral_code, 4)).toBe(4);
    expect(await visits(campaignId, link.referral_code)).toHaveLength(4);
  });

  it('HEAD: 302 with the same Location, not an action: a bot visit', async () => {
    const link = await createLink(campaignId);
    const res = await raw('HEAD', `/r/${link.referral_code}`, { 'user-agent': CHROME });
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(link.referral_link);
    expect(res.text).toBe('');
    expect(await settledClicks(link.referral_code, 0)).toBe(0);
    expect(await visits(campaignId, link.referral_code)).toHaveLength(0);
    // Counted apart, as a bot visit, never as an action.
    expect(await botVisits(campaignId, link.referral_code)).toHaveLength(1);
  });

  // Concurrent: each crawler's case, on a link of its own, waits for its counter to stay at 0.
  it.concurrent.each(CRAWLERS)('%s: 302, not an action: a bot visit', async (_name, ua) => {
    expect(isBot(ua)).toBe(true);
    const link = await createLink(campaignId);
    for (const agent of [ua, ua.toLowerCase()]) {
      const res = await raw('GET', `/r/${link.referral_code}`, { 'user-agent': agent });
      expect(res.status).toBe(302);
      expect(res.headers.location).toBe(link.referral_link);
    }
    expect(await settledClicks(link.referral_code, 0)).toBe(0);
    expect(await visits(campaignId, link.referral_code)).toHaveLength(0);
    expect(await botVisits(campaignId, link.referral_code)).toHaveLength(2);
  });

  it('unknown code: 404 referral_link_not_found, for GET and HEAD and crawlers', async () => {
    const res = await raw('GET', '/r/NoSuchCode99', { 'user-agent': CHROME });
    expect(res.status).toBe(404);
    const body = JSON.parse(res.text);
    expectShape(ErrorResponse, body);
    expect(body.error.code).toBe('referral_link_not_found');
    expect(res.headers.location).toBeUndefined();
    expect((await raw('HEAD', '/r/NoSuchCode99')).status).toBe(404);
    expect((await raw('GET', '/r/NoSuchCode99', { 'user-agent': CRAWLERS[0]![1] })).status).toBe(404);
  });

  it('a code in another case is another (unknown) code', async () => {
    const link = await createLink(campaignId, { referral_code: `CaseVisit${Date.now()}` });
    expect((await raw('GET', `/r/${link.referral_code.toLowerCase()}`)).status).toBe(404);
    expect(await settledClicks(link.referral_code, 0)).toBe(0);
  });

  it.each([
    ['too short', 'abc'],
    ['too long', 'a'.repeat(33)],
    ['a dot', 'abc.def'],
    ['an encoded space', 'abc%20def'],
    ['an encoded slash', 'abc%2Fdef'],
    ['an exclamation mark', 'abcd!'],
    ['non-ASCII', '%C3%A4bcd'],
    ['a malformed escape', 'abcd%zz'],
  ])('a code with %s: 404, never a 5xx', async (_label, code) => {
    const res = await raw('GET', `/r/${code}`);
    expect(res.status).toBe(404);
    expect(res.headers.location).toBeUndefined();
  });

  it('other methods: 405', async () => {
    const link = await createLink(campaignId);
    expect((await raw('POST', `/r/${link.referral_code}`)).status).toBe(405);
    expect(await settledClicks(link.referral_code, 0)).toBe(0);
  });

  it("a visit counts toward the link's total_clicks alongside API actions", async () => {
    const link: LinkBody = await createLink(campaignId);
    await raw('GET', `/r/${link.referral_code}`, { 'user-agent': CHROME });
    // The visit reaches total_clicks through the table stream; the action's response counts it once it has.
    expect(await settledClicks(link.referral_code, 1)).toBe(1);
    const action = await fetch(`${baseUrl()}/api/v1/action/referral_link`, {
      method: 'POST',
      headers: { 'api-key': TENANT_A.key, 'content-type': 'application/json' },
      body: JSON.stringify({ referral_code: link.referral_code, action_type: 'share' }),
    });
    expect(action.status).toBe(201);
    expect(((await action.json()) as ActionBody).referral_link.total_clicks).toBe(2);
    expect(await settledClicks(link.referral_code, 2)).toBe(2);
  });
});
