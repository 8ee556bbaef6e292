/**
 * Every endpoint the bench measures, as data: the request it sends through the gateway, and what
 * must exist first. Its DynamoDB budget comes from its route-table row; its floor is recorded,
 * not written here: the DynamoDB requests the stack made for one request, replayed without our
 * code (`floor.ts`, `recordFloors` in `calls.ts`).
 */
import { BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { routes } from '../../lib/routes.ts';
import type { BenchEnvironment } from './environment.ts';
import type { Floor } from './floor.ts';
import type { BenchClient, RequestSpec } from './http-client.ts';

export interface EndpointCase {
  /** Short stable key (chart labels, JSON). */
  key: string;
  /** Method and path as the contract writes it. */
  label: string;
  /** The route-table row it exercises: `METHOD /path/{template}`. */
  route: string;
  /** DynamoDB calls allowed per request (issue 3, point 10): its route-table row's `dynamoCalls`. */
  budget: number;
  auth: boolean;
  status: number;
  /** How long the table must have been quiet before a counted request (default 250 ms). */
  quietMs?: number;
  /** Make what `n` more requests need (outside any timing). */
  prepare(n: number): Promise<void>;
  request(): RequestSpec;
  /** Recorded by `recordFloors`; absent for routes that make no DynamoDB call. */
  floor?: Floor;
}

export interface Fixtures {
  campaign: { id: string };
  /** A link of `campaign` (with a referrer) used by reads, visits and actions. */
  link: { id: number; referral_code: string };
  referrerId: string;
  /** A referred user of `link`. */
  referredUserId: string;
  listLinks: number;
}

const LIST_LINKS = 150;
const BROWSER =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const CRAWLER = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';
const metadata = { plan: 'pro', amount_cents: 4900, coupon: 'SPRING' };
let unique = 0;
const uid = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;

/** A campaign with 150 links of one referrer and a referred user, made through the API. */
export async function createFixtures(env: BenchEnvironment): Promise<Fixtures> {
  const c = env.client;
  const post = <T>(path: string, body: unknown) => c.expect<T>({ method: 'POST', path, body }, 201);
  const campaign = await post<{ id: string }>('/api/v1/campaign', {
    url: 'https://example.com/landing?src=bench',
    name: 'Bench',
  });
  const referrerId = 'referrer-bench';
  const links: Array<Fixtures['link']> = [];
  for (let i = 0; i < LIST_LINKS; i++)
    links.push(await post('/api/v1/referral_link', { campaign_id: campaign.id, referrer_id: referrerId }));
  const referredUserId = 'referred-bench-user';
  await post('/api/v1/referred_user', {
    referral_code: links[0]!.referral_code,
    referred_user_id: referredUserId,
  });
  return { campaign, link: links[0]!, referrerId, referredUserId, listLinks: LIST_LINKS };
}

/** What a request needs made fresh, one per request: a campaign to delete, a referred user with no action yet. */
type Fresh = 'campaign' | 'referredUser';

interface Recipe {
  key: string;
  route: string;
  label?: string;
  status: number;
  path(f: Fixtures, fresh: string): string;
  body?(f: Fixtures, fresh: string): unknown;
  headers?: Record<string, string>;
  fresh?: Fresh;
  quietMs?: number;
}

const RECIPES: Recipe[] = [
  {
    key: 'post-campaign',
    route: 'POST /api/v1/campaign',
    status: 201,
    path: () => '/api/v1/campaign',
    body: () => ({ url: 'example.com/spring', name: 'Spring' }),
  },
  {
    key: 'get-campaign',
    route: 'GET /api/v1/campaign',
    status: 200,
    path: (f) => `/api/v1/campaign?id=${f.campaign.id}`,
  },
  {
    key: 'patch-campaign',
    route: 'PATCH /api/v1/campaign',
    status: 200,
    path: (f) => `/api/v1/campaign?id=${f.campaign.id}`,
    body: () => ({ name: `Bench ${uid()}` }),
  },
  {
    key: 'delete-campaign',
    route: 'DELETE /api/v1/campaign',
    status: 204,
    fresh: 'campaign',
    // Each delete sets off a purge (stream poll, purge queue, then its Query and GetItem), which
    // can start after 250 ms of quiet: wait it out so it never lands in the next delete's count.
    quietMs: 1_000,
    path: (_, id) => `/api/v1/campaign?id=${id}`,
  },
  {
    key: 'post-link',
    route: 'POST /api/v1/referral_link',
    status: 201,
    path: () => '/api/v1/referral_link',
    body: (f) => ({ campaign_id: f.campaign.id, referrer_id: 'referrer-new' }),
  },
  {
    key: 'get-link-code',
    route: 'GET /api/v1/referral_link',
    label: 'GET /api/v1/referral_link?referral_code=',
    status: 200,
    path: (f) => `/api/v1/referral_link?referral_code=${f.link.referral_code}`,
  },
  {
    key: 'get-link-id',
    route: 'GET /api/v1/referral_link',
    label: 'GET /api/v1/referral_link?id=',
    status: 200,
    path: (f) => `/api/v1/referral_link?id=${f.link.id}`,
  },
  {
    key: 'list-campaign-links',
    route: 'GET /api/v1/campaign_referral_links/{campaign_id}',
    status: 200,
    path: (f) => `/api/v1/campaign_referral_links/${f.campaign.id}`,
  },
  {
    key: 'list-referrer-links',
    route: 'GET /api/v1/referral_link/{campaign_id}/{referrer_id}',
    status: 200,
    path: (f) => `/api/v1/referral_link/${f.campaign.id}/${f.referrerId}`,
  },
  {
    key: 'post-referred-user',
    route: 'POST /api/v1/referred_user',
    status: 201,
    path: () => '/api/v1/referred_user',
    body: (f) => ({ referral_code: f.link.referral_code, referred_user_id: `signup-${uid()}` }),
  },
  {
    key: 'get-referred-user',
    route: 'GET /api/v1/referred_user',
    status: 200,
    path: (f) => `/api/v1/referred_user?campaign_id=${f.campaign.id}&referred_user_id=${f.referredUserId}`,
  },
  {
    // Every request is the first action of a referred user made just for it (outside any
    // timing): the worst case, which nothing a warm container remembers can help.
    key: 'post-user-action',
    route: 'POST /api/v1/action/referred_user',
    label: 'POST /api/v1/action/referred_user (first action of a new referred user)',
    status: 201,
    fresh: 'referredUser',
    path: () => '/api/v1/action/referred_user',
    body: (f, user) => ({
      campaign_id: f.campaign.id,
      referred_user_id: user,
      action_type: 'purchase',
      metadata,
    }),
  },
  {
    key: 'post-link-action',
    route: 'POST /api/v1/action/referral_link',
    status: 201,
    path: () => '/api/v1/action/referral_link',
    body: (f) => ({ referral_code: f.link.referral_code, action_type: 'purchase', metadata }),
  },
  {
    key: 'visit',
    route: 'GET /r/{referral_code}',
    status: 302,
    path: (f) => `/r/${f.link.referral_code}`,
    headers: { 'user-agent': BROWSER, referer: 'https://news.example.org/post/1' },
  },
  {
    key: 'visit-crawler',
    route: 'GET /r/{referral_code}',
    label: 'GET /r/{referral_code} (crawler, not recorded)',
    status: 302,
    path: (f) => `/r/${f.link.referral_code}`,
    headers: { 'user-agent': CRAWLER },
  },
];

/**
 * The cases, then a plain GET for every route-table row without a recipe and without path
 * parameters (e.g. the OpenAPI document, budget 0); any other row is listed as not measured, so
 * a new route never silently escapes the bench. `settle` waits for background work `prepare`
 * set off (the webhook pipeline) to finish before anything is measured.
 */
export function endpointCases(
  env: BenchEnvironment,
  f: Fixtures,
  settle?: () => Promise<unknown>,
): { cases: EndpointCase[]; unmeasured: string[] } {
  const makeFresh: Record<Fresh, () => Promise<string>> = {
    campaign: async () =>
      (
        await env.client.expect<{ id: string }>(
          { method: 'POST', path: '/api/v1/campaign', body: { url: 'example.com/gone', name: 'Delete me' } },
          201,
        )
      ).id,
    referredUser: async () => {
      const id = `first-action-${uid()}`;
      await env.client.expect(
        {
          method: 'POST',
          path: '/api/v1/referred_user',
          body: { referral_code: f.link.referral_code, referred_user_id: id },
        },
        201,
      );
      return id;
    },
  };
  const cases = RECIPES.map((r): EndpointCase => {
    const route = routes.find((x) => `${x.method} ${x.path}` === r.route);
    if (!route) throw new Error(`bench case ${r.key}: no row ${r.route} in lib/routes.ts`);
    const pool: string[] = [];
    return {
      key: r.key,
      label: r.label ?? r.route,
      route: r.route,
      budget: route.dynamoCalls,
      auth: route.auth,
      status: r.status,
      quietMs: r.quietMs,
      async prepare(n) {
        if (!r.fresh) return;
        for (let i = 0; i < n; i++) pool.push(await makeFresh[r.fresh]());
        await settle?.();
      },
      request() {
        const fresh = r.fresh ? pool.shift() : '';
        if (fresh === undefined) throw new Error(`${r.key}: prepare() was not called with enough`);
        const [method] = r.route.split(' ');
        return { method: method!, path: r.path(f, fresh), body: r.body?.(f, fresh), headers: r.headers };
      },
    };
  });
  const covered = new Set(RECIPES.map((r) => r.route));
  const unmeasured: string[] = [];
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    if (covered.has(id)) continue;
    if (route.method !== 'GET' || route.path.includes('{')) {
      unmeasured.push(id);
      continue;
    }
    cases.push({
      key: route.name,
      label: id,
      route: id,
      budget: route.dynamoCalls,
      auth: route.auth,
      status: 200,
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: route.path }),
    });
  }
  return { cases, unmeasured };
}

