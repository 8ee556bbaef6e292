/**
 * What the route table does not say about each route, keyed by the row's `name`: the schemas the
 * handler validates with (the very same constants it passes to `httpHandler`), the success response
 * and the errors particular to the route. Everything else in the document (paths, methods, summaries,
 * security, path parameters, the common errors) comes from the row and the schemas themselves.
 */
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.ts';
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
  ReferrerLinksPath,
} from '../domain/link-schemas.ts';
import { Campaign, CampaignIdQuery, CreateCampaignBody, UpdateCampaignBody } from '../domain/schemas.ts';
import { DocsQuery } from './docs-query.ts';

export const tags = {
  campaigns: 'Campaigns',
  links: 'Referral links',
  referredUsers: 'Referred users',
  actions: 'Actions',
  redirect: 'Redirect',
  meta: 'Documentation',
} as const;
export type Tag = (typeof tags)[keyof typeof tags];

/** Response headers beyond `x-request-id` (which every response carries). */
export type ResponseHeader = 'link' | 'x-next-cursor' | 'location' | 'idempotent-replayed';

export type MediaType = 'application/json' | 'text/html' | 'text/javascript';

export interface SuccessResponse {
  status: 200 | 201 | 204 | 302;
  description: string;
  /** The body's schema; absent for a response without a body. */
  schema?: TSchema;
  /** Media types of the body; `application/json` when not given. */
  media?: readonly MediaType[];
  headers?: readonly ResponseHeader[];
}

export interface OperationMetadata {
  tag: Tag;
  description: string;
  /** The handler's query schema: each property is a query parameter, its `required` ones required. */
  query?: TObject;
  /** Schemas of the path's `{parameters}`, by name. */
  path?: Readonly<Record<string, TSchema>>;
  /** The handler's JSON body schema. */
  body?: TObject;
  /** The handler accepts a request without a body (`bodyOptional`). */
  bodyOptional?: boolean;
  success: SuccessResponse;
  /**
   * Errors particular to the route. The common ones are added by the document builder: 401 on rows
   * with `auth`, 400/415 where there is a body, 400 where there is a query, 413, 429 and 500 always.
   * A path parameter the handler validates (400) is listed here, as not every handler does.
   */
  errors?: readonly ErrorCode[];
}

// The list handlers validate their path parameters with these very schemas.
const campaignIdParam = CampaignLinksPath.properties.campaign_id;
const referrerIdParam = ReferrerLinksPath.properties.referrer_id;
const referralCodeParam = CreateLinkBody.properties.referral_code;

const listHeaders = ['link', 'x-next-cursor'] as const;

