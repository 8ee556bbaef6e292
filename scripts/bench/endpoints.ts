/** Every endpoint parts 1 to 3 measure: a route of `lib/routes.ts` and what its request fills in. */
import { eventLookupKey } from '../../lib/db/entities/webhook-event.ts';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { operations } from '../../lib/operations/definitions.ts';
import { routeNamed, routes } from '../../lib/routes.ts';
import { getItems } from '../../tools/table.ts';
import { eventually, mapLimit } from '../../tools/wait.ts';
import type { BenchEnvironment } from './environment.ts';
import { type Floor, replayFloor } from './floor.ts';
import { BROWSER, visitOf } from './traffic.ts';

/** A campaign, a link of it with a referrer, a referred user and its signup event, and a campaign whose webhook is the gateway's `/health`. */
export type Fixtures = Awaited<ReturnType<typeof createFixtures>>;
type Values = Record<string, string>;
interface Recipe {
  route: string;
  key?: string;
  note?: string;
  query?(f: Fixtures, fresh: string): Values;
  body?(f: Fixtures, fresh: string): unknown;
  /** The path's `{parameters}` when not the fixtures of their names (a conversion's id). */
  path?(f: Fixtures, fresh: string): Values;
  headers?: Values;
  /** Makes what one request uses up (a campaign to delete, a referred user without an action). */
  fresh?(env: BenchEnvironment, f: Fixtures): Promise<string>;
  quietMs?: number;
  /** Counted, not timed: its webhook POST or redelivery is work the DynamoDB floor does not stand for. */
  untimed?: true;
}

const purchase = { action_type: 'purchase', metadata: { plan: 'pro', amount_cents: 4900, coupon: 'SPRING' } };
let unique = 0;
const uid = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;
const pick =
  (...keys: Array<keyof Fixtures>) =>
  (f: Fixtures) =>
    Object.fromEntries(keys.map((k) => [k, f[k]]));
const id = (key: keyof Fixtures) => (f: Fixtures) => ({ id: f[key] });
/** The `id` of the path or query: what `fresh` made for the request. */
const freshId = (_: Fixtures, id: string) => ({ id });
const newUser = () => ({ referred_user_id: `u-${uid()}` });
const VISITOR = { 'user-agent': BROWSER, referer: 'https://news.example.org/post/1' };
const sale = (f: Fixtures) => ({ ...pick('campaign_id', 'referred_user_id')(f), amount: 4990 });
/** A sale of the fixtures' referred user: its id. */
const newConversion = async (env: BenchEnvironment, f: Fixtures) =>
  (await env.client.call<{ id: string }>('POST', '/api/v1/conversion', sale(f))).id;

/** A new referrer's signup on the rewards campaign: its reward's id once listed (`approve`: the referrer's id).
 * A referrer of its own: its reward is found without knowing how a reward's id is derived. */
async function newReward(env: BenchEnvironment, f: Fixtures, approve = false): Promise<string> {
  const campaign_id = f.rewards_campaign_id;
  const referrer_id = `rw-${uid()}`;
  const post = <T>(path: string, body: object) => env.client.call<T>('POST', path, body);
  const link = await post<{ referral_code: string }>('/api/v1/referral_link', { campaign_id, referrer_id });
  await post('/api/v1/referred_user', { referral_code: link.referral_code, ...newUser() });
  const listed = `/api/v1/rewards/${campaign_id}?recipient_id=${referrer_id}`;
  const first = async () => (await env.client.call<Array<{ id: string }>>('GET', listed))[0];
  const reward = await eventually(`a reward of ${referrer_id}`, first, 30_000, 200);
  if (approve) await env.client.call('POST', `/api/v1/reward/${reward.id}/approve`);
  return approve ? referrer_id : reward.id;
}
const onRewards = (f: Fixtures) => ({ campaign_id: f.rewards_campaign_id });