/** Warm every route, so later measurements never include a module load. */
export async function warmUp(client: BenchClient, cases: EndpointCase[], times = 3): Promise<void> {
  for (const endpoint of cases) {
    await endpoint.prepare(times);
    for (let i = 0; i < times; i++) {
      const res = await client.send(endpoint.request());
      if (res.status !== endpoint.status)
        throw new Error(
          `${endpoint.label}: expected ${endpoint.status}, got ${res.status} ${res.body.slice(0, 300)}`,
        );
    }
  }
}

/** Items put straight into the table, 25 per BatchWriteItem, `parallel` batches at a time. */
export async function batchPut(
  db: DynamoDBDocumentClient,
  tableName: string,
  items: readonly object[],
  parallel = 8,
): Promise<void> {
  const batches: Record<string, unknown>[][] = [];
  for (let i = 0; i < items.length; i += 25)
    batches.push(items.slice(i, i + 25) as Record<string, unknown>[]);
  let next = 0;
  const worker = async () => {
    for (let b = next++; b < batches.length; b = next++) {
      let pending = batches[b]!.map((Item) => ({ PutRequest: { Item } }));
      for (let attempt = 0; pending.length > 0; attempt++) {
        const out = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: pending } }));
        pending = (out.UnprocessedItems?.[tableName] as typeof pending | undefined) ?? [];
        if (pending.length > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 20 * 2 ** attempt)));
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}
