/**
 * Example values of the operations (`definitions.ts`) and the webhooks, written once: the document
 * shows them beside each schema and builds each operation's `curl` sample from them. They tell one
 * story (a campaign, a link of one referrer, a visit, a signup, a purchase), so the examples of
 * different operations agree with each other. Typed by the schemas' static types here, and
 * test/unit/openapi-examples.test.ts validates each one against its schema in the document.
 */

import type { Static } from '@sinclair/typebox';
import type { AnalyticsSeries, TopList } from '../domain/analytics-schemas.ts';
import { encodeClickId } from '../domain/click-ids.ts';
import type { Conversion, CreateConversionBody, RefundBody } from '../domain/conversion-schemas.ts';
import type {
  Action,
  CreateLinkActionBody,
  CreateLinkBody,
  CreateReferredUserBody,
  CreateUserActionBody,
  ReferralLink,
  ReferredUser,
} from '../domain/link-schemas.ts';
import { rewardId } from '../domain/reward-ids.ts';
import type { RewardRule } from '../domain/reward-rules.ts';
import type { Balance, CreatePayoutBody, Payout, Reward, VoidRewardBody } from '../domain/reward-schemas.ts';
import type { Campaign, CreateCampaignBody, UpdateCampaignBody } from '../domain/schemas.ts';
import {
  actionEventId,
  conversionEventId,
  rewardEventId,
  WEBHOOK_EVENT_TYPES,
  type WebhookBody,
} from '../domain/webhook-events.ts';
import type {
  DeliveryAttemptList,
  FeedEventList,
  RedeliveryAccepted,
  WebhookTestResult,
} from '../domain/webhook-schemas.ts';

/** The local stack's address (`npm start`), which the `curl` samples call. */
export const LOCAL_BASE_URL = 'http://127.0.0.1:3000';

const campaignId = '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a';
const campaignUrl = 'https://shop.example.com/welcome';
/** A generated code: 8 characters of `A-Z` and `2-9` without `I` and `O`. */
const referralCode = 'K7TX4M2Q';
/** A custom code, as a client may choose one. */
const customCode = 'ANNA-SPRING';
const referrerId = 'user_8f3a2c';
const referredUserId = 'user_51d7e0';

/** A new campaign's default: every event type, in the API's order. */
const allEvents: Campaign['webhook_events'] = [...WEBHOOK_EVENT_TYPES];

/** 10 % of every sale for the referrer, and 5.00 EUR for the referred user's first order. */
const rewardRules = [
  {
    id: 'referrer_share',
    on: 'conversion',
    recipient: 'referrer',
    type: 'percent',
    amount: 1000,
    hold_days: 30,
  },
  {
    id: 'welcome_bonus',
    on: 'conversion',
    recipient: 'referred_user',
    type: 'flat',
    amount: 500,
    first_conversions: 1,
    hold_days: 14,
  },
] satisfies RewardRule[];

const campaignCreated = {
  id: campaignId,
  created_at: '2026-11-22_14-05-09',
  url: campaignUrl,
  name: 'Spring referral promo',
  webhook_url: null,
  webhook_secret: null,
  webhook_events: allEvents,
  webhook_status: 'enabled',
  webhook_disabled_reason: null,
  click_ids: true,
  attribution_window_days: 90,
  currency: 'EUR',
  reward_rules: [],
  review_signups_per_hour: 20,
} satisfies Campaign;

const campaignWithWebhook = {
  ...campaignCreated,
  reward_rules: rewardRules,
  name: 'Spring referral promo 2026',
  webhook_url: 'https://hooks.example.com/referrals',
  webhook_secret: 'whsec_FtooWMUa8tBQak0XgbzXVyekr3H2YkLNETyTB1i+q9M=',
} satisfies Campaign;

/** After `POST /api/v1/campaign/rotate_webhook_secret`: a new secret, the old one signs for 24 h more. */
const campaignRotated = {
  ...campaignWithWebhook,
  webhook_secret: 'whsec_q2Wc7m0p1rJt3yH9bQe8ZkVfXo4LaNdS6uGiE5TwBvM=',
} satisfies Campaign;