const RECIPES: Recipe[] = [
  { route: 'CreateCampaign', body: () => ({ url: 'example.com/spring', name: 'Spring' }) },
  { route: 'GetCampaign', query: id('campaign_id') },
  { route: 'UpdateCampaign', query: id('campaign_id'), body: () => ({ name: `Bench ${uid()}` }) },
  {
    ...{ route: 'DeleteCampaign', query: (_, fresh) => ({ id: fresh }) },
    fresh: async (env) =>
      (await env.client.call<{ id: string }>('POST', '/api/v1/campaign', { url: 'x.com', name: 'Gone' })).id,
    // Each delete sets off a purge, which can start after 250 ms of quiet: out of the next count.
    quietMs: 1_000,
  },
  { route: 'CreateReferralLink', body: (f) => ({ campaign_id: f.campaign_id, referrer_id: 'referrer-new' }) },
  {
    ...{ route: 'GetReferralLink', key: 'GetReferralLinkByCode', note: 'by referral_code' },
    query: pick('referral_code'),
  },
  { route: 'GetReferralLink', key: 'GetReferralLinkById', note: 'by id', query: id('link_id') },
  { route: 'ListCampaignLinks' },
  { route: 'ListReferrerLinks' },
  { route: 'ListReferredUsers' },
  { route: 'CreateReferredUser', body: (f) => ({ ...pick('referral_code')(f), ...newUser() }) },
  {
    // A visit of a campaign with click ids on per request: its redirect's `rfclid`.
    ...{ route: 'CreateReferredUser', key: 'CreateReferredUserByClick', note: 'by click id' },
    fresh: async (env, f) => {
      const { headers } = await env.client.send(visitOf(f.click_referral_code, BROWSER));
      const location = headers.location ?? '';
      const id = new URL(location).searchParams.get('rfclid');
      if (!id) throw new Error(`no rfclid in ${location}`);
      return id;
    },
    body: (_, click) => ({ click_id: click, ...newUser() }),
  },
  { route: 'GetReferredUser', query: pick('campaign_id', 'referred_user_id') },
  {
    // A new referred user per request: the worst case, which nothing a warm container remembers helps.
    ...{ route: 'CreateReferredUserAction', note: 'first action of a new referred user' },
    fresh: async (env, f) => {
      const user = { referral_code: f.referral_code, referred_user_id: `first-action-${uid()}` };
      await env.client.call('POST', '/api/v1/referred_user', user);
      return user.referred_user_id;
    },
    body: (f, user) => ({ campaign_id: f.campaign_id, referred_user_id: user, ...purchase }),
  },
  { route: 'CreateLinkAction', body: (f) => ({ ...pick('referral_code')(f), ...purchase }) },
  { route: 'Visit', headers: VISITOR },
  {
    ...{ route: 'Visit', key: 'VisitClickIds', note: 'campaign with click ids: rfclid in Location' },
    ...{ path: (f: Fixtures) => ({ referral_code: f.click_referral_code }), headers: VISITOR },
  },
  { route: 'GetAnalytics', query: () => ({ granularity: 'day' }) },
  { route: 'GetAnalyticsTop' },
  { route: 'ListWebhookDeliveries' },
  { route: 'ListEvents' },
  {
    // A new signup's event per request: one event takes at most 5 redeliveries an hour.
    ...{ route: 'RedeliverEvent', untimed: true, quietMs: 1_000 },
    fresh: async (env, f) => {
      const user = { referral_code: f.referral_code, referred_user_id: `redeliver-${uid()}` };
      const { id } = await env.client.call<{ id: number }>('POST', '/api/v1/referred_user', user);
      const eventId = `evt_referred_user_${id}`;
      // Its lookup item comes from the stream consumer; a quiet table alone does not prove it came.
      const lookup = async () => (await getItems([eventLookupKey(env.tenant, eventId)], env.table))[0];
      await eventually(`the lookup of ${eventId}`, lookup, 60_000, 200);
      return eventId;
    },
    path: (_, event_id) => ({ event_id }),
  },
  { route: 'TestWebhook', query: id('hook_campaign_id'), untimed: true },
  { route: 'RotateWebhookSecret', query: id('hook_campaign_id') },
  { route: 'CreateConversion', body: (f) => ({ ...sale(f), external_id: `ord-${uid()}` }) },
  {
    ...{ route: 'RefundConversion', note: 'partial', fresh: newConversion },
    ...{ path: freshId, body: () => ({ amount: 1500 }) },
  },
  { route: 'GetConversion', fresh: newConversion, query: freshId },
  { route: 'ListConversions', query: () => ({ limit: '100' }) },
  { route: 'ListRewards', path: onRewards, query: () => ({ limit: '100' }) },
  { route: 'ApproveReward', note: 'ends a hold', fresh: newReward, path: freshId },
  { route: 'VoidReward', fresh: newReward, path: freshId, body: () => ({ reason: 'bench' }) },
  {
    ...{ route: 'GetBalance', query: () => ({ recipient: 'referrer' }) },
    path: (f) => ({ ...onRewards(f), recipient_id: f.rewards_referrer_id }),
  },
  {
    ...{ route: 'CreatePayout', note: 'one approved reward', fresh: (env, f) => newReward(env, f, true) },
    body: (f, referrer) => ({ ...onRewards(f), recipient: 'referrer', recipient_id: referrer }),
  },
  { route: 'ListPayouts', path: onRewards, query: () => ({ limit: '100' }) },
  {
    ...{ route: 'Visit', key: 'VisitCrawler', note: 'crawler, not recorded' },
    headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)' },
  },
];

