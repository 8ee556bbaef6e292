/**
 * Request and response schemas, written once with TypeBox: they give the TypeScript types, the
 * runtime validators (compiled at module load in `lib/http/validate.ts`) and the OpenAPI document.
 */
import { type Static, Type } from '@sinclair/typebox';

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const TIMESTAMP_PATTERN = '^\\d{4}-\\d{2}-\\d{2}_\\d{2}-\\d{2}-\\d{2}$';

export const Uuid = Type.String({ pattern: UUID_PATTERN, description: 'A UUID' });
export const Timestamp = Type.String({
  pattern: TIMESTAMP_PATTERN,
  description: 'UTC time as YYYY-MM-DD_HH-MM-SS',
  examples: ['2026-11-22_14-05-09'],
});

// Lengths are checked again after trimming in the domain rules; the schema bounds keep absurd
// inputs out before any work is done on them.
export const CreateCampaignBody = Type.Object(
  {
    url: Type.String({
      maxLength: 4096,
      description: 'Base URL of the referral links; https:// is added when no scheme is given',
    }),
    name: Type.String({ maxLength: 4096, description: 'Internal name, 1-256 characters after trimming' }),
  },
  { additionalProperties: false },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const UpdateCampaignBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 4096 })),
    webhook_url: Type.Optional(Type.Union([Type.String({ maxLength: 4096 }), Type.Null()])),
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
  },
  { additionalProperties: false },
);
export type Campaign = Static<typeof Campaign>;

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
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
