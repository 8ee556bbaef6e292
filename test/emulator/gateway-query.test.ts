import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../lib/local/gateway.ts';

describe('parseQuery (payload 2.0 queryStringParameters)', () => {
  it('decodes names and values', () => {
    expect(parseQuery('id=abc&referral_code=A%20B&x%5B%5D=%E2%9C%93')).toEqual({
      id: 'abc',
      referral_code: 'A B',
      'x[]': '✓',
    });
  });

  it('joins repeated names with commas, in order', () => {
    expect(parseQuery('id=a&id=b')).toEqual({ id: 'a,b' });
    expect(parseQuery('id=a&x=1&id=b&id=c')).toEqual({ id: 'a,b,c', x: '1' });
    expect(parseQuery('id=&id=b')).toEqual({ id: ',b' });
  });

  it('keeps malformed percent-encoding as written', () => {
    expect(parseQuery('id=%E0%A4%A')).toEqual({ id: '%E0%A4%A' });
    expect(parseQuery('id=%')).toEqual({ id: '%' });
    expect(parseQuery('%ZZ=1')).toEqual({ '%ZZ': '1' });
  });

  it('handles names without values, empty parts and extra equals signs', () => {
    expect(parseQuery('flag')).toEqual({ flag: '' });
    expect(parseQuery('a=1&&b=2&')).toEqual({ a: '1', b: '2' });
    expect(parseQuery('a=b=c')).toEqual({ a: 'b=c' });
    expect(parseQuery('=v')).toEqual({ '': 'v' });
    expect(parseQuery('')).toEqual({});
  });

  it('decodes %00 and %26 without splitting on them', () => {
    expect(parseQuery('id=a%26b%3Dc%00')).toEqual({ id: 'a&b=c\u0000' });
  });

  it('never lets a query name reach the prototype', () => {
    const parsed = parseQuery('__proto__=x&constructor=y&toString=z');
    expect(Object.keys(parsed).sort()).toEqual(['__proto__', 'constructor', 'toString'].sort());
    expect(parsed.constructor).toBe('y');
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('copes with a very long query string', () => {
    const long = 'v'.repeat(100_000);
    expect(parseQuery(`id=${long}&id=${long}`).id).toHaveLength(200_001);
  });
});
