/**
 * Every endpoint the bench measures, each with the request it sends through the gateway and its
 * floor: the same DynamoDB operations (same keys, same item shapes and sizes, same consistency,
 * same order, parallel where the handler is parallel) issued directly with the SDK, plus the
 * authorizer's api-key GetItem on protected routes, which the local gateway runs on every request.
 *
 * The operations mirror `lib/db/*` as documented there; the floor never goes through our code.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchGetCommand,
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { apiKeyItemKey, hashApiKey } from '../../lib/auth/api-keys.ts';
import { actionKey } from '../../lib/db/entities/action.ts';
import { campaignKey } from '../../lib/db/entities/campaign.ts';
import {
  CLEAR_LAST_ACTION,
  campaignLinksPartition,
  linkIdPartition,
  linkKey,
  newLinkItem,
  referrerLinksPartition,
  storedLinkAction,
} from '../../lib/db/entities/link.ts';
import { referredUserKey } from '../../lib/db/entities/referred-user.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { routes } from '../../lib/routes.ts';
import type { BenchEnvironment } from './environment.ts';
import type { BenchClient, RequestSpec } from './http-client.ts';

interface Campaign {
  id: string;
  url: string;
}
interface Link {
  id: number;
  referral_code: string;
  campaign_id: string;
  referrer_id: string | null;
}

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
  /** What the floor issues, in words. */
  floorOps: string;
  /**
   * How long the table must have been quiet before a counted request (default 250 ms): longer
   * where the previous request sets off background work that starts late.
   */
  quietMs?: number;
  /** Make resources for `n` more requests and `n` more floor iterations (outside any timing). */
  prepare(n: number): Promise<void>;
  request(): RequestSpec;
  /** Absent for routes that make no DynamoDB call: there is no floor to compare with. */
  floor?: () => Promise<void>;
}

/** A case as written below; its budget comes from the route table. */
type CaseSpec = Omit<EndpointCase, 'budget'>;

/** The DynamoDB call budget of a route-table row, by `METHOD /path` (a missing row is a bench bug). */
function budgetOf(routeId: string): number {
  const route = routes.find((r) => `${r.method} ${r.path}` === routeId);
  if (!route) throw new Error(`bench case for ${routeId}: no such row in lib/routes.ts`);
  return route.dynamoCalls;
}

export interface Fixtures {
  campaign: Campaign;
  /** A link of `campaign` (with a referrer) used by reads, visits and actions. */
  link: Link;
  /** A referred user of `link`, for the referred-user reads and actions. */
  referredUserId: string;
  referrerId: string;
  /** The floor's own campaign and link, so floor writes never touch measured counters. */
  floorCampaign: Campaign;
  floorLink: Link;
  floorReferredUserId: string;
  /** Response bodies of real writes: the floor writes items of the same size. */
  sampleAction: Record<string, unknown>;
  sampleReferredUser: Record<string, unknown>;
  listLinks: number;
}

const LIST_LINKS = 150;
const BENCH_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
const BOT_UA = 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)';

