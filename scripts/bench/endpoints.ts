/**
 * Every endpoint the bench measures (parts 1 to 3). A case is a row of `lib/routes.ts` (its method,
 * path and DynamoDB budget) with the values its request fills in (path parameters from the
 * fixtures by name); the status it expects is its operation's. A row without a recipe and without
 * path parameters is measured with a plain GET; any other is listed as not measured, so a new
 * route never silently escapes the bench. Each case is sent three times to warm it, then three
 * times once the table is quiet, recorded by the counting proxy: part 1's counts, and (the last)
 * the case's floor (`floor.ts`), replayed without our code in parts 2 and 3.
 */
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { operations } from '../../lib/operations/definitions.ts';
import { routeNamed, routes } from '../../lib/routes.ts';
import type { BenchEnvironment } from './environment.ts';
import { type Floor, replayFloor } from './floor.ts';
import type { RequestSpec } from './http-client.ts';
import { BROWSER } from './traffic.ts';

/**
 * A campaign, a link of it with a referrer, a referred user of the link and its signup event
 * (endpoint 20 redelivers it), named as the API names them; and a second campaign whose
 * webhook_url is the gateway's own `/health` (endpoints 21 and 22).
 */
const FIXTURES = [
  'campaign_id',
  'referral_code',
  'link_id',
  'referrer_id',
  'referred_user_id',
  'event_id',
  'hook_campaign_id',
] as const;
export type Fixtures = Record<(typeof FIXTURES)[number], string>;

type Values = Record<string, string>;
interface Recipe {
  route: string;
  key?: string;
  note?: string;
  query?(f: Fixtures, fresh: string): Values;
  body?(f: Fixtures, fresh: string): unknown;
  headers?: Values;
  /** Makes what one request uses up (a campaign to delete, a referred user without an action). */
  fresh?(env: BenchEnvironment, f: Fixtures): Promise<string>;
  quietMs?: number;
  /**
   * Counted in part 1 but not timed in part 2: its request sets off work beyond DynamoDB (a webhook
   * POST made in the request, a redelivery through the pipeline) that the DynamoDB floor does not
   * stand for, and a thousand of them would load the parts that follow.
   */
  untimed?: true;
}

const metadata = { plan: 'pro', amount_cents: 4900, coupon: 'SPRING' };
let unique = 0;
const uid = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;
const id = (name: keyof Fixtures) => (f: Fixtures) => ({ id: f[name] });