export const operations: Readonly<Record<string, OperationMetadata>> = {
  CreateReferralLink: {
    tag: tags.links,
    description:
      'Creates a referral link in a campaign, with a generated code (8 characters of `A-Z` and `2-9` without `I` and `O`) unless a custom `referral_code` is given. `referral_link` is the campaign URL with `rfa=<code>` added.',
    body: CreateLinkBody,
    success: { status: 201, description: 'The new referral link.', schema: ReferralLink },
    errors: ['campaign_not_found', 'referral_code_taken'],
  },
  GetReferralLink: {
    tag: tags.links,
    description:
      'Fetches one referral link by `id` or by `referral_code`. With both, the link is returned only if both name the same link (otherwise 404). With neither: 400 `missing_parameter`.',
    query: GetLinkQuery,
    success: { status: 200, description: 'The referral link.', schema: ReferralLink },
    errors: ['missing_parameter', 'referral_link_not_found'],
  },
  ListCampaignLinks: {
    tag: tags.links,
    description:
      'Lists the referral links of a campaign, oldest first, one page at a time. While more links remain, the response carries a `Link` header with `rel="next"` and `x-next-cursor`; pass the cursor back as `cursor` for the next page.',
    path: { campaign_id: campaignIdParam },
    query: ListQuery,
    success: {
      status: 200,
      description: 'One page of links (possibly empty).',
      schema: ReferralLinkList,
      headers: listHeaders,
    },
    errors: ['validation_failed', 'campaign_not_found'],
  },
  ListReferrerLinks: {
    tag: tags.links,
    description:
      "Lists one referrer's referral links in a campaign, oldest first, paginated like the campaign's list. An unknown referrer gives an empty list; an unknown campaign 404.",
    path: { campaign_id: campaignIdParam, referrer_id: referrerIdParam },
    query: ListQuery,
    success: {
      status: 200,
      description: 'One page of links (possibly empty).',
      schema: ReferralLinkList,
      headers: listHeaders,
    },
    errors: ['validation_failed', 'campaign_not_found'],
  },
  CreateReferredUserAction: {
    tag: tags.actions,
    description:
      "Records an action of a referred user, found by `referred_user_id` in the campaign. Raises the link's `total_clicks` by one, atomically with the action, and sends an `action.created` webhook.",
    body: CreateUserActionBody,
    success: { status: 201, description: 'The new action.', schema: Action },
    errors: ['campaign_not_found', 'referred_user_not_found'],
  },
  CreateCampaign: {
    tag: tags.campaigns,
    description:
      'Creates a campaign. `url` is trimmed and gets `https://` in front when it has no scheme; it must then be an absolute http(s) URL. `webhook_url` and `webhook_secret` start as null.',
    body: CreateCampaignBody,
    success: { status: 201, description: 'The new campaign.', schema: Campaign },
  },
  GetCampaign: {
    tag: tags.campaigns,
    description: 'Fetches a campaign by id.',
    query: CampaignIdQuery,
    success: { status: 200, description: 'The campaign.', schema: Campaign },
    errors: ['campaign_not_found'],
  },
  UpdateCampaign: {
    tag: tags.campaigns,
    description:
      'Changes the name and/or the webhook URL of a campaign (`null` clears the webhook URL). The first `webhook_url` set creates the `webhook_secret`, which stays the same afterwards. The campaign `url` is immutable: sending it is 400 `url_immutable`.',
    query: CampaignIdQuery,
    body: UpdateCampaignBody,
    bodyOptional: true,
    success: { status: 200, description: 'The updated campaign.', schema: Campaign },
    errors: ['url_immutable', 'campaign_not_found'],
  },
  DeleteCampaign: {
    tag: tags.campaigns,
    description:
      'Deletes a campaign with its links, referred users and actions: all of them are gone from every endpoint at once (the redirects of its links answer 404).',
    query: CampaignIdQuery,
    success: { status: 204, description: 'Deleted; no body.' },
    errors: ['campaign_not_found'],
  },
  CreateReferredUser: {
    tag: tags.referredUsers,
    description:
      "Records a signup through a link, given by exactly one of `referral_code` and `referral_link_id`. Raises the link's `total_referrals` by one, atomically with the record, and sends a `referred_user.created` webhook. A `referred_user_id` belongs to at most one link per campaign.",
    body: CreateReferredUserBody,
    success: { status: 201, description: 'The new referred user.', schema: ReferredUser },
    errors: ['referral_link_not_found', 'referred_user_exists', 'self_referral'],
  },
  GetReferredUser: {
    tag: tags.referredUsers,
    description: 'Fetches a referred user of a campaign by its `referred_user_id`.',
    query: GetReferredUserQuery,
    success: { status: 200, description: 'The referred user.', schema: ReferredUser },
    errors: ['campaign_not_found', 'referred_user_not_found'],
  },
  CreateLinkAction: {
    tag: tags.actions,
    description:
      "Records an action on a link, given by exactly one of `referral_code` and `referral_link_id`, with `referred_user: null`. Raises the link's `total_clicks` by one, atomically with the action, and sends an `action.created` webhook.",
    body: CreateLinkActionBody,
    success: { status: 201, description: 'The new action.', schema: Action },
    errors: ['referral_link_not_found'],
  },
  Visit: {
    tag: tags.redirect,
    description:
      "Public, no key: redirects to the link's `referral_link` and records a `visit` action whose metadata holds the `user_agent` and `referer` of the request when present (no IP address is stored). `HEAD` requests and link-preview or crawler user agents are redirected without being recorded.",
    path: { referral_code: referralCodeParam },
    success: { status: 302, description: 'Redirect to the referral link.', headers: ['location'] },
    errors: ['referral_link_not_found'],
  },
  GetOpenApiDocument: {
    tag: tags.meta,
    description: 'Public, no key: this OpenAPI 3.1 document.',
    success: {
      status: 200,
      description: 'The OpenAPI document.',
      schema: Type.Object({}, { description: 'An OpenAPI 3.1 document', additionalProperties: true }),
    },
  },
  GetApiReference: {
    tag: tags.meta,
    description:
      'Public, no key: the API reference page, rendered in the browser from this document with Redoc, which this same route serves (`asset`) so the page needs nothing from elsewhere.',
    query: DocsQuery,
    success: {
      status: 200,
      description: 'The reference page, or with `asset` the script it loads.',
      schema: Type.String(),
      media: ['text/html', 'text/javascript'],
    },
  },
};
