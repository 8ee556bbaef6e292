/**
 * The operations of the route table, one per row, keyed by the row's `name` (see `definition.ts`).
 * TypeBox lives here and in the schemas; the functions import only what
 * `scripts/build-validators.ts` generates from this file (`compiled.ts`).
 */
import { Type } from '@sinclair/typebox';
import {
  AnalyticsPath,
  AnalyticsQuery,
  AnalyticsSeries,
  TopList,
  TopQuery,
} from '../domain/analytics-schemas.ts';
import {
  Conversion,
  ConversionList,
  ConversionPath,
  ConversionQuery,
  ConversionsPath,
  ConversionsQuery,
  CreateConversionBody,
  RefundBody,
} from '../domain/conversion-schemas.ts';
import {
  Action,
  CampaignLinksPath,
  CreateLinkActionBody,
  CreateLinkBody,
  CreateReferredUserBody,
  CreateUserActionBody,
  GetLinkQuery,
  GetReferredUserQuery,
  ListQuery,
  ReferralLink,
  ReferralLinkList,
  ReferredUser,
  ReferredUserList,
  ReferredUsersQuery,
  ReferrerLinksPath,
  VisitPath,
} from '../domain/link-schemas.ts';
import { DashboardQuery, DocsQuery, REDOC_ASSET } from '../domain/page-schemas.ts';
import {
  Balance,
  BalancePath,
  BalanceQuery,
  CreatePayoutBody,
  PayoutCreated,
  PayoutList,
  PayoutsPath,
  PayoutsQuery,
  Reward,
  RewardList,
  RewardPath,
  RewardsPath,
  RewardsQuery,
  VoidRewardBody,
} from '../domain/reward-schemas.ts';
import {
  Campaign,
  CampaignIdQuery,
  CampaignList,
  CreateCampaignBody,
  UpdateCampaignBody,
} from '../domain/schemas.ts';
import {
  DeliveryAttemptList,
  EventIdPath,
  FeedEventList,
  RedeliveryAccepted,
  WebhookDeliveriesQuery,
  WebhookTestResult,
} from '../domain/webhook-schemas.ts';
import { type OperationDefinition, type RuleError, tags } from './definition.ts';
import { examples as ex } from './examples.ts';

/**
 * The same code and message as `urlImmutable()` (`lib/domain/campaign-rules.ts`) and `linkNotFound()`
 * (`lib/db/links.ts`), which the handlers' own checks throw; test/unit/operations.test.ts holds them
 * equal. Written as data because the generated module carries them into the functions.
 */
const URL_IMMUTABLE: RuleError = {
  code: 'url_immutable',
  message: 'The url of a campaign cannot be changed; create a new campaign instead.',
};
const LINK_NOT_FOUND: RuleError = { code: 'referral_link_not_found', message: 'No such referral link.' };
/** The same as `conversionNotFound()` (`lib/db/conversions.ts`): an id the API never made names nothing. */
const CONVERSION_NOT_FOUND: RuleError = { code: 'conversion_not_found', message: 'No such conversion.' };