const RECIPES: Recipe[] = [
  { route: 'CreateCampaign', body: () => ({ url: 'example.com/spring', name: 'Spring' }) },
  { route: 'GetCampaign', query: id('campaign_id') },
  { route: 'UpdateCampaign', query: id('campaign_id'), body: () => ({ name: `Bench ${uid()}` }) },
  {
    route: 'DeleteCampaign',
    query: (_, fresh) => ({ id: fresh }),
    fresh: async (env) =>
      (await env.client.call<{ id: string }>('POST', '/api/v1/campaign', { url: 'x.com', name: 'Gone' })).id,
    // Each delete sets off a purge (stream poll, purge queue, its Query and GetItem), which can
    // start after 250 ms of quiet: wait it out so it never lands in the next delete's count.
    quietMs: 1_000,
  },
  { route: 'CreateReferralLink', body: (f) => ({ campaign_id: f.campaign_id, referrer_id: 'referrer-new' }) },
  {
    route: 'GetReferralLink',
    key: 'GetReferralLinkByCode',
    note: 'by referral_code',
    query: (f) => ({ referral_code: f.referral_code }),
  },
  { route: 'GetReferralLink', key: 'GetReferralLinkById', note: 'by id', query: id('link_id') },
  { route: 'ListCampaignLinks' },
  { route: 'ListReferrerLinks' },
  {
    route: 'CreateReferredUser',
    body: (f) => ({ referral_code: f.referral_code, referred_user_id: `signup-${uid()}` }),
  },
  {
    route: 'GetReferredUser',
    query: (f) => ({ campaign_id: f.campaign_id, referred_user_id: f.referred_user_id }),
  },
  {
    // A referred user made for each request (outside any timing): the worst case, which nothing a
    // warm container remembers can help.
    route: 'CreateReferredUserAction',
    note: 'first action of a new referred user',
    fresh: async (env, f) => {
      const user = { referral_code: f.referral_code, referred_user_id: `first-action-${uid()}` };
      await env.client.call('POST', '/api/v1/referred_user', user);
      return user.referred_user_id;
    },
    body: (f, user) => ({
      campaign_id: f.campaign_id,
      referred_user_id: user,
      action_type: 'purchase',
      metadata,
    }),
  },
  {
    route: 'CreateLinkAction',
    body: (f) => ({ referral_code: f.referral_code, action_type: 'purchase', metadata }),
  },
  { route: 'Visit', headers: { 'user-agent': BROWSER, referer: 'https://news.example.org/post/1' } },
  { route: 'GetAnalytics', query: () => ({ granularity: 'day' }) },
  { route: 'GetAnalyticsTop' },
  { route: 'ListWebhookDeliveries' },
  { route: 'ListEvents' },
  { route: 'RedeliverEvent', untimed: true, quietMs: 1_000 },
  { route: 'TestWebhook', query: id('hook_campaign_id'), untimed: true },
  { route: 'RotateWebhookSecret', query: id('hook_campaign_id') },
  {
    ...{ route: 'Visit', key: 'VisitCrawler', note: 'crawler, not recorded' },
    headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  },
];

/** A campaign with 150 links of one referrer and a referred user, made through the API. */
export async function createFixtures(env: BenchEnvironment): Promise<Fixtures> {
  const post = <T>(path: string, body: object) => env.client.call<T>('POST', path, body);
  const campaign = await post<{ id: string }>('/api/v1/campaign', {
    url: 'https://example.com/b',
    name: 'Bench',
  });
  const links: Array<{ id: number; referral_code: string }> = [];
  for (let i = 0; i < 150; i++)
    links.push(await post('/api/v1/referral_link', { campaign_id: campaign.id, referrer_id: 'bench' }));
  const link = links[0]!;
  const user = { referral_code: link.referral_code, referred_user_id: 'bench-user' };
  const signup = await post<{ id: number }>('/api/v1/referred_user', user);
  // Its webhook test POSTs to the gateway's own liveness route (a 405: the test's answer says so).
  const hook = await post<{ id: string }>('/api/v1/campaign', {
    url: 'https://example.com/h',
    name: 'Hooks',
  });
  await env.client.call('PATCH', `/api/v1/campaign?id=${hook.id}`, {
    webhook_url: `${env.stack.baseUrl}/health`,
  });
  return {
    ...{
      campaign_id: campaign.id,
      referral_code: link.referral_code,
      link_id: `${link.id}`,
      referrer_id: 'bench',
    },
    ...{
      referred_user_id: 'bench-user',
      event_id: `evt_referred_user_${signup.id}`,
      hook_campaign_id: hook.id,
    },
  };
}

