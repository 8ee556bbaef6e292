/**
 * ISO 4217 currency codes, from the `currency-codes` package (ISO's list one, with each code's
 * minor unit). Read at build time only: the schemas turn the list into the pattern the generated
 * validators check (`lib/operations/compiled.ts`), so no function bundles the package.
 *
 * Not `Intl.supportedValuesOf('currency')`: its list is ICU's and changes with the runtime's ICU
 * (Node 20 here, Node 22 on Lambda), so a code could be accepted locally and refused deployed, or
 * start being refused after a runtime patch; it also keeps withdrawn codes (HRK, SLL, ZWL, CUC)
 * and has no minor units of ISO's own. A list fixed at build time accepts the same codes everywhere.
 */
import currencyCodes from 'currency-codes';

export const ISO_4217_CODES: readonly string[] = currencyCodes.codes().slice().sort();

/** The digits of a code's minor unit (JPY 0, USD 2, KWD 3), for the documentation. */
export function minorUnitsOf(code: string): number | undefined {
  return currencyCodes.code(code)?.digits;
}

/** Exactly the codes of the list: upper case, three letters, known. */
export const CURRENCY_PATTERN = `^(?:${ISO_4217_CODES.join('|')})$`;
