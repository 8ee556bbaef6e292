/** The committed ISO 4217 list is the `currency-codes` package's, minor units included. */
import currencyCodes from 'currency-codes';
import { describe, expect, it } from 'vitest';
import { CURRENCY_PATTERN, ISO_4217_CODES, minorUnitsOf } from '../../lib/domain/currencies.ts';

describe('ISO 4217 codes', () => {
  it('are the package list, with its minor units', () => {
    expect(ISO_4217_CODES).toEqual(currencyCodes.codes().slice().sort());
    for (const code of ISO_4217_CODES)
      expect(minorUnitsOf(code), code).toBe(currencyCodes.code(code)?.digits);
    expect([minorUnitsOf('JPY'), minorUnitsOf('USD'), minorUnitsOf('KWD')]).toEqual([0, 2, 3]);
  });

  it('the pattern takes known codes in upper case only', () => {
    const pattern = new RegExp(CURRENCY_PATTERN);
    for (const ok of ['USD', 'EUR', 'JPY', 'KWD']) expect(pattern.test(ok), ok).toBe(true);
    for (const bad of ['usd', 'Usd', 'XYZ', 'EURO', 'EU', '', 'USD ', 'constructor', 'toString'])
      expect(pattern.test(bad), bad).toBe(false);
    expect(minorUnitsOf('constructor')).toBeUndefined();
  });
});
