/**
 * Click ids (`lib/domain/click-ids.ts`): what the redirect puts in `rfclid` names exactly one
 * visit, and nothing else decodes; where the redirect puts it (`withParamAfterRfa`); when a click
 * is older than its window.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ClickId,
  clickExpired,
  decodeClickId,
  encodeClickId,
  MAX_CLICK_ID_LENGTH,
  newClickSecret,
  sameSecret,
} from '../../lib/domain/click-ids.ts';
import { buildReferralLink, toAsciiUrl, withParamAfterRfa } from '../../lib/domain/url.ts';

const codeChar = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-');
const click: fc.Arbitrary<ClickId> = fc.record({
  campaignId: fc.uuid({ version: 4 }),
  visitId: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  code: fc.string({ unit: codeChar, minLength: 4, maxLength: 32 }),
  secret: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url')),
});

describe('click ids', () => {
  it('decode to what they were made of, URL-safe and within the longest length', () => {
    fc.assert(
      fc.property(click, (c) => {
        const id = encodeClickId(c);
        expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(id.length).toBeLessThanOrEqual(MAX_CLICK_ID_LENGTH);
        expect(decodeClickId(id)).toEqual(c);
      }),
    );
  });

  it('carry a 128-bit secret: a new one each visit', () => {
    const secrets = new Set(Array.from({ length: 1000 }, newClickSecret));
    expect(secrets.size).toBe(1000);
    for (const s of secrets) expect(Buffer.from(s, 'base64url')).toHaveLength(16);
  });

  it('truncated, extended or with any one character changed decode to another click or none', () => {
    fc.assert(
      fc.property(click, fc.nat(), fc.constantFrom(...'AQgw_-9z'), (c, at, replacement) => {
        const id = encodeClickId(c);
        const i = at % id.length;
        const changed = `${id.slice(0, i)}${replacement}${id.slice(i + 1)}`;
        for (const other of [id.slice(0, i), `${id}A`, changed]) {
          if (other === id) continue;
          const decoded = decodeClickId(other);
          if (decoded) expect(decoded).not.toEqual(c);
        }
      }),
    );
  });

  it('only the canonical base64url spelling decodes', () => {
    const id = encodeClickId({
      campaignId: randomUUID(),
      visitId: 42,
      code: 'ABCD',
      secret: newClickSecret(),
    });
    expect(decodeClickId(id)).toBeDefined();
    // Base64 (with + / =) and padding are other spellings of the same bytes.
    const padded = `${Buffer.from(id, 'base64url').toString('base64')}`;
    expect(decodeClickId(padded)).toBeUndefined();
    expect(decodeClickId(`${id}=`)).toBeUndefined();
  });

  it('anything else decodes to nothing (never throws)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        const decoded = decodeClickId(s);
        if (decoded) expect(encodeClickId(decoded)).toBe(s);
      }),
    );
    for (const s of ['', 'A', 'AQ', 'x'.repeat(MAX_CLICK_ID_LENGTH + 1), 'ü', 'a b', 'AAAA']) {
      expect(decodeClickId(s)).toBeUndefined();
    }
  });

  it('compare secrets in constant time, only 16-byte ones', () => {
    const s = newClickSecret();
    expect(sameSecret(s, s)).toBe(true);
    expect(sameSecret(s, newClickSecret())).toBe(false);
    expect(sameSecret(undefined, s)).toBe(false);
    expect(sameSecret('', '')).toBe(false);
    expect(sameSecret('AAAA', 'AAAA')).toBe(false);
  });

  it('expire once older than the window, not at it', () => {
    const day = 24 * 60 * 60 * 1000;
    expect(clickExpired(0, 1, day)).toBe(false);
    expect(clickExpired(0, 1, day + 1)).toBe(true);
    expect(clickExpired(0, 90, 89 * day)).toBe(false);
  });
});

describe('the click id in the Location', () => {
  it.each([
    ['https://example.com', 'https://example.com?rfa=CODE&rfclid=ID'],
    ['https://example.com/p?x=1', 'https://example.com/p?x=1&rfa=CODE&rfclid=ID'],
    ['https://example.com/#top', 'https://example.com/?rfa=CODE&rfclid=ID#top'],
    ['https://example.com/p?#a#b', 'https://example.com/p?rfa=CODE&rfclid=ID#a#b'],
  ])('%s: right after rfa, before the fragment', (url, expected) => {
    expect(withParamAfterRfa(buildReferralLink(url, 'CODE'), 'rfclid', 'ID')).toBe(expected);
  });

  it('stays ASCII with a non-ASCII campaign URL', () => {
    const link = buildReferralLink('https://bücher.example/straße?q=ü#café', 'CODE');
    expect(toAsciiUrl(withParamAfterRfa(link, 'rfclid', 'A-b_9'))).toBe(
      'https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC&rfa=CODE&rfclid=A-b_9#caf%C3%A9',
    );
  });
});
