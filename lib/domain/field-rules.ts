/**
 * Figures of the contract's field rules that runtime code reads as well as the schemas. Kept apart
 * from the TypeBox schemas (`link-schemas.ts` re-exports them) so that a function reading one does
 * not bundle TypeBox.
 */

export const CODE_PATTERN = '^[A-Za-z0-9_-]{4,32}$';
export const MAX_METADATA_BYTES = 8 * 1024;

/** Items per page of a list: 1–1000, 100 when `limit` is omitted (contract, Field rules). */
export const DEFAULT_LIST_LIMIT = 100;

/** A campaign's currency when none is given (and of a campaign stored before currencies existed). */
export const DEFAULT_CURRENCY = 'USD';
/** Conversion amounts, in the currency's minor unit: 1 to 10^12 (contract, Attribution and conversions). */
export const MAX_CONVERSION_AMOUNT = 1_000_000_000_000;