/** Campaign, links and a referred user made through the API, as a customer would. */
export async function createFixtures(env: BenchEnvironment): Promise<Fixtures> {
  const c = env.client;
  const campaign = await c.expect<Campaign>(
    {
      method: 'POST',
      path: '/api/v1/campaign',
      body: { url: 'https://example.com/landing?src=bench', name: 'Bench' },
    },
    201,
  );
  const referrerId = 'referrer-bench';
  let link: Link | undefined;
  for (let i = 0; i < LIST_LINKS; i++) {
    const created = await c.expect<Link>(
      {
        method: 'POST',
        path: '/api/v1/referral_link',
        body: { campaign_id: campaign.id, referrer_id: referrerId },
      },
      201,
    );
    link ??= created;
  }
  const referredUserId = 'referred-bench-user';
  await c.expect(
    {
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_code: link!.referral_code, referred_user_id: referredUserId },
    },
    201,
  );
  const sampleReferredUser = await c.expect(
    {
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_code: link!.referral_code, referred_user_id: 'referred-bench-sample' },
    },
    201,
  );
  const sampleAction = await c.expect(
    {
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_code: link!.referral_code, action_type: 'purchase', metadata: actionMetadata },
    },
    201,
  );
  const floorCampaign = await c.expect<Campaign>(
    {
      method: 'POST',
      path: '/api/v1/campaign',
      body: { url: 'https://example.com/landing?src=bench', name: 'Floor' },
    },
    201,
  );
  const floorLink = await c.expect<Link>(
    {
      method: 'POST',
      path: '/api/v1/referral_link',
      body: { campaign_id: floorCampaign.id, referrer_id: referrerId },
    },
    201,
  );
  const floorReferredUserId = 'referred-floor-user';
  await c.expect(
    {
      method: 'POST',
      path: '/api/v1/referred_user',
      body: { referral_code: floorLink.referral_code, referred_user_id: floorReferredUserId },
    },
    201,
  );
  return {
    campaign,
    link: link!,
    referredUserId,
    referrerId,
    floorCampaign,
    floorLink,
    floorReferredUserId,
    sampleAction,
    sampleReferredUser,
    listLinks: LIST_LINKS,
  };
}

const actionMetadata = { plan: 'pro', amount_cents: 4900, coupon: 'SPRING' };

/** A queue of prepared values, refilled by `prepare`. */
class Pool<T> {
  private items: T[] = [];
  push(...values: T[]) {
    this.items.push(...values);
  }
  take(): T {
    const v = this.items.shift();
    if (v === undefined) throw new Error('bench pool exhausted: prepare() was not called with enough');
    return v;
  }
}

let unique = 0;
const uid = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;

/** Campaign items exactly as `createCampaign` writes them, loaded straight into the table. */
async function putCampaigns(env: BenchEnvironment, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  const now = formatTimestamp(new Date());
  const items = ids.map((id) => ({
    ...campaignKey(env.tenant, id),
    type: 'campaign',
    tenant: env.tenant,
    id,
    created_at: now,
    url: 'https://example.com/landing?src=bench',
    name: 'Bench delete target',
  }));
  await batchPut(env.directDb, env.tableName, items);
  return ids;
}

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

/**
 * `settle` waits for background work a case's `prepare` set off (e.g. the webhook pipeline) to
 * finish, so it never overlaps what is measured next.
 */
