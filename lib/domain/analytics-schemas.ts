/**
 * Endpoints 16 and 17 (analytics): query and response schemas.
 */
import { type Static, Type } from '@sinclair/typebox';
import { UserId } from './link-schemas.ts';
import { Timestamp, Uuid } from './schemas.ts';

export const AnalyticsPath = Type.Object({ campaign_id: Uuid });

export const AnalyticsQuery = Type.Object(
  {
    granularity: Type.Optional(
      Type.String({ pattern: '^(hour|day)$', description: '`hour` or `day` (the default)', default: 'day' }),
    ),
    from: Type.Optional(
      Type.String({
        ...Timestamp,
        description:
          'Start of the range (UTC, YYYY-MM-DD_HH-MM-SS), in the point it falls in. Default: 30 days before `to` for days, 7 days before for hours.',
      }),
    ),
    to: Type.Optional(
      Type.String({
        ...Timestamp,
        description: 'End of the range (UTC), in the point it falls in. Default: now.',
      }),
    ),
    referral_link_id: Type.Optional(
      Type.String({ pattern: '^[1-9][0-9]{0,15}$', description: 'Only this link (a positive integer id)' }),
    ),
    referrer_id: Type.Optional({ ...UserId, description: 'Only the links of this referrer' }),
  },
  { additionalProperties: true },
);

const Count = Type.Integer({ minimum: 0 });

export const Metrics = Type.Object(
  {
    visits: { ...Count, description: 'Visits through /r/{code} by people (not bots)' },
    unique_visits: {
      ...Count,
      description: 'Visits of a visitor who had not visited the same link in the previous hour',
    },
    bot_visits: { ...Count, description: 'Visits by bots and HEAD requests, never in total_clicks' },
    referred_users: { ...Count, description: 'Referred users (signups) created' },
    actions: { ...Count, description: 'Actions of every type other than `visit`' },
    conversions: { ...Count, description: 'Conversions (sales) recorded' },
    revenue: Type.Integer({
      description:
        "Their amounts net of refunds, in the minor unit of the campaign's currency: a refund subtracts in the hour or day it happens (not the sale's), so a point can be negative.",
    }),
    actions_by_type: Type.Record(Type.String(), Count, { description: 'Actions per action type' }),
  },
  { additionalProperties: false },
);

export const AnalyticsPoint = Type.Object(
  { start: { ...Timestamp, description: 'Start of the hour or day (UTC)' }, ...Metrics.properties },
  { additionalProperties: false },
);

export const AnalyticsSeries = Type.Object(
  {
    campaign_id: Uuid,
    granularity: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
    from: { ...Timestamp, description: 'Start of the first point' },
    to: { ...Timestamp, description: 'End of the range, as asked (or now)' },
    totals: Metrics,
    series: Type.Array(AnalyticsPoint, {
      description: 'One point per hour or day of the range, zeros included',
    }),
  },
  { additionalProperties: false },
);
export type AnalyticsSeries = Static<typeof AnalyticsSeries>;

export const TopQuery = Type.Object(
  {
    metric: Type.Optional(
      Type.String({
        pattern: '^(referred_users|visits|unique_visits|actions|conversions|revenue)$',
        description: 'What to rank by (default `referred_users`)',
        default: 'referred_users',
      }),
    ),
    by: Type.Optional(
      Type.String({
        pattern: '^(referrer|referral_link)$',
        description: 'Rank referrers (default) or referral links',
        default: 'referrer',
      }),
    ),
    limit: Type.Optional(
      Type.String({
        pattern: '^(?:[1-9][0-9]?|100)$',
        description: 'How many, 1–100 (default 10)',
        default: '10',
      }),
    ),
  },
  { additionalProperties: true },
);

export const TopEntry = Type.Union(
  [
    Type.Object(
      { rank: Type.Integer({ minimum: 1 }), referrer_id: Type.String(), value: Count },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        rank: Type.Integer({ minimum: 1 }),
        referral_link: Type.Union([Type.String(), Type.Null()], { description: 'The link URL' }),
        referral_link_id: Type.Integer({ minimum: 1 }),
        referral_code: Type.String(),
        value: Count,
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'A referrer (by=referrer) or a referral link (by=referral_link) and its all-time value' },
);
export const TopList = Type.Array(TopEntry);
export type TopList = Static<typeof TopList>;
