/**
 * Request and response schemas, written once with TypeBox: they give the TypeScript types, the
 * validators the functions run (generated at build time from the operations, `lib/operations/`) and
 * the OpenAPI document.
 */
import { type Static, Type } from '@sinclair/typebox';
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS, MAX_ATTRIBUTION_WINDOW_DAYS } from './click-ids.ts';
import { CURRENCY_PATTERN } from './currencies.ts';
import { ReviewSignupsPerHour, RewardRule, RewardRulesInput } from './reward-rule-schemas.ts';
import { Text } from './schema-kinds.ts';
import { MAX_URL_LENGTH } from './url.ts';

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}$';

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'A UUID' });
export const Timestamp = Type.String({
  pattern: TIMESTAMP_PATTERN,
  description: 'UTC time as YYYY-MM-DD_HH-MM-SS',
  examples: ['2026-11-22_14-05-09'],
});

export const MAX_NAME_LENGTH = 256;

/** An ISO 4217 code as the API takes it: upper case, one of the list (`currencies.ts`). */
export const currencyField = (more = '') =>
  Type.String({
    pattern: CURRENCY_PATTERN,
    description: `An ISO 4217 currency code in upper case, e.g. \`USD\`, \`EUR\`, \`JPY\`.${more}`,
    examples: ['USD', 'EUR'],
  });

/** A subscribable event type (a pattern rather than literals: the validators describe patterns). */
export const WebhookEventTypeField = Type.String({
  pattern:
    '^(action\\.created|referred_user\\.created|conversion\\.created|conversion\\.refunded|reward\\.(created|approved|voided|paid|flagged))$',
  description:
    'An event type: action.created, referred_user.created, conversion.created, conversion.refunded, reward.created, reward.approved, reward.voided, reward.paid or reward.flagged',
});

const CampaignName = Text({
  minLength: 1,
  maxLength: MAX_NAME_LENGTH,
  trimmed: true,
  noControl: true,
  description: 'Internal name of the campaign, stored trimmed.',
});

const ClickIds = Type.Boolean({
  description:
    'Whether a counted visit through `/r/{code}` adds a click id, `rfclid=<id>`, to its redirect after `rfa` (not for bots or `HEAD`). Send it back as `click_id` on signup. Off by default.',
});
const AttributionWindowDays = Type.Integer({
  minimum: 1,
  maximum: MAX_ATTRIBUTION_WINDOW_DAYS,
  description: `Days a click id can attribute a signup: an older click is 422 \`click_expired\`. The window in force at signup time counts. ${DEFAULT_ATTRIBUTION_WINDOW_DAYS} by default.`,
});

export const CreateCampaignBody = Type.Object(
  {
    url: Text({
      minLength: 1,
      maxLength: MAX_URL_LENGTH,
      trimmed: true,
      description:
        'Base URL of the referral links, stored trimmed; `https://` is put in front when it has no scheme, and it must then be an absolute http(s) URL with a host.',
    }),
    name: CampaignName,
    click_ids: Type.Optional(ClickIds),
    attribution_window_days: Type.Optional(AttributionWindowDays),
    currency: Type.Optional(
      currencyField(' Amounts of its conversions are in its minor unit. `USD` when omitted.'),
    ),
    reward_rules: Type.Optional(RewardRulesInput),
    review_signups_per_hour: Type.Optional(ReviewSignupsPerHour),
  },
  { additionalProperties: false },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const UpdateCampaignBody = Type.Object(
  {
    name: Type.Optional(CampaignName),
    webhook_url: Type.Optional(
      Type.Union(
        [
          Text({
            minLength: 1,
            maxLength: MAX_URL_LENGTH,
            trimmed: true,
            description: 'An absolute http(s) URL (https only when deployed).',
          }),
          Type.Null(),
        ],
        { description: 'Where events are sent; `null` clears it.' },
      ),
    ),
    webhook_events: Type.Optional(
      Type.Array(WebhookEventTypeField, {
        description:
          'The event types sent to `webhook_url`: a non-empty array of distinct types. Events of other types are still in the events feed.',
      }),
    ),
    webhook_status: Type.Optional(
      Type.String({
        pattern: '^(enabled|disabled)$',
        description:
          'A webhook status: `enabled` (re-enables a disabled webhook and restarts its failure clock) or `disabled` (no deliveries; events are still recorded in the feed)',
      }),
    ),
    click_ids: Type.Optional(ClickIds),
    attribution_window_days: Type.Optional(AttributionWindowDays),
    currency: Type.Optional(
      currencyField(" Only until the campaign's first conversion (then 409 `currency_locked`)."),
    ),
    reward_rules: Type.Optional(RewardRulesInput),
    review_signups_per_hour: Type.Optional(ReviewSignupsPerHour),
    url: Type.Optional(
      Type.Unknown({ description: 'Not allowed: a campaign URL is immutable (400 url_immutable)' }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateCampaignBody = Static<typeof UpdateCampaignBody>;

export const CampaignIdQuery = Type.Object({ id: Uuid }, { additionalProperties: true });

export const Campaign = Type.Object(
  {
    id: Uuid,
    created_at: Timestamp,
    url: Type.String(),
    name: Type.String(),
    webhook_url: Type.Union([Type.String(), Type.Null()]),
    webhook_secret: Type.Union([
      Type.String({ pattern: '^whsec_[A-Za-z0-9+/]{43}=$', description: 'Standard Webhooks signing secret' }),
      Type.Null(),
    ]),
    webhook_events: Type.Array(
      Type.Union([
        Type.Literal('action.created'),
        Type.Literal('referred_user.created'),
        Type.Literal('conversion.created'),
        Type.Literal('conversion.refunded'),
        Type.Literal('reward.created'),
        Type.Literal('reward.approved'),
        Type.Literal('reward.voided'),
        Type.Literal('reward.paid'),
        Type.Literal('reward.flagged'),
      ]),
      {
        description: 'The event types sent to `webhook_url` (all by default).',
      },
    ),
    webhook_status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
      description:
        '`disabled` after 3 days of failing every attempt (or when set so): nothing is sent, events stay in the feed.',
    }),
    webhook_disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why the webhook is disabled; null while enabled.',
    }),
    click_ids: ClickIds,
    attribution_window_days: AttributionWindowDays,
    currency: Type.String({
      pattern: '^[A-Z]{3}$',
      description:
        "The ISO 4217 code of the campaign's conversions (`USD` unless set); fixed from its first conversion on.",
    }),
    reward_rules: Type.Array(RewardRule, {
      description: 'The reward rules in force now (`[]`: no rewards).',
    }),
    review_signups_per_hour: ReviewSignupsPerHour,
  },
  { additionalProperties: false },
);
export type Campaign = Static<typeof Campaign>;

export const CampaignList = Type.Array(Campaign);

export const ErrorResponse = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String(),
        message: Type.String(),
        details: Type.Optional(
          Type.Array(
            Type.Object({ field: Type.String(), message: Type.String() }, { additionalProperties: false }),
          ),
        ),
        doc_url: Type.String({
          pattern: '^(?:https?://[^/?#]+)?/docs#section/Errors/[a-z_]+$',
          description:
            "This code's entry in the API reference (`/docs#section/Errors/<code>`): absolute on the host the request reached, relative where that host is not known.",
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
