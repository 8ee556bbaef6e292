/** Schemas of conversions (sales) and refunds (see `schemas.ts` for the conventions). */
import { type Static, Type } from '@sinclair/typebox';
import { MAX_CONVERSION_AMOUNT, MAX_METADATA_BYTES } from './field-rules.ts';
import { ListQuery, ReferralLink, ReferredUser, UserId } from './link-schemas.ts';
import { JsonObject, Text } from './schema-kinds.ts';
import { currencyField, Timestamp, Uuid } from './schemas.ts';

/** What `conversionId` makes (`lib/db/entities/conversion.ts`): `cv_` and 40 characters of base64url. */
export const CONVERSION_ID_PATTERN = '^cv_[A-Za-z0-9_-]{40}$';
export const ConversionId = Type.String({
  pattern: CONVERSION_ID_PATTERN,
  description: 'A conversion id, as the API gave it (`cv_` and 40 characters).',
});

/**
 * An amount in minor units: a JSON integer from 1 to 10^12. JSON has one number type, so `1e3`
 * written as a number is the integer 1000 and is taken; `"1e3"` or `"1000"` (strings), `0.5` and
 * `1e12 + 1` are not.
 */
const Amount = (description: string) =>
  Type.Integer({ minimum: 1, maximum: MAX_CONVERSION_AMOUNT, description });

const ExternalId = Text({
  minLength: 1,
  maxLength: 256,
  noControl: true,
  description:
    'Your own id of the sale (an invoice, an order): unique per campaign; a second conversion with it is 409 `conversion_exists`.',
});

const Metadata = JsonObject({
  maxBytes: MAX_METADATA_BYTES,
  description:
    'Any JSON object of at most 8 KiB as compact UTF-8 JSON, kept and returned as sent; `{}` when omitted.',
});

export const CreateConversionBody = Type.Object(
  {
    campaign_id: Uuid,
    referred_user_id: UserId,
    amount: Amount(
      "The sale's amount in the minor unit of the campaign's currency (cents for USD, yen for JPY, fils for KWD): an integer from 1 to 10^12.",
    ),
    currency: Type.Optional(currencyField(" Must be the campaign's (422 `currency_mismatch`) when given.")),
    external_id: Type.Optional(ExternalId),
    metadata: Type.Optional(Metadata),
  },
  { additionalProperties: false },
);
export type CreateConversionBody = Static<typeof CreateConversionBody>;

export const RefundBody = Type.Object(
  {
    amount: Type.Optional(
      Amount('How much to refund, in minor units; all that is left of the conversion when omitted.'),
    ),
  },
  { additionalProperties: false },
);
export type RefundBody = Static<typeof RefundBody>;

export const ConversionPath = Type.Object({ id: ConversionId });
export const ConversionQuery = Type.Object({ id: ConversionId }, { additionalProperties: true });
export const ConversionsPath = Type.Object({ campaign_id: Uuid });

export const Conversion = Type.Object(
  {
    id: Type.String({ pattern: CONVERSION_ID_PATTERN }),
    created_at: Timestamp,
    campaign_id: Uuid,
    referred_user: ReferredUser,
    referral_link: ReferralLink,
    amount: Type.Integer({ minimum: 1, maximum: MAX_CONVERSION_AMOUNT, description: 'In minor units.' }),
    refunded_amount: Type.Integer({
      minimum: 0,
      maximum: MAX_CONVERSION_AMOUNT,
      description: 'The sum of its refunds, in minor units.',
    }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    external_id: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    status: Type.Union(
      [Type.Literal('completed'), Type.Literal('partially_refunded'), Type.Literal('refunded')],
      { description: '`completed` until a refund, then `partially_refunded` or (nothing left) `refunded`.' },
    ),
  },
  { additionalProperties: false },
);
export type Conversion = Static<typeof Conversion>;
export const ConversionList = Type.Array(Conversion);

export const ConversionsQuery = Type.Object(
  {
    ...ListQuery.properties,
    referrer_id: Type.Optional({ ...UserId, description: "Only the conversions of this referrer's links." }),
    referred_user_id: Type.Optional({
      ...UserId,
      description: 'Only the conversions of this referred user.',
    }),
  },
  { additionalProperties: true },
);