/** The account's next campaign, made a month later; no webhook yet. */
const summerCampaign = {
  id: '9b2e7d41-6c3a-4f8e-b15d-0a7c9e2f4d36',
  created_at: '2026-12-21_09-30-00',
  url: 'https://shop.example.com/summer',
  name: 'Summer referral promo',
  webhook_url: null,
  webhook_secret: null,
  webhook_events: allEvents,
  webhook_status: 'enabled',
  webhook_disabled_reason: null,
  click_ids: false,
  attribution_window_days: 90,
  currency: 'EUR',
  reward_rules: [],
  review_signups_per_hour: 20,
} satisfies Campaign;

/** The referrer's link, with its counters as of a given moment of the story. */
const link = (total_clicks: number, total_referrals: number, total_conversions = 0, total_revenue = 0) =>
  ({
    id: 1042,
    created_at: '2026-11-22_14-07-31',
    referral_code: referralCode,
    campaign_id: campaignId,
    referrer_id: referrerId,
    referral_link: `${campaignUrl}?rfa=${referralCode}`,
    share_url: `${LOCAL_BASE_URL}/r/${referralCode}`,
    total_clicks,
    total_referrals,
    total_conversions,
    total_revenue,
  }) satisfies ReferralLink;

const customLink = {
  id: 1043,
  created_at: '2026-11-22_14-09-55',
  referral_code: customCode,
  campaign_id: campaignId,
  referrer_id: referrerId,
  referral_link: `${campaignUrl}?rfa=${customCode}`,
  share_url: `${LOCAL_BASE_URL}/r/${customCode}`,
  total_clicks: 4,
  total_referrals: 1,
  total_conversions: 0,
  total_revenue: 0,
} satisfies ReferralLink;

/** The visit below: its click id, which the redirect added to `Location` (`rfclid`). */
const clickId = encodeClickId({
  campaignId,
  visitId: 5530,
  code: referralCode,
  secret: 'm3Vq9TzR1xYb0Kc7LwJp2g',
});

/** The signup, sent with the visit's click id: its link's `total_referrals` includes it. */
const referredUser = {
  id: 2207,
  created_at: '2026-11-23_09-41-27',
  referral_link: link(3, 1),
  referred_user_id: referredUserId,
  click_id: clickId,
  clicked_at: '2026-11-23_09-38-12',
} satisfies ReferredUser;

const visitor = {
  user_agent:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  referer: 'https://blog.example.org/spring-deals',
};

/** A visit through `/r/K7TX4M2Q`, as its `action.created` event carries it. */
const visit = {
  id: 5530,
  created_at: '2026-11-23_09-38-12',
  action_type: 'visit',
  metadata: visitor,
  referral_link: link(3, 0),
  referred_user: null,
} satisfies Action;

const purchaseMetadata = { order_id: 'ord_7731', amount: 49.9, currency: 'EUR' };

/** The referred user's purchase: its link's `total_clicks` includes it. */
const purchase = {
  id: 5531,
  created_at: '2026-11-23_09-52-03',
  action_type: 'purchase',
  metadata: purchaseMetadata,
  referral_link: link(4, 1),
  referred_user: referredUser,
} satisfies Action;

const shareMetadata = { channel: 'whatsapp' };

/** A share recorded on the link alone. */
const share = {
  id: 5532,
  created_at: '2026-11-23_10-15-44',
  action_type: 'share',
  metadata: shareMetadata,
  referral_link: link(5, 1),
  referred_user: null,
} satisfies Action;

/** The referred user's first order, 49.90 EUR in cents: the link's conversions and revenue include it. */
const conversionId = 'cv_PwxbfipNTBuajm1fTjwrGgGiB-vqZwAAAAAAAAE3';
const sale = {
  id: conversionId,
  created_at: '2026-11-23_10-20-31',
  campaign_id: campaignId,
  referred_user: { ...referredUser, referral_link: link(5, 1, 1, 4990) },
  referral_link: link(5, 1, 1, 4990),
  amount: 4990,
  refunded_amount: 0,
  currency: 'EUR',
  external_id: 'ord_7731',
  metadata: { plan: 'annual' },
  status: 'completed',
} satisfies Conversion;