export function endpointCases(
  env: BenchEnvironment,
  f: Fixtures,
  settle?: () => Promise<unknown>,
): EndpointCase[] {
  const T = env.tableName;
  const db = env.floorDb;
  const tenant = env.tenant;
  const c = f.campaign;
  const fc = f.floorCampaign;
  const fl = f.floorLink;
  const apiKeyKey = apiKeyItemKey(hashApiKey(env.apiKey));
  /** The authorizer's lookup (ApiKeyStore.tenantOf): an eventually consistent GetItem. */
  const authorize = () => db.send(new GetCommand({ TableName: T, Key: apiKeyKey }));
  const getCampaign = (id: string) =>
    db.send(new GetCommand({ TableName: T, Key: campaignKey(tenant, id), ConsistentRead: true }));
  const campaignExists = (id: string) =>
    db.send(
      new GetCommand({
        TableName: T,
        Key: campaignKey(tenant, id),
        ConsistentRead: true,
        ProjectionExpression: 'PK',
      }),
    );
  const getLink = (code: string) =>
    db.send(new GetCommand({ TableName: T, Key: linkKey(code), ConsistentRead: true }));
  const campaignCheck = (id: string) => ({
    ConditionCheck: {
      TableName: T,
      Key: campaignKey(tenant, id),
      ConditionExpression: 'attribute_exists(PK)',
    },
  });
  /** As in lib/db: every link write but a referred user's action removes that action's `last_action`. */
  const bumpLink = (code: string, counter: 'total_clicks' | 'total_referrals') => ({
    Update: {
      TableName: T,
      Key: linkKey(code),
      UpdateExpression: `ADD ${counter} :one ${CLEAR_LAST_ACTION}`,
      ConditionExpression: 'attribute_exists(PK)',
      ExpressionAttributeValues: { ':one': 1 },
    },
  });
  let floorActionId = 9_000_000_000_000;
  /** An action item of the same size as the handler's, without `event_type` (no webhook). */
  const floorActionPut = () => {
    const id = floorActionId++;
    return {
      Put: {
        TableName: T,
        Item: {
          ...actionKey(tenant, fc.id, id),
          type: 'action',
          link_code: fl.referral_code,
          floor_id: `evt_action_${id}`,
          floor_kind: 'action.created',
          floor_time: new Date().toISOString(),
          floor_data: JSON.stringify(f.sampleAction),
          tenant,
          campaign_id: fc.id,
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      },
    };
  };
  const transact = (items: unknown[]) =>
    db.send(new TransactWriteCommand({ TransactItems: items as never, ClientRequestToken: randomUUID() }));

  const deleteTargets = new Pool<string>();
  const newReferredUsers = new Pool<string>();
  const floorDeleteTargets = new Pool<string>();
  let floorLinkSeq = 0;
  const floorLinkId = () => 8_000_000_000_000 + floorLinkSeq++;

  const cases: CaseSpec[] = [
    {
      key: 'post-campaign',
      label: 'POST /api/v1/campaign',
      route: 'POST /api/v1/campaign',
      auth: true,
      status: 201,
      floorOps: 'PutItem',
      prepare: async () => undefined,
      request: () => ({
        method: 'POST',
        path: '/api/v1/campaign',
        body: { url: 'example.com/spring', name: 'Spring' },
      }),
      floor: async () => {
        await authorize();
        const id = randomUUID();
        await db.send(
          new PutCommand({
            TableName: T,
            Item: {
              ...campaignKey(tenant, id),
              type: 'campaign',
              tenant,
              id,
              created_at: formatTimestamp(new Date()),
              url: 'https://example.com/spring',
              name: 'Spring',
            },
            ConditionExpression: 'attribute_not_exists(PK)',
          }),
        );
      },
    },
    {
      key: 'get-campaign',
      label: 'GET /api/v1/campaign',
      route: 'GET /api/v1/campaign',
      auth: true,
      status: 200,
      floorOps: 'GetItem',
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: `/api/v1/campaign?id=${c.id}` }),
      floor: async () => {
        await authorize();
        await getCampaign(c.id);
      },
    },
    {
      key: 'patch-campaign',
      label: 'PATCH /api/v1/campaign',
      route: 'PATCH /api/v1/campaign',
      auth: true,
      status: 200,
      floorOps: 'UpdateItem (ALL_NEW)',
      prepare: async () => undefined,
      request: () => ({
        method: 'PATCH',
        path: `/api/v1/campaign?id=${c.id}`,
        body: { name: `Bench ${uid()}` },
      }),
      floor: async () => {
        await authorize();
        await db.send(
          new UpdateCommand({
            TableName: T,
            Key: campaignKey(tenant, fc.id),
            UpdateExpression: 'SET #name = :name',
            ConditionExpression: 'attribute_exists(PK)',
            ExpressionAttributeNames: { '#name': 'name' },
            ExpressionAttributeValues: { ':name': `Floor ${uid()}` },
            ReturnValues: 'ALL_NEW',
          }),
        );
      },
    },
    {
      key: 'delete-campaign',
      label: 'DELETE /api/v1/campaign',
      route: 'DELETE /api/v1/campaign',
      auth: true,
      status: 204,
      floorOps: 'DeleteItem',
      // Each delete sets off a purge (stream poll, purge queue, then its Query and GetItem), which
      // can start after 250 ms of quiet: wait it out so it never lands in the next delete's count.
      quietMs: 1_000,
      prepare: async (n) => {
        deleteTargets.push(...(await putCampaigns(env, n)));
        floorDeleteTargets.push(...(await putCampaigns(env, n)));
      },
      request: () => ({ method: 'DELETE', path: `/api/v1/campaign?id=${deleteTargets.take()}` }),
      floor: async () => {
        await authorize();
        await db.send(
          new DeleteCommand({
            TableName: T,
            Key: campaignKey(tenant, floorDeleteTargets.take()),
            ConditionExpression: 'attribute_exists(PK)',
          }),
        );
      },
    },
    {
      key: 'post-link',
      label: 'POST /api/v1/referral_link',
      route: 'POST /api/v1/referral_link',
      auth: true,
      status: 201,
      floorOps: 'GetItem + TransactWriteItems(Put, ConditionCheck)',
      prepare: async () => undefined,
      request: () => ({
        method: 'POST',
        path: '/api/v1/referral_link',
        body: { campaign_id: fc.id, referrer_id: 'referrer-new' },
      }),
      floor: async () => {
        await authorize();
        await db.send(
          new GetCommand({
            TableName: T,
            Key: campaignKey(tenant, fc.id),
            ConsistentRead: true,
            ProjectionExpression: '#url',
            ExpressionAttributeNames: { '#url': 'url' },
          }),
        );
        const item = newLinkItem({
          tenant,
          campaignId: fc.id,
          campaignUrl: fc.url,
          id: floorLinkId(),
          code: `FL${uid()}`.slice(0, 32),
          referrerId: 'referrer-floor',
          now: new Date(),
        });
        await transact([
          {
            Put: {
              TableName: T,
              Item: item,
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          campaignCheck(fc.id),
        ]);
      },
    },
    {
      key: 'get-link-code',
      label: 'GET /api/v1/referral_link?referral_code=',
      route: 'GET /api/v1/referral_link',
      auth: true,
      status: 200,
      floorOps: 'GetItem + GetItem',
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: `/api/v1/referral_link?referral_code=${f.link.referral_code}` }),
      floor: async () => {
        await authorize();
        await getLink(f.link.referral_code);
        await campaignExists(c.id);
      },
    },
    {
      key: 'get-link-id',
      label: 'GET /api/v1/referral_link?id=',
      route: 'GET /api/v1/referral_link',
      auth: true,
      status: 200,
      floorOps: 'Query(GSI1) + GetItem',
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: `/api/v1/referral_link?id=${f.link.id}` }),
      floor: async () => {
        await authorize();
        await db.send(
          new QueryCommand({
            TableName: T,
            IndexName: 'GSI1',
            KeyConditionExpression: 'GSI1PK = :pk',
            ExpressionAttributeValues: { ':pk': linkIdPartition(f.link.id) },
            Limit: 1,
          }),
        );
        await campaignExists(c.id);
      },
    },
    {
      key: 'list-campaign-links',
      label: 'GET /api/v1/campaign_referral_links/{campaign_id}',
      route: 'GET /api/v1/campaign_referral_links/{campaign_id}',
      auth: true,
      status: 200,
      floorOps: `Query(GSI2, 101 of ${LIST_LINKS}) ‖ GetItem`,
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: `/api/v1/campaign_referral_links/${c.id}` }),
      floor: async () => {
        await authorize();
        await Promise.all([
          db.send(
            new QueryCommand({
              TableName: T,
              IndexName: 'GSI2',
              KeyConditionExpression: 'GSI2PK = :pk',
              ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, c.id) },
              Limit: 101,
            }),
          ),
          campaignExists(c.id),
        ]);
      },
    },
    {
      key: 'list-referrer-links',
      label: 'GET /api/v1/referral_link/{campaign_id}/{referrer_id}',
      route: 'GET /api/v1/referral_link/{campaign_id}/{referrer_id}',
      auth: true,
      status: 200,
      floorOps: `Query(GSI3, 101 of ${LIST_LINKS}) ‖ GetItem`,
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: `/api/v1/referral_link/${c.id}/${f.referrerId}` }),
      floor: async () => {
        await authorize();
        await Promise.all([
          db.send(
            new QueryCommand({
              TableName: T,
              IndexName: 'GSI3',
              KeyConditionExpression: 'GSI3PK = :pk',
              ExpressionAttributeValues: { ':pk': referrerLinksPartition(tenant, c.id, f.referrerId) },
              Limit: 101,
            }),
          ),
          campaignExists(c.id),
        ]);
      },
    },
    {
      key: 'post-referred-user',
      label: 'POST /api/v1/referred_user',
      route: 'POST /api/v1/referred_user',
      auth: true,
      status: 201,
      floorOps: 'GetItem + TransactWriteItems(Put, Update, ConditionCheck)',
      prepare: async () => undefined,
      request: () => ({
        method: 'POST',
        path: '/api/v1/referred_user',
        body: { referral_code: f.link.referral_code, referred_user_id: `signup-${uid()}` },
      }),
      floor: async () => {
        await authorize();
        await getLink(fl.referral_code);
        const referredUserId = `floor-signup-${uid()}`;
        const id = floorActionId++;
        await transact([
          {
            Put: {
              TableName: T,
              Item: {
                ...referredUserKey(tenant, fc.id, referredUserId),
                type: 'referred_user',
                tenant,
                campaign_id: fc.id,
                id,
                created_at: formatTimestamp(new Date()),
                referred_user_id: referredUserId,
                link_code: fl.referral_code,
                link_id: fl.id,
                floor_id: `evt_referred_user_${id}`,
                floor_kind: 'referred_user.created',
                floor_time: new Date().toISOString(),
                floor_data: f.sampleReferredUser,
              },
              ConditionExpression: 'attribute_not_exists(PK)',
            },
          },
          bumpLink(fl.referral_code, 'total_referrals'),
          campaignCheck(fc.id),
        ]);
      },
    },
    {
      key: 'get-referred-user',
      label: 'GET /api/v1/referred_user',
      route: 'GET /api/v1/referred_user',
      auth: true,
      status: 200,
      floorOps: 'BatchGetItem(2 keys) + GetItem',
      prepare: async () => undefined,
      request: () => ({
        method: 'GET',
        path: `/api/v1/referred_user?campaign_id=${c.id}&referred_user_id=${f.referredUserId}`,
      }),
      floor: async () => {
        await authorize();
        await db.send(
          new BatchGetCommand({
            RequestItems: {
              [T]: {
                Keys: [referredUserKey(tenant, c.id, f.referredUserId), campaignKey(tenant, c.id)],
                ConsistentRead: true,
              },
            },
          }),
        );
        await getLink(f.link.referral_code);
      },
    },
    {
      key: 'post-user-action',
      label: 'POST /api/v1/action/referred_user (first action of a new referred user)',
      route: 'POST /api/v1/action/referred_user',
      auth: true,
      status: 201,
      floorOps: 'BatchGetItem(2 keys) + UpdateItem (ALL_NEW)',
      // Every request is the first action of a referred user made just for it (through the API,
      // outside any timing): the worst case, which nothing a warm container remembers can help.
      prepare: async (n) => {
        for (let i = 0; i < n; i++) {
          const id = `first-action-${uid()}`;
          await env.client.expect(
            {
              method: 'POST',
              path: '/api/v1/referred_user',
              body: { referral_code: f.link.referral_code, referred_user_id: id },
            },
            201,
          );
          newReferredUsers.push(id);
        }
        // Their signups' events go through the stream and the webhook queue: let that finish first.
        await settle?.();
      },
      request: () => ({
        method: 'POST',
        path: '/api/v1/action/referred_user',
        body: {
          campaign_id: c.id,
          referred_user_id: newReferredUsers.take(),
          action_type: 'purchase',
          metadata: actionMetadata,
        },
      }),
      floor: async () => {
        await authorize();
        await db.send(
          new BatchGetCommand({
            RequestItems: {
              [T]: {
                Keys: [referredUserKey(tenant, fc.id, f.floorReferredUserId), campaignKey(tenant, fc.id)],
                ConsistentRead: true,
              },
            },
          }),
        );
        // The action rides on the link's counter update; the stream makes its item, as for ours.
        await db.send(
          new UpdateCommand({
            TableName: T,
            Key: linkKey(fl.referral_code),
            UpdateExpression: 'ADD total_clicks :one SET last_action = :action',
            ConditionExpression: 'attribute_exists(PK) AND #id = :link',
            ExpressionAttributeNames: { '#id': 'id' },
            ExpressionAttributeValues: {
              ':one': 1,
              ':link': fl.id,
              ':action': storedLinkAction({
                id: floorActionId++,
                at: new Date().toISOString(),
                action_type: 'purchase',
                metadata: actionMetadata,
                referred_user: {
                  id: Number(f.sampleReferredUser.id),
                  created_at: String(f.sampleReferredUser.created_at),
                  referred_user_id: String(f.sampleReferredUser.referred_user_id),
                },
              }),
            },
            ReturnValues: 'ALL_NEW',
          }),
        );
      },
    },
    {
      key: 'post-link-action',
      label: 'POST /api/v1/action/referral_link',
      route: 'POST /api/v1/action/referral_link',
      auth: true,
      status: 201,
      floorOps: 'GetItem + TransactWriteItems(Put, Update, ConditionCheck)',
      prepare: async () => undefined,
      request: () => ({
        method: 'POST',
        path: '/api/v1/action/referral_link',
        body: { referral_code: f.link.referral_code, action_type: 'purchase', metadata: actionMetadata },
      }),
      floor: async () => {
        await authorize();
        await getLink(fl.referral_code);
        await transact([floorActionPut(), bumpLink(fl.referral_code, 'total_clicks'), campaignCheck(fc.id)]);
      },
    },
    {
      key: 'visit',
      label: 'GET /r/{referral_code}',
      route: 'GET /r/{referral_code}',
      auth: false,
      status: 302,
      floorOps: 'GetItem + TransactWriteItems(Put, Update, ConditionCheck)',
      prepare: async () => undefined,
      request: () => ({
        method: 'GET',
        path: `/r/${f.link.referral_code}`,
        headers: { 'user-agent': BENCH_UA, referer: 'https://news.example.org/post/1' },
      }),
      floor: async () => {
        await getLink(fl.referral_code);
        await transact([floorActionPut(), bumpLink(fl.referral_code, 'total_clicks'), campaignCheck(fc.id)]);
      },
    },
    {
      key: 'visit-crawler',
      label: 'GET /r/{referral_code} (crawler, not recorded)',
      route: 'GET /r/{referral_code}',
      auth: false,
      status: 302,
      floorOps: 'GetItem + GetItem',
      prepare: async () => undefined,
      request: () => ({
        method: 'GET',
        path: `/r/${f.link.referral_code}`,
        headers: { 'user-agent': BOT_UA },
      }),
      floor: async () => {
        await getLink(f.link.referral_code);
        await campaignExists(c.id);
      },
    },
  ];
  return cases.map((c) => ({ ...c, budget: budgetOf(c.route) }));
}

