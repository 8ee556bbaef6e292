/** Schemas of referral links, referred users and actions (see `schemas.ts` for the conventions). */
import { type Static, Type } from '@sinclair/typebox';
import { CODE_PATTERN, DEFAULT_LIST_LIMIT, MAX_METADATA_BYTES } from './field-rules.ts';
import { JsonObject, Text } from './schema-kinds.ts';
import { Timestamp, Uuid } from './schemas.ts';

export { CODE_PATTERN, DEFAULT_LIST_LIMIT, MAX_METADATA_BYTES } from './field-rules.ts';

export const ReferralCode = Type.String({
  pattern: CODE_PATTERN,
  description: '4-32 characters of A-Z a-z 0-9 _ -',
});
export const UserId = Text({
  minLength: 1,
  maxLength: 256,
  noControl: true,
  description: 'An id of your own.',
});
const LinkId = Type.Integer({
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: 'A referral link id',
});
const Metadata = JsonObject({
  maxBytes: MAX_METADATA_BYTES,
  description:
    'Any JSON object of at most 8 KiB as compact UTF-8 JSON (any keys, any nesting), kept and returned exactly as sent; `{}` when omitted. A number that is not finite (`1e400`) is refused.',
});
const ActionType = Text({ minLength: 1, maxLength: 64, description: 'What happened, e.g. `purchase`.' });

export const CreateLinkBody = Type.Object(
  {
    campaign_id: Uuid,
    referrer_id: Type.Optional(
      Type.Union([Type.Literal(''), UserId, Type.Null()], {
        description: 'Omitted, null or "" mean no referrer',
      }),
    ),
    referral_code: Type.Optional(ReferralCode),
  },
  { additionalProperties: false },
);
export type CreateLinkBody = Static<typeof CreateLinkBody>;

export const GetLinkQuery = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'a positive integer id' })),
    referral_code: Type.Optional(ReferralCode),
  },
  { additionalProperties: true },
);

export const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      // A query value is a string on the wire; the pattern is the range 1–1000.
      Type.String({
        pattern: '^(?:[1-9][0-9]{0,2}|1000)$',
        description: `an integer from 1 to 1000, the most items of the page (${DEFAULT_LIST_LIMIT} when omitted)`,
        default: String(DEFAULT_LIST_LIMIT),
        examples: ['100', '1000'],
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: 1024,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'a cursor from x-next-cursor',
      }),
    ),
  },
  { additionalProperties: true },
);

export const LinkTarget = {
  referral_code: Type.Optional(ReferralCode),
  referral_link_id: Type.Optional(LinkId),
};

/** What a signup may name instead of a link: a click (`rfclid` of the redirect). */
const ClickIdField = Type.String({
  minLength: 1,
  maxLength: 256,
  description:
    "The click id the redirect gave the visitor (`rfclid`), kept by your site: the referred user is created on that click's link and records the click. Unknown, of another account or of a deleted campaign: 404 `click_not_found`; older than the campaign's `attribution_window_days`: 422 `click_expired`.",
});

export const CreateReferredUserBody = Type.Object(
  { ...LinkTarget, click_id: Type.Optional(ClickIdField), referred_user_id: UserId },
  { additionalProperties: false },
);
export type CreateReferredUserBody = Static<typeof CreateReferredUserBody>;

export const GetReferredUserQuery = Type.Object(
  { campaign_id: Uuid, referred_user_id: UserId },
  { additionalProperties: true },
);

export const CreateUserActionBody = Type.Object(
  { campaign_id: Uuid, action_type: ActionType, referred_user_id: UserId, metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export type CreateUserActionBody = Static<typeof CreateUserActionBody>;

export const CreateLinkActionBody = Type.Object(
  { ...LinkTarget, action_type: ActionType, metadata: Type.Optional(Metadata) },
  { additionalProperties: false },
);
export type CreateLinkActionBody = Static<typeof CreateLinkActionBody>;

export const ReferralLink = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    referral_code: Type.String(),
    campaign_id: Uuid,
    referrer_id: Type.Union([Type.String(), Type.Null()]),
    referral_link: Type.Union([Type.String(), Type.Null()]),
    share_url: Type.String({
      description:
        "The URL to give referrers: `{public base}/r/{referral_code}`, which redirects to `referral_link` and records the visit. The public base is the stage's custom domain when one is configured, else the API's own URL.",
      examples: ['https://go.example.com/r/ABC623KC'],
    }),
    total_clicks: Type.Integer({ minimum: 0 }),
    total_referrals: Type.Integer({ minimum: 0 }),
    total_conversions: Type.Integer({
      minimum: 0,
      description: 'Conversions (sales) of its referred users.',
    }),
    total_revenue: Type.Integer({
      minimum: 0,
      description: "Their amounts net of refunds, in the minor unit of the campaign's currency.",
    }),
  },
  { additionalProperties: false },
);
export type ReferralLink = Static<typeof ReferralLink>;

export const ReferredUser = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    referral_link: ReferralLink,
    referred_user_id: Type.String(),
    click_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The click id the signup was made with; null for a signup by code or link id.',
    }),
    clicked_at: Type.Union([Timestamp, Type.Null()], {
      description: 'When that click (the visit) happened; null without a click id.',
    }),
  },
  { additionalProperties: false },
);
export type ReferredUser = Static<typeof ReferredUser>;

export const Action = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    action_type: Type.String(),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    referral_link: ReferralLink,
    referred_user: Type.Union([ReferredUser, Type.Null()]),
  },
  { additionalProperties: false },
);
export type Action = Static<typeof Action>;

export const ReferralLinkList = Type.Array(ReferralLink);
export const ReferredUserList = Type.Array(ReferredUser);

/** Endpoint 33's query: a page, and at most one filter (both is 400, checked by the handler). */
export const ReferredUsersQuery = Type.Object(
  {
    ...ListQuery.properties,
    referral_link_id: Type.Optional(
      Type.String({
        pattern: '^[1-9][0-9]{0,15}$',
        description: 'Only the referred users of this link (its id)',
      }),
    ),
    referrer_id: Type.Optional({
      ...UserId,
      description: "Only the referred users of this referrer's links",
    }),
  },
  { additionalProperties: true },
);

/** Path parameters of the two list routes and of the redirect (see their operations). */
export const CampaignLinksPath = Type.Object({ campaign_id: Uuid });
export const ReferrerLinksPath = Type.Object({ campaign_id: Uuid, referrer_id: UserId });
export const VisitPath = Type.Object({ referral_code: ReferralCode });