/** Rewards (endpoints 27–32): a signup reward and a sale's share for the referrer, on hold 30 days. */
const REWARD_RULES = [
  { id: 'signup', on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 30 },
  { id: 'share', on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1000, hold_days: 30 },
];
/** A campaign with 150 links of one referrer and a referred user, made through the API 8 at a time. */
export async function createFixtures(env: BenchEnvironment) {
  const post = <T>(path: string, body: object) => env.maker.call<T>('POST', path, body);
  const campaign = (name: string, more?: object) =>
    post<{ id: string }>('/api/v1/campaign', { url: `https://example.com/${name}`, name, ...more });
  const link = (campaign_id: string, referrer_id?: string) =>
    post<{ id: number; referral_code: string }>('/api/v1/referral_link', { campaign_id, referrer_id });
  const { id: campaign_id } = await campaign('Bench');
  const links = await mapLimit(Array.from({ length: 150 }), 8, () => link(campaign_id, 'bench'));
  const { id: link_id, referral_code } = links[0]!;
  const user = { referral_code, referred_user_id: 'bench-user' };
  const signup = await post<{ id: number }>('/api/v1/referred_user', user);
  // Its webhook test POSTs to the gateway's own liveness route (a 405: the test's answer says so).
  const { id: hook_campaign_id } = await campaign('Hooks');
  const hook = { webhook_url: `${env.stack.baseUrl}/health` };
  await env.maker.call('PATCH', `/api/v1/campaign?id=${hook_campaign_id}`, hook);
  const ids = { campaign_id, link_id: `${link_id}`, event_id: `evt_referred_user_${signup.id}` };
  const clicks = await campaign('clicks', { click_ids: true });
  const { referral_code: click_referral_code } = await link(clicks.id);
  const rewards = await campaign('rewards', { reward_rules: REWARD_RULES });
  const rewards_referrer_id = 'bench-rewards';
  const rewardLink = await link(rewards.id, rewards_referrer_id);
  await mapLimit(Array.from({ length: 20 }), 8, async (_, i) => {
    const referred_user_id = `rw-user-${i}`;
    await post('/api/v1/referred_user', { referral_code: rewardLink.referral_code, referred_user_id });
    await post('/api/v1/conversion', { campaign_id: rewards.id, referred_user_id, amount: 4990 });
  });
  return {
    ...{ ...user, ...ids, referrer_id: 'bench', hook_campaign_id, click_referral_code },
    ...{ rewards_campaign_id: rewards.id, rewards_referrer_id },
  };
}

/** The cases, and the rows not measured. `settle` waits out the background work `prepare` set off. */
export function endpointCases(env: BenchEnvironment, f: Fixtures, settle: () => Promise<unknown>) {
  const has = (list: Recipe[], r: (typeof routes)[number]) => list.some((x) => x.route === r.name);
  const plain = routes.filter((r) => r.method === 'GET' && !r.path.includes('{') && !has(RECIPES, r));
  const recipes = [...RECIPES, ...plain.map((r): Recipe => ({ route: r.name }))];
  const unmeasured = routes.filter((r) => !has(recipes, r)).map((r) => `${r.method} ${r.path}`);
  const cases = recipes.map((r) => {
    const route = routeNamed(r.route);
    const pool: string[] = [];
    const label = `${route.method} ${route.path}${r.note ? ` (${r.note})` : ''}`;
    const status = operations[route.name as keyof typeof operations].success.status;
    return {
      /** Short stable key (chart labels, JSON): the row's name, or the recipe's own. */
      key: r.key ?? r.route,
      label,
      budget: route.dynamoCalls,
      status,
      quietMs: r.quietMs,
      timed: !r.untimed,
      /** Recorded by `recordCases` (none for a route without DynamoDB calls), and what its first replay saw refused. */
      floor: undefined as Floor | undefined,
      refused: [] as string[],
      async prepare(n: number) {
        if (!r.fresh) return;
        // Side by side: each reward waits on the stream, and one after another they took most of part 2.
        const maker = { ...env, client: env.maker };
        pool.push(...(await mapLimit(Array.from({ length: n }), 8, () => r.fresh!(maker, f))));
        await settle();
      },
      /** Its next request through the bench's client, failing on any status but its own. */
      async send() {
        const fresh = r.fresh ? pool.shift() : '';
        if (fresh === undefined) throw new Error(`${r.route}: prepare() was not called with enough`);
        const params: Values = { ...f, ...r.path?.(f, fresh) };
        const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? '');
        const query = new URLSearchParams(r.query?.(f, fresh)).toString();
        const [target, body] = [query ? `${path}?${query}` : path, r.body?.(f, fresh)];
        const res = await env.client.send({ method: route.method, path: target, body, headers: r.headers });
        if (res.status !== status)
          throw new Error(`${label}: expected ${status}, got ${res.status} ${res.body.slice(0, 300)}`);
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

export const WARM_UPS = 5;
/** Each case sent `WARM_UPS` times, then recorded `samples` times: part 1's counts, the median its floor. */
export async function recordCases(env: BenchEnvironment, cases: EndpointCase[], samples: number) {
  const out = [];
  for (const c of cases) {
    await c.prepare(WARM_UPS + samples);
    const seen: RecordedCall[][] = [];
    for (let i = 0; i < WARM_UPS; i++) await c.send();
    for (let i = 0; i < samples; i++) seen.push(await env.proxy.recording(c.send, c.quietMs));
    const ops = seen.map((calls) => countOps(calls, 'request'));
    const totals = ops.map((o) => Object.values(o).reduce((a, b) => a + b, 0));
    // The median sample, and the floor replays it: stream readers woken by a request's writes can
    // work inside its window, background work can land in a later one; the range shows the spread.
    const median = totals.indexOf([...totals].sort((a, b) => a - b)[Math.floor(totals.length / 2)]!);
    c.floor = replayFloor(seen[median]!, env.proxy.url);
    c.refused = (await c.floor?.run()) ?? [];
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