/** One item of the order returned: 15.00 EUR back, the link's revenue net of it. */
const saleRefunded = {
  ...sale,
  referred_user: { ...referredUser, referral_link: link(5, 1, 1, 3490) },
  referral_link: link(5, 1, 1, 3490),
  refunded_amount: 1500,
  status: 'partially_refunded',
} satisfies Conversion;

/** The referrer's 10 % of the sale, made by the rule `referrer_share`, pending for 30 days. */
const saleReward = {
  id: rewardId({
    campaignId,
    recipient: 'referrer',
    recipientId: referrerId,
    ruleId: 'referrer_share',
    sourceType: 'conversion',
    sourceId: conversionId,
  }),
  created_at: '2026-11-23_10-20-31',
  campaign_id: campaignId,
  rule_id: 'referrer_share',
  recipient: 'referrer' as const,
  recipient_id: referrerId,
  source_type: 'conversion' as const,
  source_id: conversionId,
  type: 'reward' as const,
  adjusts: null,
  amount: 499,
  currency: 'EUR',
  status: 'pending' as 'pending' | 'in_review' | 'approved' | 'paid' | 'voided',
  available_at: '2026-12-23_10-20-31',
  review_reasons: [] as Array<'referrer_signups_per_hour' | 'repeat_visitor'>,
  payout_id: null as string | null,
  void_reason: null as string | null,
};

const rewardEvent = (
  type: 'reward.created' | 'reward.approved' | 'reward.voided' | 'reward.paid' | 'reward.flagged',
  timestamp: string,
  data: typeof saleReward,
) => ({
  id: rewardEventId(data.id, data.status),
  body: { type, timestamp, campaign_id: campaignId, data } satisfies WebhookBody,
});

const hookUrl = 'https://hooks.example.com/referrals';

/** The delivery log: the purchase's event failed once (a 503), then went through. */
const deliveryPage = [
  {
    id: `att_1795427525114_${actionEventId(5531, campaignId)}_2`,
    event_id: actionEventId(5531, campaignId),
    event_type: 'action.created',
    attempt: 2,
    status: 'succeeded',
    attempted_at: '2026-11-23T09:52:05.114Z',
    url: hookUrl,
    status_code: 200,
    error: null,
    duration_ms: 84,
    next_attempt_at: null,
  },
  {
    id: `att_1795427523301_${actionEventId(5531, campaignId)}_1`,
    event_id: actionEventId(5531, campaignId),
    event_type: 'action.created',
    attempt: 1,
    status: 'pending',
    attempted_at: '2026-11-23T09:52:03.301Z',
    url: hookUrl,
    status_code: 503,
    error: 'HTTP 503',
    duration_ms: 1210,
    next_attempt_at: '2026-11-23T09:52:09.512Z',
  },
] satisfies Static<typeof DeliveryAttemptList>;

const dayMetrics = (
  visits: number,
  unique: number,
  bots: number,
  users: number,
  purchases: number,
  shares: number,
  sales = 0,
  revenue = 0,
) => ({
  visits,
  unique_visits: unique,
  bot_visits: bots,
  referred_users: users,
  actions: purchases + shares,
  conversions: sales,
  revenue,
  actions_by_type: { ...(purchases ? { purchase: purchases } : {}), ...(shares ? { share: shares } : {}) },
});
const analyticsDays = [
  { start: '2026-11-20_00-00-00', ...dayMetrics(41, 33, 6, 4, 1, 2) },
  { start: '2026-11-21_00-00-00', ...dayMetrics(0, 0, 0, 0, 0, 0) },
  { start: '2026-11-22_00-00-00', ...dayMetrics(58, 47, 9, 7, 3, 0, 2, 7480) },
];
const analyticsSeries = {
  campaign_id: campaignId,
  granularity: 'day' as const,
  from: '2026-11-20_00-00-00',
  to: '2026-11-22_23-59-59',
  totals: dayMetrics(99, 80, 15, 11, 4, 2, 2, 7480),
  series: analyticsDays,
} satisfies Static<typeof AnalyticsSeries>;

