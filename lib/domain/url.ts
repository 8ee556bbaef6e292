/** URL rules of the contract, as pure functions. */

export const MAX_URL_LENGTH = 2048;

export type UrlCheck = { ok: true; url: string } | { ok: false; message: string };

const schemePattern = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Campaign `url`: trimmed, `https://` put in front when no scheme is given, then it must be an
 * absolute http(s) URL with a host. The stored value keeps what the client wrote (no
 * re-serialisation), so `referral_link` keeps "the rest of the URL as stored".
 */
export function normalizeCampaignUrl(input: string): UrlCheck {
  const trimmed = input.trim();
  if (trimmed.length === 0) return { ok: false, message: 'must not be empty' };
  // `localhost:3000/x` parses as scheme "localhost:"; treat host:port forms as scheme-less.
  const hasScheme = schemePattern.test(trimmed) && !/^[^/:]+:\d+(?:[/?#]|$)/.test(trimmed);
  const candidate = hasScheme ? trimmed : `https://${trimmed}`;
  if (candidate.length > MAX_URL_LENGTH)
    return { ok: false, message: `must be at most ${MAX_URL_LENGTH} characters` };
  return checkHttpUrl(candidate);
}

/** An absolute http(s) URL with a host, no whitespace or control characters. */
export function checkHttpUrl(candidate: string): UrlCheck {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters make a URL invalid
  if (/[\s\u0000-\u001f\u007f]/.test(candidate)) return { ok: false, message: 'must not contain whitespace' };
  let parsed: URL;
  try {
    parsed = new URL(candidate);
  } catch {
    return { ok: false, message: 'must be an absolute http(s) URL' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { ok: false, message: 'must be an http(s) URL' };
  }
  if (!parsed.hostname || !/^[a-z]+:\/\/[^/?#]/i.test(candidate)) {
    return { ok: false, message: 'must have a host' };
  }
  if (parsed.username || parsed.password) return { ok: false, message: 'must not contain credentials' };
  return { ok: true, url: candidate };
}

/**
 * The referral link: the campaign URL with `rfa=<code>` added, the rest kept as stored.
 *   https://example.com        -> https://example.com?rfa=CODE
 *   https://example.com/p?x=1  -> https://example.com/p?x=1&rfa=CODE
 *   https://example.com/#top   -> https://example.com/?rfa=CODE#top
 */
export function buildReferralLink(campaignUrl: string, code: string): string {
  const hashAt = campaignUrl.indexOf('#');
  const beforeHash = hashAt === -1 ? campaignUrl : campaignUrl.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : campaignUrl.slice(hashAt);
  const param = `rfa=${encodeURIComponent(code)}`;
  if (beforeHash.includes('?')) {
    const sep = beforeHash.endsWith('?') || beforeHash.endsWith('&') ? '' : '&';
    return `${beforeHash}${sep}${param}${hash}`;
  }
  return `${beforeHash}?${param}${hash}`;
}

/**
 * A referral link (`buildReferralLink`'s) with `<param>=<value>` added right after its `rfa`: `rfa`
 * is its query's last parameter, before any fragment (a code holds no `#`).
 */
export function withParamAfterRfa(referralLink: string, param: string, value: string): string {
  const hashAt = referralLink.indexOf('#');
  const beforeHash = hashAt === -1 ? referralLink : referralLink.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : referralLink.slice(hashAt);
  return `${beforeHash}&${param}=${encodeURIComponent(value)}${hash}`;
}

/**
 * The URL a referrer shares, the one that records a visit: `{public base}/r/{code}`. Codes are
 * `A-Z a-z 0-9 _ -`, which a path keeps as they are; encoded all the same, so that no stored code
 * could ever change the path.
 */
export function buildShareUrl(publicBase: string, code: string): string {
  return `${publicBase}/r/${encodeURIComponent(code)}`;
}

const ASCII_PRINTABLE = /^[\x20-\x7e]*$/;

/**
 * A stored URL as an HTTP header can carry it (the redirect's `Location`): ASCII only, per the
 * contract. A non-ASCII host goes to punycode, every other non-ASCII character is percent-encoded
 * as UTF-8, and everything already ASCII is kept as written. Total: it never throws, so nothing
 * counted can end without its redirect.
 */
export function toAsciiUrl(url: string): string {
  if (ASCII_PRINTABLE.test(url)) return url;
  const parts = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/?#]*)([\s\S]*)$/.exec(url);
  if (!parts) return percentEncodeNonAscii(url);
  const [, scheme = '', authority = '', rest = ''] = parts;
  let host = authority;
  if (!ASCII_PRINTABLE.test(authority)) {
    try {
      host = new URL(`${scheme}${authority}`).host; // IDNA: the punycode form of the name
    } catch {
      host = percentEncodeNonAscii(authority);
    }
  }
  return `${scheme}${host}${percentEncodeNonAscii(rest)}`;
}

function percentEncodeNonAscii(text: string): string {
  // A lone surrogate has no UTF-8 form; it is written as U+FFFD's.
  return text.replace(/[^\p{ASCII}]/gu, (c) => (c.isWellFormed() ? encodeURIComponent(c) : '%EF%BF%BD'));
}
