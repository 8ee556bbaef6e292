import { describe, expect, it } from 'vitest';
import { linkOrder } from '../../lib/db/entities/link.ts';
import { ApiError } from '../../lib/domain/errors.ts';
import {
  CODE_ALPHABET,
  GENERATED_CODE_LENGTH,
  generateReferralCode,
  linkTargetOf,
  normalizeReferrer,
  selfReferral,
} from '../../lib/domain/link-rules.ts';
import { CODE_PATTERN } from '../../lib/domain/link-schemas.ts';

function thrown(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('generateReferralCode', () => {
  it('the alphabet is A-Z and 2-9 without I and O', () => {
    expect(CODE_ALPHABET).toHaveLength(32);
    expect(new Set(CODE_ALPHABET).size).toBe(32);
    expect([...CODE_ALPHABET].sort().join('')).toBe('23456789ABCDEFGHJKLMNPQRSTUVWXYZ');
  });

  it('makes 8-character codes of that alphabet, valid as custom codes too', () => {
    expect(GENERATED_CODE_LENGTH).toBe(8);
    const custom = new RegExp(CODE_PATTERN);
    for (let i = 0; i < 2000; i++) {
      const code = generateReferralCode();
      expect(code).toMatch(/^[A-HJ-NP-Z2-9]{8}$/);
      expect(code).toMatch(custom);
    }
  });

  it('uses the whole alphabet in every position and rarely repeats', () => {
    const codes = Array.from({ length: 5000 }, generateReferralCode);
    expect(new Set(codes).size).toBe(codes.length);
    for (let p = 0; p < 8; p++) {
      expect(new Set(codes.map((c) => c[p])).size).toBe(32);
    }
    const seen = new Set(codes.join(''));
    for (const excluded of ['I', 'O', '0', '1']) expect(seen.has(excluded)).toBe(false);
  });
});

describe('normalizeReferrer', () => {
  it.each([
    [undefined, null],
    [null, null],
    ['', null],
  ])('%j means no referrer', (input, expected) => {
    expect(normalizeReferrer(input)).toBe(expected);
  });

  it.each(['alice', ' ', '0', 'user@example.com', 'x'.repeat(256)])('%j is kept as given', (input) => {
    expect(normalizeReferrer(input)).toBe(input);
  });
});

describe('linkTargetOf', () => {
  it('by code or by id', () => {
    expect(linkTargetOf({ referral_code: 'ABC623KC' })).toEqual({ code: 'ABC623KC' });
    expect(linkTargetOf({ referral_link_id: 42 })).toEqual({ id: 42 });
  });

  it('both or neither: 400 validation_failed', () => {
    for (const body of [{}, { referral_code: 'ABC623KC', referral_link_id: 42 }]) {
      const error = thrown(() => linkTargetOf(body));
      expect(error.code).toBe('validation_failed');
      expect(error.status).toBe(400);
    }
  });
});

describe('selfReferral', () => {
  it('is 422 self_referral', () => {
    const error = selfReferral();
    expect(error.status).toBe(422);
    expect(error.code).toBe('self_referral');
  });
});

describe('link order keys', () => {
  it('sort as strings exactly as (created ms, id) sort as numbers', () => {
    const pairs: Array<[number, number]> = [
      [1_767_225_600_000, 9],
      [1_767_225_600_000, 10],
      [1_767_225_600_001, 1],
      [999_999_999_999, 123_456],
      [1_767_225_600_000, Number.MAX_SAFE_INTEGER],
    ];
    const byNumbers = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const byKeys = [...pairs].sort((a, b) => {
      const ka = linkOrder(...a);
      const kb = linkOrder(...b);
      return ka < kb ? -1 : ka > kb ? 1 : 0;
    });
    expect(byKeys).toEqual(byNumbers);
  });
});
