import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { config } from '../../lib/config.ts';
import { CODE_PATTERN } from '../../lib/domain/field-rules.ts';
import {
  buildReferralLink,
  buildShareUrl,
  checkHttpUrl,
  MAX_URL_LENGTH,
  normalizeCampaignUrl,
  toAsciiUrl,
} from '../../lib/domain/url.ts';

const ok = (url: string) => ({ ok: true, url });

describe('normalizeCampaignUrl', () => {
  it.each([
    ['example.com', 'https://example.com'],
    ['www.example.com/path?x=1#frag', 'https://www.example.com/path?x=1#frag'],
    ['  example.com  ', 'https://example.com'],
    ['\texample.com/p\n', 'https://example.com/p'],
    ['https://example.com', 'https://example.com'],
    ['http://example.com/a', 'http://example.com/a'],
    ['HTTPS://Example.com/Path', 'HTTPS://Example.com/Path'],
  ])('%j is stored as %j', (input, stored) => {
    expect(normalizeCampaignUrl(input)).toEqual(ok(stored));
  });

  it.each([
    ['localhost:3000', 'https://localhost:3000'],
    ['localhost:3000/x', 'https://localhost:3000/x'],
    ['example.com:8080/p?q=1', 'https://example.com:8080/p?q=1'],
    ['example.com:443#top', 'https://example.com:443#top'],
    ['127.0.0.1:8080', 'https://127.0.0.1:8080'],
  ])('host:port form %j is scheme-less and gets https://', (input, stored) => {
    expect(normalizeCampaignUrl(input)).toEqual(ok(stored));
  });

  it('keeps the URL exactly as written (no re-serialisation)', () => {
    // new URL() would add a trailing slash and lower-case the host; the contract keeps it "as stored".
    expect(normalizeCampaignUrl('Example.COM')).toEqual(ok('https://Example.COM'));
    expect(normalizeCampaignUrl('https://example.com/a%20b?x=%E2%9C%93')).toEqual(
      ok('https://example.com/a%20b?x=%E2%9C%93'),
    );
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'ftp://example.com/file',
    'mailto:someone@example.com',
    'data:text/html,<b>x</b>',
    'file:///etc/passwd',
    'ws://example.com',
  ])('rejects the non-http(s) scheme of %j', (input) => {
    const result = normalizeCampaignUrl(input);
    expect(result.ok).toBe(false);
  });

  it.each([
    ['', 'empty'],
    ['   ', 'blank'],
    ['https://', 'no host'],
    ['https:example.com', 'no // authority'],
    ['//example.com', 'protocol-relative'],
    ['https://exa mple.com', 'inner whitespace'],
    ['https://example.com/\u0000', 'NUL'],
    ['https://user:pass@example.com', 'credentials'],
    ['http://[::1', 'unparseable'],
  ])('rejects %j (%s)', (input) => {
    expect(normalizeCampaignUrl(input).ok).toBe(false);
  });

  it('accepts exactly 2048 characters and rejects 2049 (after https:// is added)', () => {
    const withScheme = `https://example.com/${'a'.repeat(MAX_URL_LENGTH - 'https://example.com/'.length)}`;
    expect(withScheme).toHaveLength(2048);
    expect(normalizeCampaignUrl(withScheme)).toEqual(ok(withScheme));
    expect(normalizeCampaignUrl(`${withScheme}a`)).toMatchObject({ ok: false });

    const schemeless = withScheme.slice('https://'.length);
    expect(normalizeCampaignUrl(schemeless)).toEqual(ok(withScheme));
    expect(normalizeCampaignUrl(`${schemeless}a`)).toMatchObject({
      ok: false,
      message: 'must be at most 2048 characters',
    });
  });

  it('trims before measuring the length', () => {
    const url = `https://example.com/${'a'.repeat(2000)}`;
    expect(normalizeCampaignUrl(`   ${url}${' '.repeat(100)}`)).toEqual(ok(url));
  });

  it('rejects a 100k-character URL without throwing', () => {
    expect(normalizeCampaignUrl(`example.com/${'x'.repeat(100_000)}`).ok).toBe(false);
  });
});

describe('checkHttpUrl', () => {
  it('accepts absolute http and https URLs with a host', () => {
    expect(checkHttpUrl('http://10.0.0.1:8080/hook')).toEqual(ok('http://10.0.0.1:8080/hook'));
    expect(checkHttpUrl('https://hooks.example.com')).toEqual(ok('https://hooks.example.com'));
  });

  it('rejects relative, scheme-less and non-http URLs', () => {
    for (const input of ['/hook', 'hooks.example.com', 'ftp://x.example', 'javascript:void(0)']) {
      expect(checkHttpUrl(input).ok, input).toBe(false);
    }
  });
});

