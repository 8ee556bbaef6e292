/**
 * The DynamoDB round-trip budget of every route: once warm, one request makes
 * at most `dynamoCalls` calls (lib/routes.ts), reads and transactions alike, id-block
 * reservations and the authorizer's api-key lookup excepted.
 *
 * And its grant: every DynamoDB request a route's handler sends, in any case, warm-up, replay or
 * setup request, id blocks included, needs only IAM actions its row declares (`dynamo`, and
 * `Query` on its `queryIndexes`), which are all the stack grants it (`infra/grants.ts`). A handler
 * that starts sending something new fails here, before AWS would refuse it.
 *
 * Counted on the wire by the DynamoDB call counter the bench also uses (lib/local/dynamodb-counter.ts,
 * a proxy in front of the run's DynamoDB Local that the in-process handlers are pointed at), in a
 * window that is exactly the route handler's invocation: the requests go through an in-process
 * gateway (the local stack's, from lib/local/gateway.ts) whose handlers are wrapped to read the
 * counter before and after, so the authorizer's lookup before the handler is outside it. Every
 * attempt is a request on the wire, so a retried attempt counts as the round trip it is; id-block
 * reservations are told apart by the counter's categories. Each case is warmed once, then counted
 * over several samples; every row of the route table needs a case, so a new route cannot escape
 * the budget.
 *
 * The table is the run's DynamoDB Local (test/support/global-setup.ts); the global stack's
 * stream and queue pollers run in another process and never touch this client.
 */
import { createHash } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AUTHORIZER_GRANT,
  DELIVERY_LANE_GRANT,
  PURGE_GRANT,
  ROLLUP_STREAM_GRANT,
  WEBHOOK_STREAM_GRANT,
} from '../../infra/grant-lists.ts';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import {
  type DynamoCounter,
  diffCounts,
  type RecordedCall,
  startDynamoCounter,
} from '../../lib/local/dynamodb-counter.ts';
import { type RouteDefinition, type RouteRow, routes } from '../../lib/routes.ts';
import { eventually, waitUntil } from '../../tools/wait.ts';
import { BROWSER_UA } from '../support/records.ts';
import { configureInProcessHandlers, linkItem } from '../support/table.ts';

// The handlers read their configuration when their modules load (lib/db/table/client.ts makes the
// module-scope client from it), so everything from lib/ and functions/ past this point is
// imported dynamically.
configureInProcessHandlers();

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const SAMPLES = 3;
const CRAWLER_UA = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

// ---------------------------------------------------------------------------------------------
// Counting
// ---------------------------------------------------------------------------------------------

/** One handler invocation: the route it ran and the DynamoDB operations it sent, in order. */
interface Invocation {
  route: string;
  /** Id-block reservations (UpdateItem of a `SEQ#` key) are left out. */
  ops: string[];
}

let last: Invocation | undefined;

let counter: DynamoCounter;

/**
 * The IAM actions one DynamoDB request needs, each on the table or on the index it names. IAM
 * authorizes a transaction by its items (a Put as PutItem, an Update as UpdateItem, a
 * ConditionCheck as ConditionCheckItem, a Get as GetItem), not by `TransactWriteItems` itself.
 */
function iamActionsOf(call: RecordedCall): Array<{ action: string; index?: string }> {
  let body: {
    IndexName?: string;
    TransactItems?: Array<Record<string, unknown>>;
  } = {};
  try {
    body = JSON.parse(call.body) as typeof body;
  } catch {
    // Not JSON: judged by its operation alone.
  }
  if (call.op === 'TransactWriteItems' || call.op === 'TransactGetItems') {
    const kinds: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return (body.TransactItems ?? []).flatMap((item) =>
      Object.keys(item).map((kind) => ({ action: kinds[kind] ?? `${call.op}.${kind}` })),
    );
  }
  return [{ action: call.op, index: body.IndexName }];
}

/** A function's grant on the table: a route row's `dynamo` and `queryIndexes`, or `infra/grant-lists.ts`. */
interface Grant {
  readonly actions: readonly string[];
  readonly queryIndexes?: readonly string[];
}

const grantOf = (route: RouteRow): Grant => ({ actions: route.dynamo, queryIndexes: route.queryIndexes });

/** What `grant` does not allow among `calls`, as readable lines (none when all is granted). */
function outsideGrant(grant: Grant, calls: readonly RecordedCall[]): string[] {
  const onTable = new Set<string>(grant.actions);
  const indexes = new Set<string>(grant.queryIndexes ?? []);
  return calls.flatMap((call) =>
    iamActionsOf(call)
      .filter(({ action, index }) =>
        index ? !(action === 'Query' && indexes.has(index)) : !onTable.has(action),
      )
      .map(({ action, index }) => `${action}${index ? ` on index ${index}` : ''} (in ${call.op})`),
  );
}

/** Every handler invocation of the run (setup, warm-ups, samples, replays) and what it sent. */
const granted: Array<{ route: RouteRow; calls: RecordedCall[] }> = [];
/** Every authorizer invocation of the run and what it sent. */
const authorizerCalls: RecordedCall[][] = [];