/** The cases, and the rows not measured. `settle` waits out the background work `prepare` set off. */
export function endpointCases(env: BenchEnvironment, f: Fixtures, settle: () => Promise<unknown>) {
  const plainGets = routes.filter(
    (r) => r.method === 'GET' && !r.path.includes('{') && !RECIPES.some((x) => x.route === r.name),
  );
  const recipes = [...RECIPES, ...plainGets.map((r): Recipe => ({ route: r.name }))];
  const unmeasured = routes
    .filter((r) => !recipes.some((x) => x.route === r.name))
    .map((r) => `${r.method} ${r.path}`);
  const cases = recipes.map((r) => {
    const route = routeNamed(r.route);
    const pool: string[] = [];
    return {
      /** Short stable key (chart labels, JSON): the row's name, or the recipe's own. */
      key: r.key ?? r.route,
      label: `${route.method} ${route.path}${r.note ? ` (${r.note})` : ''}`,
      budget: route.dynamoCalls,
      status: operations[route.name as keyof typeof operations].success.status,
      /** How long the table must have been quiet before a counted request (default 250 ms). */
      quietMs: r.quietMs,
      timed: !r.untimed,
      /** Recorded by `recordCases` (none for a route that makes no DynamoDB call), and what its first replay saw refused. */
      floor: undefined as Floor | undefined,
      refused: [] as string[],
      /** Make what `n` more requests need (outside any timing). */
      async prepare(n: number) {
        if (!r.fresh) return;
        for (let i = 0; i < n; i++) pool.push(await r.fresh(env, f));
        await settle();
      },
      request(): RequestSpec {
        const fresh = r.fresh ? pool.shift() : '';
        if (fresh === undefined) throw new Error(`${r.route}: prepare() was not called with enough`);
        const path = route.path.replace(/\{(\w+)\}/g, (_, name: keyof Fixtures) => f[name]);
        const query = new URLSearchParams(r.query?.(f, fresh)).toString();
        return {
          method: route.method,
          path: query ? `${path}?${query}` : path,
          body: r.body?.(f, fresh),
          headers: r.headers,
        };
      },
    };
  });
  return { cases, unmeasured };
}
export type EndpointCase = ReturnType<typeof endpointCases>['cases'][number];

const countOps = (calls: RecordedCall[], category: string) => {
  const ops: Record<string, number> = {};
  for (const c of calls.filter((x) => x.category === category)) ops[c.op] = (ops[c.op] ?? 0) + 1;
  return ops;
};

/** Warm each case, then send it `samples` times once the table is quiet, recording its DynamoDB requests. */
export async function recordCases(env: BenchEnvironment, cases: EndpointCase[], samples = 3) {
  const out = [];
  for (const c of cases) {
    await c.prepare(2 * samples);
    const seen: RecordedCall[][] = [];
    for (let i = 0; i < 2 * samples; i++) {
      if (i >= samples) {
        await env.proxy.quiet(c.quietMs);
        await env.proxy.record();
      }
      const res = await env.client.send(c.request());
      if (i >= samples) seen.push(await env.proxy.recorded());
      if (res.status !== c.status)
        throw new Error(`${c.label}: expected ${c.status}, got ${res.status} ${res.body.slice(0, 300)}`);
    }
    c.floor = replayFloor(seen.at(-1)!, env.proxy.url);
    c.refused = (await c.floor?.run()) ?? [];
    const ops = seen.map((calls) => countOps(calls, 'request'));
    const totals = ops.map((o) => Object.values(o).reduce((a, b) => a + b, 0));
    // The median sample: background work the counter cannot tell from the request's own (a
    // stream consumer or webhook worker of an earlier case, set off past the quiet wait) can land
    // in one sample's window, and the range is shown where samples differ.
    const median = totals.indexOf([...totals].sort((a, b) => a - b)[Math.floor(totals.length / 2)]!);
    out.push({
      ...{ label: c.label, ops: ops[median]!, calls: totals[median]!, budget: c.budget },
      range: [Math.min(...totals), Math.max(...totals)] as const,
      /** The authorizer's api-key GetItem (a separate Lambda in AWS, cached 60 s by API Gateway). */
      authorizer: Math.max(...seen.map((calls) => countOps(calls, 'apikey').GetItem ?? 0)),
      varied: new Set(ops.map((o) => JSON.stringify(Object.entries(o).sort()))).size > 1,
    });
  }
  return out;
}

export const formatOps = (ops: Record<string, number>) =>
  Object.entries(ops)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([op, n]) => (n === 1 ? op : `${n}× ${op}`))
    .join(' + ') || '—';