describe('buildReferralLink (contract examples)', () => {
  it.each([
    ['https://example.com', 'https://example.com?rfa=ABC623KC'],
    ['https://example.com/p?x=1', 'https://example.com/p?x=1&rfa=ABC623KC'],
    ['https://example.com/#top', 'https://example.com/?rfa=ABC623KC#top'],
  ])('%s -> %s', (campaignUrl, link) => {
    expect(buildReferralLink(campaignUrl, 'ABC623KC')).toBe(link);
  });

  it('keeps the rest of the URL as stored', () => {
    expect(buildReferralLink('https://example.com/p?', 'CODE')).toBe('https://example.com/p?rfa=CODE');
    expect(buildReferralLink('https://example.com/p?x=1&', 'CODE')).toBe(
      'https://example.com/p?x=1&rfa=CODE',
    );
    expect(buildReferralLink('https://example.com/p?x=1#a?b', 'CODE')).toBe(
      'https://example.com/p?x=1&rfa=CODE#a?b',
    );
    expect(buildReferralLink('https://Example.com:8443/A%20B', 'CODE')).toBe(
      'https://Example.com:8443/A%20B?rfa=CODE',
    );
  });

  it('percent-encodes nothing in codes of the allowed alphabet', () => {
    expect(buildReferralLink('https://example.com', 'a-B_9z')).toBe('https://example.com?rfa=a-B_9z');
  });
});

describe('toAsciiUrl: the redirect Location is ASCII', () => {
  it.each([
    [
      'an ASCII URL, kept as written',
      'https://example.com/p?x=1&rfa=AB#t',
      'https://example.com/p?x=1&rfa=AB#t',
    ],
    ['a Unicode path', 'https://example.com/日本?rfa=AB', 'https://example.com/%E6%97%A5%E6%9C%AC?rfa=AB'],
    ['an IDN host', 'https://bücher.example/?rfa=AB', 'https://xn--bcher-kva.example/?rfa=AB'],
    ['an IDN host with a port', 'http://bücher.example:8080/x', 'http://xn--bcher-kva.example:8080/x'],
    [
      'Latin-1 characters',
      'https://example.com/caf\u00e9?q=\u00ff',
      'https://example.com/caf%C3%A9?q=%C3%BF',
    ],
    [
      'an emoji in the query and fragment',
      'https://example.com/?e=😀#😀',
      'https://example.com/?e=%F0%9F%98%80#%F0%9F%98%80',
    ],
    ['a C1 control character', 'https://example.com/a\u0085b', 'https://example.com/a%C2%85b'],
    [
      'percent escapes already there, kept',
      'https://example.com/%E6%97%A5/日',
      'https://example.com/%E6%97%A5/%E6%97%A5',
    ],
  ])('%s', (_label, url, ascii) => {
    expect(toAsciiUrl(url)).toBe(ascii);
  });

  it('is total and ASCII for any string, and decodes back to the same URL', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.webUrl(), (text, base) => {
        const url = `${base}/${text}`;
        const ascii = toAsciiUrl(url);
        expect(ascii).toMatch(/^\p{ASCII}*$/u);
        expect(new URL(ascii).href).toBe(new URL(url).href);
      }),
    );
  });
});

describe('share_url', () => {
  const saved = process.env.PUBLIC_BASE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.PUBLIC_BASE_URL;
    else process.env.PUBLIC_BASE_URL = saved;
  });

  it('is {public base}/r/{code}, every code of the contract left as it is (nothing to percent-encode)', () => {
    expect(buildShareUrl('https://go.example.com', 'ABC623KC')).toBe('https://go.example.com/r/ABC623KC');
    fc.assert(
      fc.property(fc.stringMatching(new RegExp(CODE_PATTERN)), (code) => {
        const url = buildShareUrl('http://127.0.0.1:3000', code);
        expect(url).toBe(`http://127.0.0.1:3000/r/${code}`);
        expect(new URL(url).pathname).toBe(`/r/${code}`);
      }),
    );
    // Were a stored code ever anything else, it could not leave its path segment.
    expect(buildShareUrl('https://go.example.com', 'a/b?c#d')).toBe('https://go.example.com/r/a%2Fb%3Fc%23d');
  });

  it('takes its base from PUBLIC_BASE_URL, without a trailing slash; a missing or malformed one fails loudly', () => {
    process.env.PUBLIC_BASE_URL = 'https://go.example.com/';
    expect(config.publicBaseUrl).toBe('https://go.example.com');
    process.env.PUBLIC_BASE_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com';
    expect(config.publicBaseUrl).toBe('https://abc123.execute-api.eu-west-1.amazonaws.com');
    delete process.env.PUBLIC_BASE_URL;
    expect(() => config.publicBaseUrl).toThrow(/PUBLIC_BASE_URL/);
    for (const bad of [
      'go.example.com',
      'ftp://go.example.com',
      'https://go.example.com/?x=1',
      'https://go.example.com/#x',
    ]) {
      process.env.PUBLIC_BASE_URL = bad;
      expect(() => config.publicBaseUrl, bad).toThrow(/PUBLIC_BASE_URL must be/);
    }
  });
});