/** A referrer's share of the sale above (a `percent` rule of 10 %), its hold over. */
const approvedRewardId = 'rw_PwxbfipNTBuajm1fTjwrGppfDyQZZE6LDBLK4K4Rz3aoRQxYTymlYw';
const payoutId = 'po_Xk3v9QmZt1bR7wLpA2cD8e';
const rewardApproved = {
  id: approvedRewardId,
  created_at: '2026-11-23_10-20-31',
  campaign_id: campaignId,
  rule_id: 'sale_share',
  recipient: 'referrer',
  recipient_id: referrerId,
  source_type: 'conversion',
  source_id: conversionId,
  type: 'reward',
  adjusts: null,
  amount: 499,
  currency: 'EUR',
  status: 'approved',
  available_at: '2026-12-23_10-20-31',
  review_reasons: [],
  payout_id: null,
  void_reason: null,
} satisfies Reward;
const rewardPaid = { ...rewardApproved, status: 'paid', payout_id: payoutId } satisfies Reward;
const rewardVoided = {
  ...rewardApproved,
  status: 'voided',
  void_reason: 'order cancelled by phone',
} satisfies Reward;
const payout = {
  id: payoutId,
  created_at: '2026-12-24_09-00-00',
  campaign_id: campaignId,
  recipient: 'referrer',
  recipient_id: referrerId,
  amount: 499,
  currency: 'EUR',
  reward_ids: [approvedRewardId],
  reference: 'stripe tr_1QKx8f2eZvKYlo2C',
} satisfies Payout;