/** The DynamoDB requests `run` sends through the counter. */
async function recording(run: () => Promise<unknown>): Promise<RecordedCall[]> {
  counter.record();
  try {
    await run();
    return counter.recorded();
  } catch (err) {
    counter.recorded();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// The in-process gateway and a small HTTP client
// ---------------------------------------------------------------------------------------------

let server: Server;
let baseUrl: string;
let apiKey: string;

interface Request {
  method: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
}

interface Response {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: the cases read a few fields of known responses
  body: any;
  text: string;
}

async function send(req: Request): Promise<Response> {
  const headers: Record<string, string> = { 'api-key': apiKey, ...req.headers };
  let body: string | undefined;
  if (req.body !== undefined) {
    body = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${req.path}`, { method: req.method, headers, body, redirect: 'manual' });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** A request the setup needs, expecting `status`; its body. */
// biome-ignore lint/suspicious/noExplicitAny: setup reads a few fields of known responses
async function expectStatus(req: Request, status: number): Promise<any> {
  const res = await send(req);
  if (res.status !== status) {
    throw new Error(
      `${req.method} ${req.path}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`,
    );
  }
  return res.body;
}

// ---------------------------------------------------------------------------------------------
// Data, made through the API
// ---------------------------------------------------------------------------------------------

interface Link {
  id: number;
  referral_code: string;
}

let unique = 0;
/** Unique in this run; letters, digits and dashes only, so also a valid referral code. */
const uid = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${(unique++).toString(36)}`;

const newCampaign = async (name = 'Round trips'): Promise<string> =>
  (
    await expectStatus(
      { method: 'POST', path: '/api/v1/campaign', body: { url: 'https://example.com/landing', name } },
      201,
    )
  ).id;

const newLink = async (campaignId: string, referrerId: string | null): Promise<Link> =>
  expectStatus(
    {
      method: 'POST',
      path: '/api/v1/referral_link',
      body: { campaign_id: campaignId, referrer_id: referrerId },
    },
    201,
  );

const newReferredUser = async (link: Link): Promise<string> => {
  const id = uid('referred');
  await expectStatus(
    {
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_code: link.referral_code, referred_user_id: id },
    },
    201,
  );
  return id;
};

/** A counted visit of `link` (its campaign has `click_ids` on) and the click id of its `Location`. */
const clickOf = async (link: Link): Promise<string> => {
  const res = await send({
    method: 'GET',
    path: `/r/${link.referral_code}`,
    headers: { 'user-agent': BROWSER_UA },
  });
  const id = res.status === 302 && new URL(res.headers.get('location') ?? '').searchParams.get('rfclid');
  if (!id) throw new Error(`no click id: ${res.status} ${res.headers.get('location')}`);
  return id;
};
/** A referred user of the run's link, who can buy. */
const convertingUser = () => newReferredUser(data.link);

/** A conversion of the run's campaign: its id. */
const newConversion = async (): Promise<string> =>
  (
    await expectStatus(
      {
        method: 'POST',
        path: '/api/v1/conversion',
        body: { campaign_id: data.campaignId, referred_user_id: await convertingUser(), amount: 1000 },
      },
      201,
    )
  ).id;

/**
 * A reward of `recipientId` in the run's campaign, made by the ledger's own writer (the stream job
 * that makes them from signups is not built yet), held a day so the stack's release leaves it.
 */
const newReward = async (recipientId: string, inReview = false): Promise<string> => {
  const { rewardsForSignup } = await import('../../lib/domain/rewards.ts');
  const { rewardRulesInput } = await import('../../lib/domain/reward-rules.ts');
  const { createRewards } = await import('../../lib/db/rewards.ts');
  const rules = [
    { on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500, hold_days: 1 },
  ] as const;
  const campaign = { id: data.campaignId, currency: 'USD', reward_rules: rewardRulesInput(rules) };
  const signup = { referred_user_id: uid('rewarded'), referrer_id: recipientId, created_ms: Date.now() };
  const rewards = rewardsForSignup(campaign, signup, inReview ? ['repeat_visitor'] : []);
  await createRewards(data.tenant, data.campaignId, rewards);
  return (rewards[0] as { id: string }).id;
};

/** A pending reward of a sale, half refunded: it has an adjustment, which moves with it. */
const adjustedReward = async (recipientId: string): Promise<string> => {
  const { rewardsForConversion } = await import('../../lib/domain/rewards.ts');
  const { rewardRulesInput } = await import('../../lib/domain/reward-rules.ts');
  const { applyRefund, createRewards } = await import('../../lib/db/rewards.ts');
  const rules = [
    { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 1000, hold_days: 1 },
  ] as const;
  const campaign = { id: data.campaignId, currency: 'USD', reward_rules: rewardRulesInput(rules) };
  const sale = {
    id: uid('sale'),
    referred_user_id: uid('buyer'),
    referrer_id: recipientId,
    amount: 10_000,
    refunded_amount: 0,
    created_ms: Date.now(),
  };
  const [reward] = rewardsForConversion(campaign, sale, 0);
  if (!reward) throw new Error('no reward for the sale');
  await createRewards(data.tenant, data.campaignId, [reward]);
  await applyRefund(data.tenant, [reward.id], { ...sale, refunded_amount: 5_000 }, Date.now());
  return reward.id;
};

/** An approved reward of `recipientId`: its hold ended early by the ledger's own approve. */
const approvedReward = async (recipientId: string): Promise<string> => {
  const id = await newReward(recipientId);
  const { approveRewardById } = await import('../../lib/db/rewards.ts');
  await approveRewardById(data.tenant, id, Date.now());
  return id;
};

const payoutOf = (recipientId: string) => ({
  campaign_id: data.campaignId,
  recipient: 'referrer',
  recipient_id: recipientId,
  reference: 'tr_round_trips',
});

/** The next of `ids`, round and round. */
const turns = new Map<readonly string[], number>();
function inTurn(ids: readonly string[]): string {
  const turn = turns.get(ids) ?? 0;
  turns.set(ids, turn + 1);
  return ids[turn % ids.length]!;
}

const data = {} as {
  tenant: string;
  campaignId: string;
  /** A campaign with nothing in it but a webhook URL (no events ever reach that URL). */
  webhookCampaignId: string;
  link: Link;
  /** A link of a campaign with `click_ids` on: its visits carry `rfclid`. */
  clickLink: Link;
  referrerId: string;
  referredUserId: string;
  /** A cursor to the second page of the campaign's links (limit 2). */
  secondPage: string;
  /** A cursor to the second page of the account's campaigns (limit 1). */
  campaignsSecondPage: string;
  /** A cursor to the second page of the campaign's referred users (limit 1). */
  referredUsersSecondPage: string;
  /** A campaign with a full default page of referred users: 100, across several links. */
  fullPageCampaignId: string;
  /** A campaign whose webhook URL refuses connections (port 9), for the test event and rotation. */
  hookCampaignId: string;
  /**
   * Signups' events of `campaignId` in its feed (found by redelivery through their lookup items),
   * and a poll cursor of the feed. Several, taken in turn: one event may be redelivered only
   * `REDELIVERIES_PER_HOUR` times an hour, fewer than the redelivery cases send.
   */
  eventIds: string[];
  /** Actions' events of `campaignId`, found by redelivery through their action items; in turn too. */
  actionEventIds: string[];
  feedCursor: string;
};

// ---------------------------------------------------------------------------------------------
// Cases: at least one per route of the table
// ---------------------------------------------------------------------------------------------

interface Case {
  /** `name` of the route-table row this case exercises. */
  route: string;
  label: string;
  status: number;
  /** The request of one sample; any setup it makes runs before the counted request. */
  request: () => Request | Promise<Request>;
}

/**
 * A full page of the referred-user list at the default limit: its users' items and its distinct
 * links are more than one BatchGetItem's 100 keys, whatever the number of links.
 */
const FULL_PAGE_USERS = 100;
const FULL_PAGE_LINKS = 5;
const FULL_PAGE_LABEL = `a full page: ${FULL_PAGE_USERS} users across ${FULL_PAGE_LINKS} links`;

const cases: Case[] = [
  {
    route: 'CreateCampaign',
    label: 'create',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/campaign',
      body: { url: 'example.com/spring', name: 'Spring' },
    }),
  },
  {
    route: 'GetCampaign',
    label: 'fetch',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/campaign?id=${data.campaignId}` }),
  },
  {
    route: 'UpdateCampaign',
    label: 'rename',
    status: 200,
    request: () => ({
      method: 'PATCH',
      path: `/api/v1/campaign?id=${data.campaignId}`,
      body: { name: uid('Renamed') },
    }),
  },
  {
    route: 'UpdateCampaign',
    label: 'set a webhook URL',
    status: 200,
    request: () => ({
      method: 'PATCH',
      path: `/api/v1/campaign?id=${data.webhookCampaignId}`,
      body: { webhook_url: `http://127.0.0.1:9/${uid('hook')}` },
    }),
  },
  {
    route: 'UpdateCampaign',
    label: 'set reward rules',
    status: 200,
    request: () => ({
      method: 'PATCH',
      path: `/api/v1/campaign?id=${data.campaignId}`,
      body: {
        reward_rules: [
          {
            on: 'conversion',
            recipient: 'referrer',
            type: 'percent',
            amount: Math.ceil(Math.random() * 9999),
          },
        ],
      },
    }),
  },
  {
    route: 'UpdateCampaign',
    label: 'no changes',
    status: 200,
    request: () => ({ method: 'PATCH', path: `/api/v1/campaign?id=${data.campaignId}`, body: {} }),
  },
  {
    route: 'DeleteCampaign',
    label: 'delete',
    status: 204,
    request: async () => ({ method: 'DELETE', path: `/api/v1/campaign?id=${await newCampaign('Doomed')}` }),
  },
  {
    route: 'ListCampaigns',
    label: 'first page',
    status: 200,
    request: () => ({ method: 'GET', path: '/api/v1/campaigns' }),
  },
  {
    route: 'ListCampaigns',
    label: 'second page by cursor',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/campaigns?limit=1&cursor=${data.campaignsSecondPage}` }),
  },
  {
    route: 'CreateReferralLink',
    label: 'generated code, with a referrer',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/referral_link',
      body: { campaign_id: data.campaignId, referrer_id: 'referrer-other' },
    }),
  },
  {
    route: 'CreateReferralLink',
    label: 'custom code, no referrer',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/referral_link',
      body: { campaign_id: data.campaignId, referral_code: uid('rt') },
    }),
  },
  {
    route: 'GetReferralLink',
    label: 'by code',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referral_link?referral_code=${data.link.referral_code}`,
    }),
  },
  {
    route: 'GetReferralLink',
    label: 'by id',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/referral_link?id=${data.link.id}` }),
  },
  {
    route: 'GetReferralLink',
    label: 'by code and id',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referral_link?referral_code=${data.link.referral_code}&id=${data.link.id}`,
    }),
  },
  {
    route: 'ListCampaignLinks',
    label: 'first page',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/campaign_referral_links/${data.campaignId}` }),
  },
  {
    route: 'ListCampaignLinks',
    label: 'second page by cursor',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/campaign_referral_links/${data.campaignId}?limit=2&cursor=${data.secondPage}`,
    }),
  },
  {
    route: 'ListReferrerLinks',
    label: 'first page',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referral_link/${data.campaignId}/${encodeURIComponent(data.referrerId)}`,
    }),
  },
  {
    route: 'ListReferredUsers',
    label: 'first page, whole campaign',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/referred_users/${data.campaignId}` }),
  },
  {
    route: 'ListReferredUsers',
    label: 'second page by cursor',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referred_users/${data.campaignId}?limit=1&cursor=${data.referredUsersSecondPage}`,
    }),
  },
  {
    route: 'ListReferredUsers',
    label: "one link's",
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referred_users/${data.campaignId}?referral_link_id=${data.link.id}`,
    }),
  },
  {
    route: 'ListReferredUsers',
    label: "one referrer's",
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referred_users/${data.campaignId}?referrer_id=${encodeURIComponent(data.referrerId)}`,
    }),
  },
  {
    route: 'ListReferredUsers',
    label: FULL_PAGE_LABEL,
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referred_users/${data.fullPageCampaignId}?limit=${FULL_PAGE_USERS}`,
    }),
  },
  {
    route: 'CreateReferredUser',
    label: 'by code',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_code: data.link.referral_code, referred_user_id: uid('signup') },
    }),
  },
  {
    route: 'CreateReferredUser',
    label: 'by link id',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_link_id: data.link.id, referred_user_id: uid('signup') },
    }),
  },
  {
    route: 'CreateReferredUser',
    label: 'by click id',
    status: 201,
    request: async () => ({
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { click_id: await clickOf(data.clickLink), referred_user_id: uid('signup') },
    }),
  },
  {
    route: 'GetReferredUser',
    label: 'fetch',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/referred_user?campaign_id=${data.campaignId}&referred_user_id=${data.referredUserId}`,
    }),
  },
  {
    route: 'CreateReferredUserAction',
    label: 'first action of a brand-new referred user',
    status: 201,
    request: async () => ({
      method: 'POST',
      path: '/api/v1/action/referred_user',
      body: {
        campaign_id: data.campaignId,
        referred_user_id: await newReferredUser(data.link),
        action_type: 'signup',
        metadata: { step: 1 },
      },
    }),
  },
  {
    route: 'CreateReferredUserAction',
    label: 'repeat action of a referred user',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/action/referred_user',
      body: {
        campaign_id: data.campaignId,
        referred_user_id: data.referredUserId,
        action_type: 'purchase',
        metadata: { plan: 'pro', amount_cents: 4900 },
      },
    }),
  },
  {
    route: 'CreateLinkAction',
    label: 'by code',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_code: data.link.referral_code, action_type: 'share', metadata: { channel: 'email' } },
    }),
  },
  {
    route: 'CreateLinkAction',
    label: 'by link id',
    status: 201,
    request: () => ({
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_link_id: data.link.id, action_type: 'share' },
    }),
  },
  {
    route: 'Visit',
    label: 'browser (recorded)',
    status: 302,
    request: () => ({
      method: 'GET',
      path: `/r/${data.link.referral_code}`,
      headers: { 'user-agent': BROWSER_UA, referer: 'https://news.example.org/post/1' },
    }),
  },
  {
    route: 'Visit',
    label: 'browser, campaign with click ids (recorded, rfclid in Location)',
    status: 302,
    request: () => ({
      method: 'GET',
      path: `/r/${data.clickLink.referral_code}`,
      headers: { 'user-agent': BROWSER_UA },
    }),
  },
  {
    route: 'Visit',
    label: 'crawler (not recorded)',
    status: 302,
    request: () => ({
      method: 'GET',
      path: `/r/${data.link.referral_code}`,
      headers: { 'user-agent': CRAWLER_UA },
    }),
  },
  {
    route: 'Visit',
    label: 'HEAD (not recorded)',
    status: 302,
    request: () => ({
      method: 'HEAD',
      path: `/r/${data.link.referral_code}`,
      headers: { 'user-agent': BROWSER_UA },
    }),
  },
  {
    route: 'GetAnalytics',
    label: 'the default 30 days',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/analytics/${data.campaignId}` }),
  },
  {
    route: 'GetAnalytics',
    label: 'a week of hours of one referrer',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/analytics/${data.campaignId}?granularity=hour&referrer_id=${encodeURIComponent(data.referrerId)}`,
    }),
  },
  {
    route: 'GetAnalyticsTop',
    label: 'links by visits',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/analytics/${data.campaignId}/top?by=referral_link&metric=visits`,
    }),
  },
  {
    route: 'ListWebhookDeliveries',
    label: 'first page',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/webhook_deliveries/${data.hookCampaignId}` }),
  },
  {
    route: 'ListWebhookDeliveries',
    label: 'failed attempts only',
    status: 200,
    request: () => ({
      method: 'GET',
      path: `/api/v1/webhook_deliveries/${data.hookCampaignId}?status=failed&limit=5`,
    }),
  },
  {
    route: 'ListEvents',
    label: 'first page',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/events/${data.campaignId}` }),
  },
  {
    route: 'ListEvents',
    label: 'polled with a cursor',
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/events/${data.campaignId}?cursor=${data.feedCursor}` }),
  },
  {
    route: 'RedeliverEvent',
    label: 'an event of the feed',
    status: 202,
    request: () => ({ method: 'POST', path: `/api/v1/events/${inTurn(data.eventIds)}/redeliver` }),
  },
  {
    route: 'RedeliverEvent',
    label: "an action's event (read from its action item)",
    status: 202,
    request: () => ({ method: 'POST', path: `/api/v1/events/${inTurn(data.actionEventIds)}/redeliver` }),
  },
  {
    route: 'TestWebhook',
    label: 'an endpoint that refuses the connection',
    status: 200,
    request: () => ({ method: 'POST', path: `/api/v1/campaign/webhook_test?id=${data.hookCampaignId}` }),
  },
  {
    route: 'RotateWebhookSecret',
    label: 'rotate',
    status: 200,
    request: () => ({
      method: 'POST',
      path: `/api/v1/campaign/rotate_webhook_secret?id=${data.hookCampaignId}`,
    }),
  },
  {
    route: 'CreateConversion',
    label: "a campaign's first (locks its currency)",
    status: 201,
    request: async () => {
      const campaignId = await newCampaign('Conversions');
      const link = await newLink(campaignId, 'seller');
      const buyer = await newReferredUser(link);
      return {
        method: 'POST',
        path: '/api/v1/conversion',
        body: { campaign_id: campaignId, referred_user_id: buyer, amount: 4990, external_id: uid('ord') },
      };
    },
  },
  {
    route: 'CreateConversion',
    label: 'a later one, with a key',
    status: 201,
    request: async () => ({
      method: 'POST',
      path: '/api/v1/conversion',
      headers: { 'idempotency-key': uid('conversion') },
      body: { campaign_id: data.campaignId, referred_user_id: await convertingUser(), amount: 100 },
    }),
  },
  {
    route: 'CreateConversion',
    label: 'a replay of its key',
    status: 201,
    request: async () => {
      const key = uid('replayed');
      const body = { campaign_id: data.campaignId, referred_user_id: await convertingUser(), amount: 100 };
      await expectStatus(
        { method: 'POST', path: '/api/v1/conversion', headers: { 'idempotency-key': key }, body },
        201,
      );
      return { method: 'POST', path: '/api/v1/conversion', headers: { 'idempotency-key': key }, body };
    },
  },
  {
    route: 'RefundConversion',
    label: 'a partial refund',
    status: 200,
    request: async () => ({
      method: 'POST',
      path: `/api/v1/conversion/${await newConversion()}/refund`,
      body: { amount: 10 },
    }),
  },
  {
    route: 'RefundConversion',
    label: 'a replay of its key',
    status: 200,
    request: async () => {
      const key = uid('refund');
      const path = `/api/v1/conversion/${await newConversion()}/refund`;
      await expectStatus(
        { method: 'POST', path, headers: { 'idempotency-key': key }, body: { amount: 5 } },
        200,
      );
      return { method: 'POST', path, headers: { 'idempotency-key': key }, body: { amount: 5 } };
    },
  },
  {
    route: 'GetConversion',
    label: 'fetch',
    status: 200,
    request: async () => ({ method: 'GET', path: `/api/v1/conversion?id=${await newConversion()}` }),
  },
  {
    route: 'ListConversions',
    label: "the campaign's",
    status: 200,
    request: async () => {
      await newConversion();
      return { method: 'GET', path: `/api/v1/conversions/${data.campaignId}?limit=5` };
    },
  },
  {
    route: 'ListConversions',
    label: "a referrer's",
    status: 200,
    request: async () => {
      await newConversion();
      return {
        method: 'GET',
        path: `/api/v1/conversions/${data.campaignId}?referrer_id=${data.referrerId}&limit=5`,
      };
    },
  },
  {
    route: 'ListRewards',
    label: 'every state (five index partitions at once)',
    status: 200,
    request: async () => {
      await newReward('rewarded referrer');
      return { method: 'GET', path: `/api/v1/rewards/${data.campaignId}?limit=5` };
    },
  },
  {
    route: 'ListRewards',
    label: 'one state',
    status: 200,
    request: async () => {
      await newReward('rewarded referrer');
      return { method: 'GET', path: `/api/v1/rewards/${data.campaignId}?status=pending&limit=5` };
    },
  },
  {
    route: 'ListRewards',
    label: "a recipient's",
    status: 200,
    request: async () => {
      await newReward('rewarded referrer');
      return { method: 'GET', path: `/api/v1/rewards/${data.campaignId}?recipient_id=rewarded%20referrer` };
    },
  },
  {
    route: 'ApproveReward',
    label: 'from review',
    status: 200,
    request: async () => ({
      method: 'POST',
      path: `/api/v1/reward/${await newReward(uid('reviewed'), true)}/approve`,
    }),
  },
  {
    route: 'ApproveReward',
    label: 'a replay of its key',
    status: 200,
    request: async () => {
      const key = uid('approve');
      const path = `/api/v1/reward/${await newReward(uid('reviewed'), true)}/approve`;
      await expectStatus({ method: 'POST', path, headers: { 'idempotency-key': key } }, 200);
      return { method: 'POST', path, headers: { 'idempotency-key': key } };
    },
  },
  {
    route: 'ApproveReward',
    label: 'with an adjustment (read and moved with it)',
    status: 200,
    request: async () => ({
      method: 'POST',
      path: `/api/v1/reward/${await adjustedReward(uid('adjusted'))}/approve`,
    }),
  },
  {
    route: 'VoidReward',
    label: 'with an adjustment (read and voided with it)',
    status: 200,
    request: async () => ({
      method: 'POST',
      path: `/api/v1/reward/${await adjustedReward(uid('adjusted'))}/void`,
      body: { reason: 'order cancelled' },
    }),
  },
  {
    route: 'VoidReward',
    label: 'a pending one',
    status: 200,
    request: async () => ({
      method: 'POST',
      path: `/api/v1/reward/${await newReward(uid('voided'))}/void`,
      body: { reason: 'duplicate account' },
    }),
  },
  {
    route: 'GetBalance',
    label: "a referrer's",
    status: 200,
    request: async () => {
      await approvedReward('balanced referrer');
      return { method: 'GET', path: `/api/v1/balance/${data.campaignId}/balanced%20referrer` };
    },
  },
  {
    route: 'CreatePayout',
    label: 'of two approved rewards',
    status: 201,
    request: async () => {
      const recipient = uid('paid');
      await approvedReward(recipient);
      await approvedReward(recipient);
      return { method: 'POST', path: '/api/v1/payout', body: payoutOf(recipient) };
    },
  },
  {
    route: 'CreatePayout',
    label: 'nothing to pay (the campaign read for its 404)',
    status: 422,
    request: async () => {
      const recipient = uid('unpaid');
      await newReward(recipient);
      return { method: 'POST', path: '/api/v1/payout', body: payoutOf(recipient) };
    },
  },
  {
    route: 'CreatePayout',
    label: 'a replay of its key',
    status: 201,
    request: async () => {
      const key = uid('payout');
      const recipient = uid('paid');
      await approvedReward(recipient);
      const req = {
        method: 'POST',
        path: '/api/v1/payout',
        headers: { 'idempotency-key': key },
        body: payoutOf(recipient),
      };
      await expectStatus(req, 201);
      // Approved after the first payout: what the same request with another key pays.
      await approvedReward(recipient);
      return req;
    },
  },
  {
    route: 'ListPayouts',
    label: "the campaign's",
    status: 200,
    request: () => ({ method: 'GET', path: `/api/v1/payouts/${data.campaignId}?limit=5` }),
  },
  {
    route: 'ListPayouts',
    label: "a recipient's (its items read by key)",
    status: 200,
    request: async () => {
      const recipient = uid('listed');
      await approvedReward(recipient);
      await expectStatus({ method: 'POST', path: '/api/v1/payout', body: payoutOf(recipient) }, 201);
      return { method: 'GET', path: `/api/v1/payouts/${data.campaignId}?recipient_id=${recipient}` };
    },
  },
  {
    route: 'Health',
    label: 'liveness',
    status: 200,
    request: () => ({ method: 'GET', path: '/health' }),
  },
  {
    route: 'Readiness',
    label: 'the table answers',
    status: 200,
    request: () => ({ method: 'GET', path: '/api/v1/health/ready' }),
  },
  {
    route: 'GetOpenApiDocument',
    label: 'document',
    status: 200,
    request: () => ({ method: 'GET', path: '/api/v1/openapi.json' }),
  },
  {
    route: 'GetApiReference',
    label: 'page',
    status: 200,
    request: () => ({ method: 'GET', path: '/docs' }),
  },
  {
    route: 'GetDashboard',
    label: 'page',
    status: 200,
    request: () => ({ method: 'GET', path: '/dashboard' }),
  },
];

/**
 * Every POST again with a fresh `Idempotency-Key` per sample: the first request with a key stores
 * its answer inside its own write, so it costs no call more than without one (contract); the
 * webhook test, whose POST is outside the table, claims the key first, within its budget.
 */
const postRoutes = new Set(routes.filter((r) => r.method === 'POST').map((r) => r.name));
// Of a POST that answers 2xx: an error's answer is not stored, so a key changes nothing there.
cases.push(
  ...cases
    .filter((c) => postRoutes.has(c.route) && c.status < 400)
    .map((c) => ({
      ...c,
      label: `${c.label}, with an Idempotency-Key`,
      request: async () => {
        const req = await c.request();
        return { ...req, headers: { ...req.headers, 'idempotency-key': uid('key') } };
      },
    })),
);

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  // Before any handler module loads: their client is made from DYNAMODB_ENDPOINT at load.
  counter = await startDynamoCounter(process.env.DYNAMODB_ENDPOINT!);
  process.env.DYNAMODB_ENDPOINT = counter.endpoint;
  const { createGateway } = await import('../../lib/local/gateway.ts');
  const { TENANT_A } = await import('../support/global-setup.ts');
  type Gateway = Parameters<typeof createGateway>[0];
  apiKey = TENANT_A.key;
  data.tenant = TENANT_A.tenant;

  const load = async (module: string) =>
    (await import(pathToFileURL(join(projectRoot, 'functions', `${module}.ts`)).href)) as {
      handler: unknown;
    };
  const authorize = (await load('auth/authorizer')).handler as Gateway['authorizer'];
  // Its key lookup, recorded apart from the route's window like the counts are.
  const authorizer: Gateway['authorizer'] = async (event) => {
    counter.record();
    try {
      return await authorize(event);
    } finally {
      authorizerCalls.push(counter.recorded());
    }
  };
  const fallback = (await load('http/fallback')).handler as Gateway['fallback'];
  server = createGateway({
    authorizer,
    fallback,
    loadHandler: async (route) => {
      const handler = (await load(route.handler)).handler as Awaited<ReturnType<Gateway['loadHandler']>>;
      const row = routes.find((r) => r.name === route.name);
      if (!row) throw new Error(`no route row named ${route.name}`);
      return async (event, context) => {
        const before = counter.snapshot().counts;
        // Every request of this invocation, bodies included (requests are sent one at a time).
        counter.record();
        try {
          return await handler(event, context);
        } finally {
          granted.push({ route: row, calls: counter.recorded() });
          const seen = diffCounts(before, counter.snapshot().counts);
          last = {
            route: route.name,
            // Every call in the window but id blocks (`failed:` repeats calls already counted).
            ops: Object.entries(seen).flatMap(([key, n]) => {
              const [category, op] = key.split(':') as [string, string];
              return category === 'idblock' || category === 'failed' ? [] : Array<string>(n).fill(op);
            }),
          };
        }
      };
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  data.campaignId = await newCampaign();
  data.webhookCampaignId = await newCampaign('Webhook target');
  data.referrerId = 'referrer round trips';
  data.link = await newLink(data.campaignId, data.referrerId);
  const clickCampaignId = (
    await expectStatus(
      {
        method: 'POST',
        path: '/api/v1/campaign',
        body: { url: 'https://example.com/clicks', name: 'Round trips: click ids', click_ids: true },
      },
      201,
    )
  ).id;
  data.clickLink = await newLink(clickCampaignId, null);
  await newLink(data.campaignId, data.referrerId);
  await newLink(data.campaignId, null);
  const page = await send({
    method: 'GET',
    path: `/api/v1/campaign_referral_links/${data.campaignId}?limit=2`,
  });
  const cursor = page.headers.get('x-next-cursor');
  if (page.status !== 200 || !cursor) throw new Error(`no second page: ${page.status} ${page.text}`);
  data.secondPage = cursor;
  const campaigns = await send({ method: 'GET', path: '/api/v1/campaigns?limit=1' });
  const campaignsCursor = campaigns.headers.get('x-next-cursor');
  if (campaigns.status !== 200 || !campaignsCursor) {
    throw new Error(`no second page of campaigns: ${campaigns.status} ${campaigns.text}`);
  }
  data.campaignsSecondPage = campaignsCursor;
  data.referredUserId = await newReferredUser(data.link);
  await newReferredUser(data.link);
  await newReferredUser(data.link);
  const referred = await send({ method: 'GET', path: `/api/v1/referred_users/${data.campaignId}?limit=1` });
  const referredCursor = referred.headers.get('x-next-cursor');
  if (referred.status !== 200 || !referredCursor) {
    throw new Error(`no second page of referred users: ${referred.status} ${referred.text}`);
  }
  data.referredUsersSecondPage = referredCursor;
  data.fullPageCampaignId = await newCampaign('Round trips: a full page of referred users');
  const fullPageLinks: Link[] = [];
  for (let i = 0; i < FULL_PAGE_LINKS; i++)
    fullPageLinks.push(await newLink(data.fullPageCampaignId, `full page referrer ${i}`));
  // One at a time, as every request here: the counter's windows assume one request in flight.
  for (let i = 0; i < FULL_PAGE_USERS; i++) await newReferredUser(fullPageLinks[i % FULL_PAGE_LINKS]!);
  data.hookCampaignId = await newCampaign('Webhook operations');
  await expectStatus(
    {
      method: 'PATCH',
      path: `/api/v1/campaign?id=${data.hookCampaignId}`,
      body: { webhook_url: 'http://127.0.0.1:9/refused' },
    },
    200,
  );
  // The signups' events reach the feed through the global stack's stream poller.
  const signupEvents = (res: { body: Array<{ id: string }> }) =>
    res.body.map((e) => e.id).filter((id) => id.startsWith('evt_referred_user_'));
  const feed = await eventually('the signup events in the feed', async () => {
    const res = await send({ method: 'GET', path: `/api/v1/events/${data.campaignId}?limit=1000` });
    return res.status === 200 && signupEvents(res).length >= 3 && res.headers.get('x-poll-cursor')
      ? res
      : undefined;
  });
  data.eventIds = signupEvents(feed);
  data.feedCursor = feed.headers.get('x-poll-cursor')!;
  data.actionEventIds = [];
  for (let i = 0; i < 3; i++) {
    const action = await send({
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_code: data.link.referral_code, action_type: 'redeliverable' },
    });
    if (action.status !== 201) throw new Error(`no action: ${action.status} ${action.text}`);
    data.actionEventIds.push(actionEventId(action.body.id, data.campaignId));
  }
  // Their events (and action items) come from the stream: redeliverable once in the feed.
  await eventually('the action events in the feed', async () => {
    const res = await send({ method: 'GET', path: `/api/v1/events/${data.campaignId}?limit=1000` });
    const ids = new Set(res.status === 200 ? res.body.map((e: { id: string }) => e.id) : []);
    return data.actionEventIds.every((id) => ids.has(id)) ? true : undefined;
  });
});

afterAll(async () => {
  if (server)
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  await counter?.stop();
});

const routeId = (route: RouteDefinition) => `${route.method} ${route.path}`;

/** Send one case's request and return what its handler sent to DynamoDB. */
async function measure(route: RouteDefinition, c: Case): Promise<Invocation> {
  const req = await c.request();
  last = undefined;
  const sent = granted.length;
  const res = await send(req);
  const seen = last as Invocation | undefined;
  expect(res.status, `${routeId(route)} [${c.label}]: ${res.text.slice(0, 300)}`).toBe(c.status);
  expect(seen?.route, `${routeId(route)} [${c.label}] did not reach its handler`).toBe(route.name);
  // This request's own invocation (the case's setup requests are checked at the end).
  const own = granted.slice(sent).filter((g) => g.route.name === route.name);
  expect(
    own.flatMap((g) => outsideGrant(grantOf(g.route), g.calls)),
    `${routeId(route)} [${c.label}] sent DynamoDB actions its row in lib/routes.ts does not grant`,
  ).toEqual([]);
  return seen!;
}

describe('DynamoDB calls per request, once warm', () => {
  it('a replay of a keyed POST costs at most one call more than its budget', async () => {
    const replayable = cases.filter((c) => postRoutes.has(c.route) && c.label.endsWith('Idempotency-Key'));
    expect([...new Set(replayable.map((c) => c.route))].sort()).toEqual([...postRoutes].sort());
    for (const c of replayable) {
      const route = routes.find((r) => r.name === c.route)!;
      const req = await c.request();
      await measure(route, { ...c, request: () => req });
      // Later answers are replays; an action of a referred user answers 409 until its answer is stored.
      const replay = await waitUntil(async () => {
        last = undefined;
        const res = await send(req);
        if (res.status !== c.status) return undefined;
        expect(res.headers.get('idempotent-replayed'), `${routeId(route)} replay`).toBe('true');
        // Set by the replay's invocation (the gateway's wrapper above).
        return last as Invocation | undefined;
      }, 10_000);
      expect(replay, `${routeId(route)}: no replay`).toBeDefined();
      expect(replay!.ops.length, `${routeId(route)} replay: ${replay!.ops.join(' + ')}`).toBeLessThanOrEqual(
        route.dynamoCalls + 1,
      );
    }
  }, 60_000);

  it('a full page of referred users takes its whole budget: the Query, the campaign, 2 batch reads', async () => {
    const route = routes.find((r) => r.name === 'ListReferredUsers')!;
    const c = cases.find((x) => x.label === FULL_PAGE_LABEL)!;
    const page = await send(await c.request());
    expect(page.status, page.text.slice(0, 300)).toBe(200);
    expect(page.body).toHaveLength(FULL_PAGE_USERS);
    // Every listed user has a link object: the links and the users' items were both read.
    expect(new Set(page.body.map((u: { referral_link: Link }) => u.referral_link.id)).size).toBe(
      FULL_PAGE_LINKS,
    );
    await measure(route, c); // warm
    const { ops } = await measure(route, c);
    // 100 users' items and 5 links: 105 keys, two BatchGetItems of at most 100.
    expect([...ops].sort()).toEqual(['BatchGetItem', 'BatchGetItem', 'GetItem', 'Query']);
    expect(ops).toHaveLength(route.dynamoCalls);
  });

  it('every route of the table has at least one case', () => {
    const covered = new Set(cases.map((c) => c.route));
    expect(routes.filter((r) => !covered.has(r.name)).map(routeId)).toEqual([]);
    const known = new Set(routes.map((r) => r.name));
    expect(cases.filter((c) => !known.has(c.route)).map((c) => c.route)).toEqual([]);
  });

  it.each(cases.map((c) => [`${c.route}: ${c.label}`, c] as const))('%s', async (_, c) => {
    const route = routes.find((r) => r.name === c.route);
    if (!route) throw new Error(`no route named ${c.route}`);
    await measure(route, c); // warm: the module load and anything a warm container keeps
    for (let i = 0; i < SAMPLES; i++) {
      const { ops } = await measure(route, c);
      expect(
        ops.length,
        `${routeId(route)} [${c.label}] sample ${i + 1}: ${ops.length} DynamoDB calls ` +
          `(${ops.join(' + ') || 'none'}), budget ${route.dynamoCalls}`,
      ).toBeLessThanOrEqual(route.dynamoCalls);
    }
  });
});

/**
 * Granted actions a run may not send: reached only when timing allows. Everything else a row
 * grants must be sent by some request of the run, so no row keeps an action its handler dropped.
 */
const MAY_GO_UNSEEN: Readonly<Record<string, readonly string[]>> = {
  // A keyed retry that meets its key still held on the link (the stream consumer has not stored
  // the answer yet) reads the stored answer (GetItem) and answers 409; once the answer is stored,
  // the batch read finds it instead.
  CreateReferredUserAction: ['GetItem'],
  // A visit of a campaign deleted between its two round trips takes its item back.
  Visit: ['DeleteItem'],
};

describe('DynamoDB actions per route, against its grant', () => {
  it('every request of the run sent only actions its row grants, and every row was seen', () => {
    const byRoute = new Map<string, Set<string>>();
    const violations: string[] = [];
    for (const { route, calls } of granted) {
      const seen = byRoute.get(route.name) ?? new Set<string>();
      for (const call of calls) {
        for (const { action, index } of iamActionsOf(call)) seen.add(index ? `${action}(${index})` : action);
      }
      byRoute.set(route.name, seen);
      for (const line of outsideGrant(grantOf(route), calls)) violations.push(`${routeId(route)}: ${line}`);
    }
    expect(violations).toEqual([]);
    expect(routes.filter((r) => !byRoute.has(r.name)).map(routeId)).toEqual([]);
  });

  it('every action a row grants was sent by some request of the run (no grant outlives its use)', () => {
    const unused = routes.flatMap((route) => {
      const seen = new Set(
        granted
          .filter((g) => g.route.name === route.name)
          .flatMap((g) => g.calls.flatMap(iamActionsOf))
          .map(({ action, index }) => (index ? `${action}(${index})` : action)),
      );
      const declared = [...route.dynamo, ...(route.queryIndexes ?? []).map((index) => `Query(${index})`)];
      const exempt = new Set(MAY_GO_UNSEEN[route.name] ?? []);
      return declared.filter((a) => !seen.has(a) && !exempt.has(a)).map((a) => `${routeId(route)}: ${a}`);
    });
    expect(unused).toEqual([]);
  });
});

/** The actions `calls` needed, each once, sorted (`Query(GSI2)` for an index). */
const actionsIn = (calls: readonly RecordedCall[]) =>
  [
    ...new Set(
      calls.flatMap(iamActionsOf).map(({ action, index }) => (index ? `${action}(${index})` : action)),
    ),
  ].sort();

describe('DynamoDB actions of the authorizer and the consumers, against infra/grant-lists.ts', () => {
  it("the authorizer's key lookups sent only its grant", () => {
    expect(authorizerCalls.length).toBeGreaterThan(0);
    expect(actionsIn(authorizerCalls.flat())).toEqual(['GetItem']);
    expect(authorizerCalls.flatMap((calls) => outsideGrant(AUTHORIZER_GRANT, calls))).toEqual([]);
  });

  it("the webhook stream consumer writes a referred user's action item with only its grant", async () => {
    const { materializeStreamRecords } = await import('../../lib/webhooks/link-actions.ts');
    const { storedLinkAction } = await import('../../lib/db/entities/link.ts');
    const { marshall } = await import('@aws-sdk/util-dynamodb');
    // A link image as the UpdateItem of POST /action/referred_user leaves it, built here rather
    // than read back: the run's own stream consumer takes the action off the link within moments.
    const link = await newLink(await newCampaign('Grant check: stream consumer'), null);
    const stored = await linkItem(link.referral_code);
    const keyHash = createHash('sha256').update(uid('key')).digest('hex');
    const image = {
      ...stored,
      last_action: storedLinkAction({
        // Far above any id block of the run.
        id: 7_000_000_000_000_000 + unique++,
        at: new Date().toISOString(),
        action_type: 'grant_check',
        metadata: {},
        referred_user: null,
        idempotency: { key_hash: keyHash, request_hash: keyHash },
      }),
      // A held key whose hold has ended, which the consumer takes off the link.
      [`idem_${keyHash}`]: Date.now() - 11 * 60_000,
    };
    const calls = await recording(async () => {
      const result = await materializeStreamRecords([
        { eventName: 'MODIFY', dynamodb: { NewImage: marshall(image), SequenceNumber: '1' } },
      ]);
      expect(result).toEqual({ written: 1, failedSequenceNumbers: [] });
    });
    expect(actionsIn(calls)).toEqual(['ConditionCheckItem', 'PutItem', 'UpdateItem']);
    expect(outsideGrant(WEBHOOK_STREAM_GRANT, calls)).toEqual([]);
  });

  it("the stream consumers write the events feed (a signup's lookup included) and read the campaigns' webhooks, each with only its grant", async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const { recordsToSend } = await import('../../lib/webhooks/subscribed.ts');
    const { marshall } = await import('@aws-sdk/util-dynamodb');
    const campaignId = await newCampaign('Grant check: feed');
    const image = {
      PK: `grant-check#${uid('event')}`,
      SK: 'X',
      event_id: `evt_referred_user_${7_000_000_000_000_000 + unique++}`,
      event_type: 'referred_user.created',
      event_time: new Date().toISOString(),
      event_json: '{}',
      tenant: data.tenant,
      campaign_id: campaignId,
    };
    const records = [{ eventName: 'INSERT', dynamodb: { NewImage: marshall(image), SequenceNumber: '1' } }];
    // The feed: the second reader's.
    const feedCalls = await recording(async () => {
      expect(await recordFeedRecords(records, `grant-check-${uid('shard')}`)).toEqual({
        written: 1,
        failedSequenceNumbers: [],
      });
    });
    expect(actionsIn(feedCalls)).toEqual(['BatchWriteItem', 'ConditionCheckItem', 'GetItem', 'PutItem']);
    expect(outsideGrant(ROLLUP_STREAM_GRANT, feedCalls)).toEqual([]);
    // The queue's check: the webhook consumer's. No webhook on the campaign: the event is not queued.
    const queueCalls = await recording(async () => {
      expect(await recordsToSend(records)).toEqual([]);
    });
    expect(actionsIn(queueCalls)).toEqual(['BatchGetItem']);
    expect(outsideGrant(WEBHOOK_STREAM_GRANT, queueCalls)).toEqual([]);
  });

  it('a delivery lane reads its campaign and flags its endpoint with only its grant', async () => {
    const { loadWebhookTarget, setSlowLane } = await import('../../lib/db/webhook-targets.ts');
    const calls = await recording(async () => {
      await loadWebhookTarget(data.tenant, data.webhookCampaignId);
      // Another URL than the campaign's: the conditional write changes nothing.
      await setSlowLane(data.tenant, data.webhookCampaignId, 'http://127.0.0.1:9/not-the-campaigns', true);
    });
    expect(actionsIn(calls)).toEqual(['GetItem', 'UpdateItem']);
    expect(outsideGrant(DELIVERY_LANE_GRANT, calls)).toEqual([]);
  });

  it('the purge of a deleted campaign sends only its grant', async () => {
    const { purgeCampaign } = await import('../../lib/db/purge.ts');
    const campaignId = await newCampaign('Grant check: purge');
    await newReferredUser(await newLink(campaignId, 'referrer-purge'));
    await expectStatus({ method: 'DELETE', path: `/api/v1/campaign?id=${campaignId}` }, 204);
    // The run's own purge may get there first: whatever this pass still finds, it may touch.
    const calls = await recording(() => purgeCampaign(data.tenant, campaignId, Date.now() + 20_000));
    expect(actionsIn(calls)).toEqual(expect.arrayContaining(['GetItem', 'Query', 'Query(GSI2)']));
    expect(outsideGrant(PURGE_GRANT, calls)).toEqual([]);
  });
});