/** Warm every route once, so later measurements never include a module load. */
export async function warmUp(client: BenchClient, cases: EndpointCase[], times = 3): Promise<void> {
  for (const endpoint of cases) {
    await endpoint.prepare(times);
    for (let i = 0; i < times; i++) {
      const res = await client.send(endpoint.request());
      if (res.status !== endpoint.status) {
        throw new Error(
          `${endpoint.label}: expected ${endpoint.status}, got ${res.status} ${res.body.slice(0, 300)}`,
        );
      }
      await endpoint.floor?.();
    }
  }
}

/**
 * Route-table rows no case above covers. A GET without path parameters is measured with a plain
 * request against its row's budget (e.g. the OpenAPI document and the reference page, budget 0);
 * anything else is listed as not measured, so a new route never silently escapes the bench.
 */
export function uncoveredRoutes(cases: EndpointCase[]): { extra: EndpointCase[]; unmeasured: string[] } {
  const covered = new Set(cases.map((c) => c.route));
  const extra: EndpointCase[] = [];
  const unmeasured: string[] = [];
  for (const route of routes) {
    const id = `${route.method} ${route.path}`;
    if (covered.has(id)) continue;
    if (route.method !== 'GET' || route.path.includes('{')) {
      unmeasured.push(id);
      continue;
    }
    extra.push({
      key: route.name,
      label: id,
      route: id,
      budget: route.dynamoCalls,
      auth: route.auth,
      status: 200,
      floorOps: route.table === 'none' ? 'none (no DynamoDB call)' : 'unknown',
      prepare: async () => undefined,
      request: () => ({ method: 'GET', path: route.path }),
    });
  }
  return { extra, unmeasured };
}