const Health = Type.Object(
  { status: Type.Literal('ok', { description: 'Always `ok`: an answer at all is the signal.' }) },
  { additionalProperties: false },
);
const Readiness = Type.Object(
  {
    status: Type.Literal('ready'),
    checks: Type.Object(
      {
        dynamodb: Type.Object(
          {
            status: Type.Literal('ok'),
            latency_ms: Type.Number({ minimum: 0, description: 'How long the read took, in milliseconds.' }),
          },
          { additionalProperties: false },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/** Endpoints 10 and 12 name their link by exactly one of these (`linkTargetOf` then reads it). */
const LINK_TARGET = ['referral_code', 'referral_link_id'] as const;
/** Endpoint 10 also takes a click id instead (`signupTargetOf`). */
const SIGNUP_TARGET = [...LINK_TARGET, 'click_id'] as const;

const listHeaders = ['link', 'x-next-cursor'] as const;

export const operations = {
  CreateReferralLink: {
    tag: tags.links,
    description:
      'Creates a referral link in a campaign, with a generated code (8 characters of `A-Z` and `2-9` without `I` and `O`) unless a custom `referral_code` is given. `referral_link` is the campaign URL with `rfa=<code>` added.',
    request: { body: CreateLinkBody },
    success: { status: 201, description: 'The new referral link.', schema: ReferralLink },
    errors: ['campaign_not_found', 'referral_code_taken'],
    example: { body: ex.createLink, response: ex.linkCreated },
  },
  GetReferralLink: {
    tag: tags.links,
    description:
      'Fetches one referral link by `id` or by `referral_code`. With both, the link is returned only if both name the same link (otherwise 404). With neither: 400 `missing_parameter`.',
    request: { query: GetLinkQuery, queryAtLeastOne: ['id', 'referral_code'] },
    success: { status: 200, description: 'The referral link.', schema: ReferralLink },
    errors: ['referral_link_not_found'],
    example: {
      query: { id: ex.linkId, referral_code: ex.referralCode },
      sampleQuery: ['referral_code'],
      response: ex.linkNow,
    },
  },
  ListCampaignLinks: {
    tag: tags.links,
    description:
      'Lists the referral links of a campaign, oldest first, one page at a time. While more links remain, the response carries a `Link` header with `rel="next"` and `x-next-cursor`; pass the cursor back as `cursor` for the next page.',
    request: { path: CampaignLinksPath, query: ListQuery },
    success: {
      status: 200,
      description: 'One page of links (possibly empty).',
      schema: ReferralLinkList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { limit: '100', cursor: ex.cursor },
      sampleQuery: ['limit'],
      response: ex.linkPage,
    },
  },
  ListReferrerLinks: {
    tag: tags.links,
    description:
      "Lists one referrer's referral links in a campaign, oldest first, paginated like the campaign's list. An unknown referrer gives an empty list; an unknown campaign 404.",
    request: { path: ReferrerLinksPath, query: ListQuery },
    success: {
      status: 200,
      description: 'One page of links (possibly empty).',
      schema: ReferralLinkList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId, referrer_id: ex.referrerId },
      query: { limit: '100', cursor: ex.cursor },
      sampleQuery: ['limit'],
      response: ex.linkPage,
    },
  },
  CreateReferredUserAction: {
    tag: tags.actions,
    description:
      "Records an action of a referred user, found by `referred_user_id` in the campaign. Raises the link's `total_clicks` by one, atomically with the action, and sends an `action.created` webhook.",
    request: { body: CreateUserActionBody },
    success: { status: 201, description: 'The new action.', schema: Action },
    errors: ['campaign_not_found', 'referred_user_not_found'],
    example: { body: ex.createUserAction, response: ex.purchase },
  },
  CreateCampaign: {
    tag: tags.campaigns,
    description:
      'Creates a campaign. `url` is trimmed and gets `https://` in front when it has no scheme; it must then be an absolute http(s) URL. `webhook_url` and `webhook_secret` start as null. `click_ids` (default false) makes the redirect give each counted visit a click id (`rfclid`), which a signup can send back within `attribution_window_days` (1–365, default 90). `currency` (ISO 4217, `USD` when omitted) is the currency of the amounts of its conversions. `reward_rules` (at most 10) and `review_signups_per_hour` (default 20) set its rewards: see Rewards.',
    request: { body: CreateCampaignBody },
    success: { status: 201, description: 'The new campaign.', schema: Campaign },
    example: { body: ex.createCampaign, response: ex.campaignCreated },
  },
  GetCampaign: {
    tag: tags.campaigns,
    description: 'Fetches a campaign by id.',
    request: { query: CampaignIdQuery },
    success: { status: 200, description: 'The campaign.', schema: Campaign },
    errors: ['campaign_not_found'],
    example: { query: { id: ex.campaignId }, response: ex.campaignWithWebhook },
  },
  UpdateCampaign: {
    tag: tags.campaigns,
    description:
      'Changes the name and/or the webhook URL of a campaign (`null` clears the webhook URL). The first `webhook_url` set creates the `webhook_secret`, which stays the same afterwards. `webhook_events` chooses the event types sent (a non-empty array of distinct types; the others stay in the events feed) and `webhook_status` enables a disabled webhook again (`enabled`, restarting its failure clock) or stops deliveries (`disabled`). `click_ids` and `attribution_window_days` turn click ids on or off and set how long a click can attribute a signup (the window in force at signup time counts). `currency` can change until the first conversion or reward of the campaign (then 409 `currency_locked`). `reward_rules` replaces the rules for signups and conversions committed from now on (earlier ones keep the rules of their commit); `review_signups_per_hour` sets the review threshold. The campaign `url` is immutable: sending it is 400 `url_immutable`.',
    request: {
      query: CampaignIdQuery,
      body: UpdateCampaignBody,
      bodyOptional: true,
      refusedFields: { url: URL_IMMUTABLE },
    },
    success: { status: 200, description: 'The updated campaign.', schema: Campaign },
    errors: ['campaign_not_found', 'currency_locked'],
    example: { query: { id: ex.campaignId }, body: ex.updateCampaign, response: ex.campaignWithWebhook },
  },
  DeleteCampaign: {
    tag: tags.campaigns,
    description:
      'Deletes a campaign with its links, referred users and actions: all of them are gone from every endpoint at once (the redirects of its links answer 404).',
    request: { query: CampaignIdQuery },
    success: { status: 204, description: 'Deleted; no body.' },
    errors: ['campaign_not_found'],
    example: { query: { id: ex.campaignId } },
  },
  ListCampaigns: {
    tag: tags.campaigns,
    description:
      'Lists the account\'s campaigns, newest first, one page at a time, each exactly as `GET /api/v1/campaign` returns it. While more campaigns remain, the response carries a `Link` header with `rel="next"` and `x-next-cursor`; pass the cursor back as `cursor` for the next page. A deleted campaign is not listed.',
    request: { query: ListQuery },
    success: {
      status: 200,
      description: 'One page of campaigns (possibly empty).',
      schema: CampaignList,
      headers: listHeaders,
    },
    example: {
      query: { limit: '100', cursor: ex.campaignCursor },
      sampleQuery: ['limit'],
      response: ex.campaignPage,
    },
  },
  CreateReferredUser: {
    tag: tags.referredUsers,
    description:
      "Records a signup through a link, given by exactly one of `referral_code`, `referral_link_id` and `click_id`. With `click_id` (the `rfclid` a visit's redirect carried, for a campaign with `click_ids` on), the referred user is created on that click's link and records `click_id` and `clicked_at`; an unknown click, or one of another account or of a deleted campaign, is 404 `click_not_found`, and a click older than the campaign's `attribution_window_days` is 422 `click_expired`. Raises the link's `total_referrals` by one, atomically with the record, and sends a `referred_user.created` webhook. A `referred_user_id` belongs to at most one link per campaign.",
    request: { body: CreateReferredUserBody, bodyExactlyOne: SIGNUP_TARGET },
    success: { status: 201, description: 'The new referred user.', schema: ReferredUser },
    errors: [
      'referral_link_not_found',
      'click_not_found',
      'referred_user_exists',
      'self_referral',
      'click_expired',
    ],
    example: { body: ex.createReferredUser, response: ex.referredUser },
  },
  GetReferredUser: {
    tag: tags.referredUsers,
    description: 'Fetches a referred user of a campaign by its `referred_user_id`.',
    request: { query: GetReferredUserQuery },
    success: { status: 200, description: 'The referred user.', schema: ReferredUser },
    errors: ['campaign_not_found', 'referred_user_not_found'],
    example: {
      query: { campaign_id: ex.campaignId, referred_user_id: ex.referredUserId },
      response: ex.referredUser,
    },
  },
  ListReferredUsers: {
    tag: tags.referredUsers,
    description:
      "Lists a campaign's referred users (its signups), newest first, each as `GET /api/v1/referred_user` returns it, with the live link that brought them. `referral_link_id` or `referrer_id` (at most one) keeps one link's or one referrer's. Paged like every list: while more remain, the response carries a `Link` header with `rel=\"next\"` and `x-next-cursor`; a cursor works only with the filter it was given with. One DynamoDB Query a page whatever the campaign's size.",
    request: { path: CampaignLinksPath, query: ReferredUsersQuery },
    success: {
      status: 200,
      description: 'One page of referred users (possibly empty).',
      schema: ReferredUserList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: {
        limit: '100',
        cursor: ex.referredUserCursor,
        referral_link_id: ex.linkId,
        referrer_id: ex.referrerId,
      },
      sampleQuery: ['limit'],
      response: ex.referredUserPage,
    },
  },
  CreateLinkAction: {
    tag: tags.actions,
    description:
      "Records an action on a link, given by exactly one of `referral_code` and `referral_link_id`, with `referred_user: null`. Raises the link's `total_clicks` by one, atomically with the action, and sends an `action.created` webhook.",
    request: { body: CreateLinkActionBody, bodyExactlyOne: LINK_TARGET },
    success: { status: 201, description: 'The new action.', schema: Action },
    errors: ['referral_link_not_found'],
    example: { body: ex.createLinkAction, response: ex.share },
  },
  Visit: {
    tag: tags.redirect,
    description:
      "Public, no key: redirects to the link's `referral_link` and records a `visit` action whose metadata holds the `user_agent` and `referer` of the request when present (no IP address is stored). When the campaign has `click_ids` on, the `Location` of a counted visit also carries `rfclid=<click id>` right after `rfa`, to be sent back as `click_id` on signup. The visit reaches the link's `total_clicks` and the analytics through the table stream, within a second or two. `HEAD` requests and link-preview or crawler user agents are redirected and counted apart as bot visits (analytics only), never as actions.",
    request: { path: VisitPath, pathNotFound: LINK_NOT_FOUND },
    success: { status: 302, description: 'Redirect to the referral link.', headers: ['location'] },
    example: { path: { referral_code: ex.referralCode } },
  },
  GetAnalytics: {
    tag: tags.analytics,
    description:
      "A campaign's metrics per hour or per day: visits, unique visits (no visit of the same visitor to the same link in the previous hour), bot visits, referred users, actions (every type but `visit`) and actions by type, with one point per hour or day of the range (zeros included) and the totals. `referral_link_id` or `referrer_id` (at most one) narrows it to one link or one referrer's links. The range is at most 7 days of hours or 400 days of days; by default the last 30 days (days) or 7 days (hours), up to now. Counts appear within a second or two of the interaction. One DynamoDB Query whatever the campaign's size.",
    request: { path: AnalyticsPath, query: AnalyticsQuery },
    success: { status: 200, description: 'The series and its totals.', schema: AnalyticsSeries },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: {
        granularity: 'day',
        from: '2026-11-20_00-00-00',
        to: '2026-11-22_23-59-59',
        referral_link_id: ex.linkId,
        referrer_id: ex.referrerId,
      },
      sampleQuery: ['granularity', 'from', 'to'],
      response: ex.analyticsSeries,
    },
  },
  GetAnalyticsTop: {
    tag: tags.analytics,
    description:
      "A campaign's all-time leaderboard: its referrers (`by=referrer`) or links (`by=referral_link`) ranked by `metric`, highest first; ties go to whoever reached the value first. Kept up to date by the same stream consumer as the series, so a page is one DynamoDB Query of a sorted index.",
    request: { path: AnalyticsPath, query: TopQuery },
    success: { status: 200, description: 'The leaderboard (possibly empty).', schema: TopList },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { metric: 'referred_users', by: 'referrer', limit: '3' },
      response: ex.analyticsTop,
    },
  },
  ListWebhookDeliveries: {
    tag: tags.webhooks,
    description:
      "The campaign's webhook delivery log: every attempt of the last 30 days, newest first, with the receiver's status code, the error, the duration and when the next attempt is due. `status` keeps one kind: `succeeded` (a 2xx), `pending` (failed, another attempt is scheduled) or `failed` (failed, none follows). Paged like every list; a cursor works only with the `status` it was given with.",
    request: { path: CampaignLinksPath, query: WebhookDeliveriesQuery },
    success: {
      status: 200,
      description: 'One page of attempts (possibly empty).',
      schema: DeliveryAttemptList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { status: 'failed', limit: '100', cursor: ex.cursor },
      sampleQuery: ['limit'],
      response: ex.deliveryPage,
    },
  },
  ListEvents: {
    tag: tags.webhooks,
    description:
      "The campaign's events of the last 30 days, oldest first, in the order they were committed: exactly the bodies of their webhooks, with `id` (the `webhook-id`). Every event is here, whatever `webhook_events` filters out or while the webhook is disabled: a pull feed for consumers without a public URL, and a way to catch up after an outage. Pages carry `x-next-cursor` while more events exist now, and every page an `x-poll-cursor`: ask again later with the last one as `cursor` to get only the events that came after.",
    request: { path: CampaignLinksPath, query: ListQuery },
    success: {
      status: 200,
      description: 'One page of events (possibly empty).',
      schema: FeedEventList,
      headers: [...listHeaders, 'x-poll-cursor'],
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { limit: '100', cursor: ex.feedCursor },
      sampleQuery: ['limit'],
      response: ex.feedPage,
    },
  },
  RedeliverEvent: {
    tag: tags.webhooks,
    description:
      "Queues a new delivery of an event of the last 30 days to the campaign's current `webhook_url`: signed anew, with the same `webhook-id`, and retried on the usual schedule if it fails. It shows in the delivery log. Nothing is sent while the webhook is disabled, has no URL or does not subscribe to the event's type. At most 5 redeliveries of one event per clock hour (each starts a retry schedule of its own): beyond, 429 `rate_limited` with `Retry-After`, the seconds to the next hour.",
    request: { path: EventIdPath },
    success: { status: 202, description: 'The delivery is queued.', schema: RedeliveryAccepted },
    errors: ['event_not_found', 'rate_limited'],
    errorNotes: {
      rate_limited:
        'Also when the event was redelivered 5 times in this clock hour already, the most for one event: nothing is queued, and `Retry-After` is the seconds to the next hour.',
    },
    example: { path: { event_id: ex.eventId }, response: ex.redelivery },
  },
  TestWebhook: {
    tag: tags.webhooks,
    description:
      "Sends one signed `webhook.test` event to the campaign's `webhook_url` now, under the rules of every delivery (15 s timeout, address checks, no redirects followed), and answers what happened. Not retried, not in the feed; it shows in the delivery log. Sent whatever `webhook_status` says, so a disabled endpoint can be checked before it is enabled again. With an `Idempotency-Key`, a retry gets the first answer and sends nothing; a retry while the first is still waiting on the endpoint is 409 `idempotency_key_in_progress`.",
    request: { query: CampaignIdQuery },
    success: { status: 200, description: 'What the endpoint answered.', schema: WebhookTestResult },
    errors: ['campaign_not_found', 'webhook_url_not_set'],
    example: { query: { id: ex.campaignId }, response: ex.webhookTest },
  },
  RotateWebhookSecret: {
    tag: tags.webhooks,
    description:
      "Replaces the campaign's `webhook_secret` with a new one. For 24 h every delivery carries two signatures in `webhook-signature`, space-separated (new secret first), so a receiver verifying with either secret accepts it: deploy the new secret within that time. A second rotation within the 24 h drops the oldest secret.",
    request: { query: CampaignIdQuery },
    success: { status: 200, description: 'The campaign with its new secret.', schema: Campaign },
    errors: ['campaign_not_found', 'webhook_url_not_set'],
    example: { query: { id: ex.campaignId }, response: ex.campaignRotated },
  },
  CreateConversion: {
    tag: tags.conversions,
    description:
      "Records a conversion (a sale) of a referred user, found by `referred_user_id` in the campaign. `amount` is an integer in the minor unit of the campaign's `currency` (cents for USD, yen for JPY, fils for KWD), 1 to 10^12; `currency`, when sent, must be the campaign's (422 `currency_mismatch`). `external_id` (your invoice or order id) is unique per campaign: a second conversion with it is 409 `conversion_exists`, a natural idempotency key beside `Idempotency-Key`. Raises the link's `total_conversions` by one and its `total_revenue` by the amount, atomically with the record, locks the campaign's currency, and sends a `conversion.created` webhook.",
    request: { body: CreateConversionBody },
    success: { status: 201, description: 'The new conversion.', schema: Conversion },
    errors: ['campaign_not_found', 'referred_user_not_found', 'conversion_exists', 'currency_mismatch'],
    example: { body: ex.createConversion, response: ex.sale },
  },
  RefundConversion: {
    tag: tags.conversions,
    description:
      "Refunds `amount` (minor units) of a conversion, or all that is left of it when `amount` is omitted. Raises its `refunded_amount`, sets its `status` to `partially_refunded` or `refunded`, lowers its link's `total_revenue` by the refund, atomically, and sends a `conversion.refunded` webhook. More than is left (nothing is left of a refunded conversion) is 422 `refund_exceeds_amount`: of simultaneous refunds, those that no longer fit get it, so their sum never passes the amount. A conversion of a deleted campaign is 404.",
    request: {
      path: ConversionPath,
      pathNotFound: CONVERSION_NOT_FOUND,
      body: RefundBody,
      bodyOptional: true,
    },
    success: { status: 200, description: 'The conversion after the refund.', schema: Conversion },
    errors: ['conversion_not_found', 'refund_exceeds_amount'],
    example: { path: { id: ex.conversionId }, body: ex.refund, response: ex.saleRefunded },
  },
  GetConversion: {
    tag: tags.conversions,
    description: "Fetches a conversion by `id`, with its link's counters as they are now.",
    request: { query: ConversionQuery },
    success: { status: 200, description: 'The conversion.', schema: Conversion },
    errors: ['conversion_not_found'],
    example: { query: { id: ex.conversionId }, response: ex.saleRefunded },
  },
  ListConversions: {
    tag: tags.conversions,
    description:
      "Lists a campaign's conversions, newest first, one page at a time (`Link` and `x-next-cursor` as every list), all of them or, with `referrer_id` or `referred_user_id` (at most one), those of one referrer's links or of one referred user.",
    request: { path: ConversionsPath, query: ConversionsQuery },
    success: {
      status: 200,
      description: 'One page of conversions (possibly empty).',
      schema: ConversionList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: {
        limit: '100',
        cursor: ex.conversionCursor,
        referrer_id: ex.referrerId,
        referred_user_id: ex.referredUserId,
      },
      sampleQuery: ['limit', 'referrer_id'],
      response: ex.conversionPage,
    },
  },
  ListRewards: {
    tag: tags.rewards,
    description:
      "Lists a campaign's rewards and adjustments (negative rewards a refund made), newest first, one page at a time (`Link` and `x-next-cursor` as every list): all of them or, with `status`, those in one state (`status=in_review` is the review queue), and with `recipient_id` those of one recipient (as referrer or as referred user). Read from indexes, as fresh as they are (about a second): a reward whose state changed meanwhile is shown as it is now.",
    request: { path: RewardsPath, query: RewardsQuery },
    success: {
      status: 200,
      description: 'One page of rewards (possibly empty).',
      schema: RewardList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { limit: '100', cursor: ex.rewardCursor, status: 'paid', recipient_id: ex.referrerId },
      sampleQuery: ['limit', 'status'],
      response: ex.rewardPage,
    },
  },
  ApproveReward: {
    tag: tags.rewards,
    description:
      'Approves a reward: one `in_review` goes to `pending` (its hold still counted from its creation, so one whose hold is over is approved within a minute), one `pending` becomes `approved` now (its hold ends early). Its adjustments move with it. Any other state is 409: `reward_not_approvable` (approved already), `reward_paid`, `reward_voided`; an adjustment is approved with its reward (409 `adjustment_follows_reward`). A reward of another tenant or of a deleted campaign is 404.',
    request: { path: RewardPath },
    success: { status: 200, description: 'The reward after the change.', schema: Reward },
    errors: [
      'reward_not_found',
      'reward_not_approvable',
      'reward_paid',
      'reward_voided',
      'adjustment_follows_reward',
    ],
    example: { path: { id: ex.rewardId }, response: ex.rewardApproved },
  },
  VoidReward: {
    tag: tags.rewards,
    description:
      'Voids a reward that is `in_review`, `pending` or `approved` (not yet paid), with its adjustments, keeping `reason` as its `void_reason`. A paid reward is 409 `reward_paid` (a refund of its sale claws it back instead), a voided one 409 `reward_voided`. A clawback (an adjustment made after its reward was paid) may be voided: the business forgives that debt; an adjustment of an unpaid reward moves with its reward (409 `adjustment_follows_reward`).',
    request: { path: RewardPath, body: VoidRewardBody },
    success: { status: 200, description: 'The voided reward.', schema: Reward },
    errors: ['reward_not_found', 'reward_paid', 'reward_voided', 'adjustment_follows_reward'],
    example: { path: { id: ex.rewardId }, body: ex.voidReward, response: ex.rewardVoided },
  },
  GetBalance: {
    tag: tags.rewards,
    description:
      "Sums one recipient's rewards and adjustments by state, in minor units of the campaign's `currency`, exact at the moment of the read (strongly consistent). `recipient` says which kind `recipient_id` is (`referrer` when omitted). `voided` (additive) makes the parts sum to every amount ever made for the recipient; `approved` is net of clawbacks and can be negative. An unknown recipient has a balance of zeros.",
    request: { path: BalancePath, query: BalanceQuery },
    success: { status: 200, description: 'The sums by state.', schema: Balance },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId, recipient_id: ex.referrerId },
      query: { recipient: 'referrer' },
      response: ex.balance,
    },
  },
  CreatePayout: {
    tag: tags.rewards,
    description:
      "Records that you paid a recipient elsewhere (the service moves no money): every `approved` reward and adjustment of that recipient becomes `paid` in this payout, atomically, and the payout's `amount` is their sum. Clawbacks are netted first; when approved rewards minus clawbacks come to nothing, 422 `nothing_to_pay`. One payout takes at most 98 rewards (oldest first); `has_more` says more wait for another payout. Two payouts at once pay each reward once: the second pays what is left, or is 422.",
    request: { body: CreatePayoutBody },
    success: { status: 201, description: 'The payout.', schema: PayoutCreated },
    errors: ['campaign_not_found', 'nothing_to_pay'],
    example: { body: ex.createPayout, response: ex.payoutCreated },
  },
  ListPayouts: {
    tag: tags.rewards,
    description:
      "Lists a campaign's payouts, newest first, one page at a time (`Link` and `x-next-cursor` as every list), all of them or, with `recipient_id`, one recipient's.",
    request: { path: PayoutsPath, query: PayoutsQuery },
    success: {
      status: 200,
      description: 'One page of payouts (possibly empty).',
      schema: PayoutList,
      headers: listHeaders,
    },
    errors: ['campaign_not_found'],
    example: {
      path: { campaign_id: ex.campaignId },
      query: { limit: '100', cursor: ex.payoutCursor, recipient_id: ex.referrerId },
      sampleQuery: ['limit', 'recipient_id'],
      response: ex.payoutPage,
    },
  },
  Health: {
    tag: tags.health,
    description:
      'Public, no key: answers 200 whenever the service can answer at all, and calls nothing (no DynamoDB call), so a load balancer or an uptime check may call it as often as it likes. Never cached. For whether the service can also reach its table, see the readiness check.',
    success: { status: 200, description: 'The service answers.', schema: Health },
    example: { response: ex.health },
  },
  Readiness: {
    tag: tags.health,
    description:
      "For operators, with a key: reads one item of the table (an item that never exists, so no account's data is read) and answers 200 with the read's latency when it succeeds, or 503 `service_unavailable` when the table throttles, fails or does not answer in time.",
    success: { status: 200, description: 'The table answered.', schema: Readiness },
    example: { response: ex.readiness },
  },
  GetOpenApiDocument: {
    tag: tags.meta,
    description: 'Public, no key: this OpenAPI 3.1 document.',
    success: {
      status: 200,
      description: 'The OpenAPI document.',
      schema: Type.Object({}, { description: 'An OpenAPI 3.1 document', additionalProperties: true }),
    },
    example: { response: ex.openApiDocument },
  },
  GetApiReference: {
    tag: tags.meta,
    description:
      'Public, no key: the API reference page, rendered in the browser from this document with Redoc, which this same route serves (`asset`) so the page needs nothing from elsewhere.',
    request: { query: DocsQuery },
    success: {
      status: 200,
      description: 'The reference page, or with `asset` the script it loads.',
      schema: Type.String(),
      media: ['text/html', 'text/javascript'],
    },
    example: {
      query: { asset: REDOC_ASSET, v: ex.redocVersion },
      sampleQuery: [],
      responses: { 'text/html': ex.referencePage, 'text/javascript': ex.redocScript },
    },
  },
  GetDashboard: {
    tag: tags.meta,
    description:
      'Public, no key: the dashboard, a small web app over this API (campaigns and their settings: name, webhook URL and events, test event, secret rotation; a campaign’s activity chart over a chosen range and leaderboard, its links with a chart each, referred-user lookup, webhook deliveries with redeliver, and the events feed). This same route serves its script and stylesheet (`asset`), so it needs nothing from elsewhere; the page holds no data and calls the API with the key the user pastes, kept in `sessionStorage` only.',
    request: { query: DashboardQuery },
    success: {
      status: 200,
      description: 'The dashboard page, or with `asset` the script or stylesheet it loads.',
      schema: Type.String(),
      media: ['text/html', 'text/javascript', 'text/css'],
    },
    example: {
      query: { asset: 'app.js', v: ex.dashboardVersion },
      sampleQuery: [],
      responses: {
        'text/html': ex.dashboardPage,
        'text/javascript': ex.dashboardScript,
        'text/css': ex.dashboardStyles,
      },
    },
  },
} satisfies Readonly<Record<string, OperationDefinition>>;
