/**
 * Records made the way a customer makes them, through the API of the run's stack (or of the stack
 * `api` is given): campaigns, links, referred users, and the response types the tests read.
 */
import { randomUUID } from 'node:crypto';
import { ApiKeyStore } from '../../lib/db/api-keys.ts';
import { type Api, api as runStack } from './api.ts';
import { table } from './table.ts';

export type CampaignBody = {
  id: string;
  created_at: string;
  url: string;
  name: string;
  webhook_url: string | null;
  webhook_secret: string | null;
};
export type LinkBody = {
  id: number;
  created_at: string;
  referral_code: string;
  campaign_id: string;
  referrer_id: string | null;
  referral_link: string | null;
  share_url: string;
  total_clicks: number;
  total_referrals: number;
};
export type ReferredUserBody = {
  id: number;
  created_at: string;
  referral_link: LinkBody;
  referred_user_id: string;
};
export type ActionBody = {
  id: number;
  created_at: string;
  action_type: string;
  metadata: Record<string, unknown>;
  referral_link: LinkBody;
  referred_user: ReferredUserBody | null;
};

/**
 * A browser's user agent: visits through `/r/{code}` are counted only for browsers, so a test that
 * wants a counted visit sends this (fetch's own `node` is an HTTP library, not counted).
 */
export const BROWSER_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

/** A syntactically valid UUID v4 that no campaign has. */
export const randomId = () => crypto.randomUUID();

function expectStatus(what: string, res: { status: number; text: string }, status: number): void {
  if (res.status !== status) throw new Error(`${what} failed: ${res.status} ${res.text}`);
}

/** POST /api/v1/campaign, expecting 201. */
export async function createCampaign(
  overrides: Record<string, unknown> = {},
  key?: string,
  api: Api = runStack,
): Promise<CampaignBody> {
  const res = await api<CampaignBody>('POST', '/api/v1/campaign', {
    body: { url: 'https://example.com', name: 'Test campaign', ...overrides },
    key,
  });
  expectStatus('campaign create', res, 201);
  return res.body;
}

/** A campaign whose webhook_url is `url`, set through PATCH as a customer would: its secret too. */
export async function createCampaignWithWebhook(
  url: string,
  api: Api = runStack,
): Promise<CampaignBody & { webhook_url: string; webhook_secret: string }> {
  const campaign = await createCampaign({ name: 'Webhook test' }, undefined, api);
  const res = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body: { webhook_url: url } });
  expectStatus('webhook_url update', res, 200);
  if (res.body.webhook_url !== url || !/^whsec_/.test(res.body.webhook_secret)) {
    throw new Error(`webhook_url update answered ${res.text}`);
  }
  return res.body;
}

/** POST /api/v1/referral_link, expecting 201. */
export async function createLink(
  campaignId: string,
  fields: { referrer_id?: string | null; referral_code?: string } = {},
  key?: string,
  api: Api = runStack,
): Promise<LinkBody> {
  const res = await api<LinkBody>('POST', '/api/v1/referral_link', {
    body: { campaign_id: campaignId, ...fields },
    key,
  });
  expectStatus('link create', res, 201);
  return res.body;
}

/** GET /api/v1/referral_link?id=, expecting 200. */
export async function fetchLink(id: number, key?: string): Promise<LinkBody> {
  const res = await runStack<LinkBody>('GET', `/api/v1/referral_link?id=${id}`, { key });
  expectStatus('link fetch', res, 200);
  return res.body;
}

/** POST /api/v1/referred_user by code, expecting 201. */
export async function createReferredUser(
  referralCode: string,
  referredUserId: string,
  key?: string,
  api: Api = runStack,
): Promise<ReferredUserBody> {
  const res = await api<ReferredUserBody>('POST', '/api/v1/referred_user', {
    body: { referral_code: referralCode, referred_user_id: referredUserId },
    key,
  });
  expectStatus('referred user create', res, 201);
  return res.body;
}

/** POST /api/v1/action/referral_link (endpoint 12), expecting 201: one action.created event. */
export async function createLinkAction(
  referralCode: string,
  actionType: string,
  metadata?: Record<string, unknown>,
  api: Api = runStack,
): Promise<ActionBody> {
  const res = await api<ActionBody>('POST', '/api/v1/action/referral_link', {
    body: { referral_code: referralCode, action_type: actionType, ...(metadata ? { metadata } : {}) },
  });
  expectStatus('link action create', res, 201);
  return res.body;
}

/**
 * A tenant of the calling file alone, and its key, issued with the CLI's store in the file's
 * stack: for a test that reads a whole account (its campaign list), which the run's two tenants
 * share with every file running beside it.
 */
export async function newTenant(label: string): Promise<{ tenant: string; key: string }> {
  const tenant = `${label}-${randomUUID().slice(0, 8)}`;
  const { key } = await new ApiKeyStore(table().db, table().name).create(tenant);
  return { tenant, key };
}