export const examples = {
  conversionId,
  createConversion: {
    campaign_id: campaignId,
    referred_user_id: referredUserId,
    amount: 4990,
    currency: 'EUR',
    external_id: 'ord_7731',
    metadata: { plan: 'annual' },
  } satisfies CreateConversionBody,
  refund: { amount: 1500 } satisfies RefundBody,
  sale,
  saleRefunded,
  conversionPage: [saleRefunded] satisfies Conversion[],
  /** A cursor of a campaign's conversions, as `x-next-cursor` gives one. */
  conversionCursor: 'WzMsIkNWIzAwMTc5NTQyOTIzMTIwNyMwMDAwMDAwMDAwMDAwMzExIiwiZXhhbXBsZXRhZzEyIl0',
  rewardId: approvedRewardId,
  rewardApproved,
  rewardVoided,
  rewardPage: [rewardPaid] satisfies Reward[],
  /** A cursor of a campaign's rewards, as `x-next-cursor` gives one. */
  rewardCursor:
    'WzMsIjE3OTU0MjkyMzEyMDcjcndfUHd4YmZpcE5UQnVham0xZlRqd3JHcHBmRHlRWlpFNkxEQkxLNEs0UnozYW9SUXhZVHltbFl3IiwiZFFYRVVweEI0c2hDIl0',
  voidReward: { reason: 'order cancelled by phone' } satisfies VoidRewardBody,
  balance: {
    in_review: 0,
    pending: 1250,
    approved: 499,
    paid: 2000,
    voided: 0,
    currency: 'EUR',
  } satisfies Static<typeof Balance>,
  createPayout: {
    campaign_id: campaignId,
    recipient: 'referrer',
    recipient_id: referrerId,
    reference: 'stripe tr_1QKx8f2eZvKYlo2C',
  } satisfies CreatePayoutBody,
  payoutCreated: { ...payout, has_more: false },
  payoutPage: [payout] satisfies Payout[],
  /** A cursor of a campaign's payouts. */
  payoutCursor: 'WzMsIjE3OTU0MjkyMzEyMDcjcG9fWGszdjlRbVp0MWJSN3dMcEEyY0Q4ZSIsIjlDNHhEbFp3b1RvbSJd',
  analyticsSeries,
  analyticsTop: [
    { rank: 1, referrer_id: referrerId, value: 7 },
    { rank: 2, referrer_id: 'user_41d0e9', value: 3 },
    { rank: 3, referrer_id: 'user_c27b55', value: 1 },
  ] satisfies Static<typeof TopList>,
  campaignId,
  referralCode,
  referrerId,
  referredUserId,
  linkId: String(link(0, 0).id),
  /** A cursor of the campaign's list, as `x-next-cursor` gives one (opaque: only the API makes them). */
  cursor: 'WzIsIjAwMTc5NTM0NTY1MTAwMCMwMDAwMDAwMDAwMDAxMDQzIiwiQU5OQS1TUFJJTkciLCJuY3ZtdHcwMTRyakUiXQ',
  requestId: 'JBq7LgBLoAMEbwA',
  idempotencyKey: 'order-7731-purchase',

  createCampaign: {
    url: campaignUrl,
    name: campaignCreated.name,
    click_ids: true,
  } satisfies CreateCampaignBody,
  campaignCreated,
  updateCampaign: {
    name: campaignWithWebhook.name,
    webhook_url: campaignWithWebhook.webhook_url,
    reward_rules: rewardRules,
  } satisfies UpdateCampaignBody,
  campaignWithWebhook,
  campaignRotated,
  /** A page of the account's campaigns, newest first. */
  campaignPage: [summerCampaign, campaignWithWebhook] satisfies Campaign[],
  /** A cursor of the campaign list, as `x-next-cursor` gives one. */
  campaignCursor:
    'WzMsIjAwMTc5NTM1NjMwOTQxMiMzZjBjNWI3ZS0yYTRkLTRjMWItOWE4ZS02ZDVmNGUzYzJiMWEiLCI4OWUtRmN2MjN5ZUkiXQ',
  deliveryPage,
  /** The campaign's events feed: the visit and the signup, oldest first. */
  feedPage: [
    {
      id: actionEventId(5530, campaignId),
      type: 'action.created',
      timestamp: '2026-11-23T09:38:12.481Z',
      campaign_id: campaignId,
      data: visit,
    },
    {
      id: 'evt_referred_user_2207',
      type: 'referred_user.created',
      timestamp: '2026-11-23T09:41:27.903Z',
      campaign_id: campaignId,
      data: referredUser,
    },
  ] satisfies Static<typeof FeedEventList>,
  /** A cursor of the events feed, as `x-next-cursor` and `x-poll-cursor` give one. */
  feedCursor: 'WzMsIjE3OTU0MjcxMDc5MDMwMDAiLCJKVHJ2c1I0dHY3cGQiXQ',
  eventId: actionEventId(5531, campaignId),
  redelivery: { event_id: actionEventId(5531, campaignId), status: 'queued' } satisfies Static<
    typeof RedeliveryAccepted
  >,
  webhookTest: { delivered: true, status_code: 200, error: null, duration_ms: 96 } satisfies Static<
    typeof WebhookTestResult
  >,

  createLink: { campaign_id: campaignId, referrer_id: referrerId } satisfies CreateLinkBody,
  linkCreated: link(0, 0),
  /** The link later on: 12 clicks (visits and other actions), 3 signups. */
  linkNow: link(12, 3),
  /** A page of a campaign's (or that referrer's) links, oldest first. */
  linkPage: [link(12, 3), customLink],
  /** The redirect's target: the campaign has `click_ids` on, so the visit's click id follows `rfa`. */
  location: `${campaignUrl}?rfa=${referralCode}&rfclid=${clickId}`,

  createReferredUser: {
    click_id: clickId,
    referred_user_id: referredUserId,
  } satisfies CreateReferredUserBody,
  referredUser,
  /** A page of the campaign's referred users, newest first, each with its link as it is now. */
  referredUserPage: [
    {
      id: 2311,
      created_at: '2026-11-24_16-02-47',
      referral_link: customLink,
      referred_user_id: 'user_8c21fa',
      click_id: null,
      clicked_at: null,
    },
    { ...referredUser, referral_link: link(12, 3) },
  ] satisfies ReferredUser[],
  /** A cursor of the referred-user list, as `x-next-cursor` gives one. */
  referredUserCursor:
    'WzQsIjAwMTc5NTUxMjE2NzAwMCMwMDAwMDAwMDAwMDAyMzExIiwidXNlcl84YzIxZmEiLCJKREUzMEJOOVJhZHQiXQ',

  createUserAction: {
    campaign_id: campaignId,
    action_type: 'purchase',
    referred_user_id: referredUserId,
    metadata: purchaseMetadata,
  } satisfies CreateUserActionBody,
  purchase,
  createLinkAction: {
    referral_code: referralCode,
    action_type: 'share',
    metadata: shareMetadata,
  } satisfies CreateLinkActionBody,
  share,

  health: { status: 'ok' as const },
  readiness: { status: 'ready' as const, checks: { dynamodb: { status: 'ok' as const, latency_ms: 4.2 } } },

  /** The start of this document (the real one is long). */
  openApiDocument: {
    openapi: '3.1.0',
    info: { title: 'Referral tracking API', version: '1.3.0' },
    paths: { '/api/v1/campaign': { post: { operationId: 'CreateCampaign', summary: 'Create a campaign' } } },
  },
  /** The start of the reference page and of the script it loads. */
  referencePage:
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Referral tracking API reference</title>',
  redocScript: '/*! For license information please see redoc.standalone.js.LICENSE.txt */\n!function(e,t){…',
  redocVersion: '2.5.4-6f1d0c2a9b3e',
  /** The start of the dashboard's page and of the files it loads. */
  dashboardPage:
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>Referral dashboard</title>',
  dashboardScript: '"use strict";(()=>{var gt=Object.defineProperty;…',
  dashboardStyles: ':root{--ink:#1d2430;--muted:#4f5b6b;…',
  dashboardVersion: 'ca85dd89ae13',

  webhooks: {
    'action.created': {
      id: actionEventId(5530, campaignId),
      body: {
        type: 'action.created',
        timestamp: '2026-11-23T09:38:12.481Z',
        campaign_id: campaignId,
        data: visit,
      } satisfies WebhookBody,
    },
    'referred_user.created': {
      id: 'evt_referred_user_2207',
      body: {
        type: 'referred_user.created',
        timestamp: '2026-11-23T09:41:27.903Z',
        campaign_id: campaignId,
        data: referredUser,
      } satisfies WebhookBody,
    },
    'conversion.created': {
      id: conversionEventId(conversionId),
      body: {
        type: 'conversion.created',
        timestamp: '2026-11-23T10:20:31.207Z',
        campaign_id: campaignId,
        data: sale,
      } satisfies WebhookBody,
    },
    'conversion.refunded': {
      id: conversionEventId(conversionId, 1),
      body: {
        type: 'conversion.refunded',
        timestamp: '2026-11-24T16:02:44.918Z',
        campaign_id: campaignId,
        data: saleRefunded,
      } satisfies WebhookBody,
    },
    'reward.created': rewardEvent('reward.created', '2026-11-23T10:20:32.114Z', saleReward),
    'reward.flagged': rewardEvent('reward.flagged', '2026-11-23T10:20:32.114Z', {
      ...saleReward,
      status: 'in_review',
      review_reasons: ['referrer_signups_per_hour'],
    }),
    'reward.approved': rewardEvent('reward.approved', '2026-12-23T10:21:02.530Z', {
      ...saleReward,
      status: 'approved',
    }),
    'reward.paid': rewardEvent('reward.paid', '2026-12-28T08:00:12.004Z', {
      ...saleReward,
      status: 'paid',
      payout_id: 'po_Wd3cJ1l0bX2yQe8ZkVfXo4',
    }),
    'reward.voided': rewardEvent('reward.voided', '2026-11-24T16:02:45.310Z', {
      ...saleReward,
      status: 'voided',
      void_reason: 'refunded',
    }),
    'webhook.test': {
      id: 'evt_test_1795428120331482',
      body: {
        type: 'webhook.test',
        timestamp: '2026-11-23T10:02:00.331Z',
        campaign_id: campaignId,
        data: { message: 'This is a test event sent from the referral API.' },
      },
    },
  },
} as const;
