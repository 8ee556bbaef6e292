/**
 * `x-request-id` is URL-safe (contract: every response carries it; issue 17: only `A-Z a-z 0-9 _ -`).
 * API Gateway's request ids are base64 and may hold `+`, `/` and `=`; `urlSafeRequestId` is what
 * every response echoes. test/integration/errors.test.ts checks the header over many requests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Event } from '../../lib/http/handler.ts';
import { requestIdOf, urlSafeRequestId } from '../../lib/http/request.ts';

const URL_SAFE = /^[A-Za-z0-9_-]+$/;
/** An API Gateway request id: base64 of random bytes, like `JBq7LgBLoAMEbwA=`. */
const gatewayId = fc.uint8Array({ minLength: 1, maxLength: 32 }).map((bytes) => Buffer.from(bytes));

describe('urlSafeRequestId', () => {
  it('gives only A-Z a-z 0-9 _ -, never empty, for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (raw) => {
        expect(urlSafeRequestId(raw)).toMatch(URL_SAFE);
      }),
      { numRuns: 2_000 },
    );
  });

  it('keeps an id that is URL-safe already (a UUID, a test id) as it is', () => {
    fc.assert(
      fc.property(fc.stringMatching(URL_SAFE), (raw) => {
        expect(urlSafeRequestId(raw)).toBe(raw);
      }),
    );
    expect(urlSafeRequestId('3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a')).toBe(
      '3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a',
    );
  });

  it('turns an API Gateway id into base64url without padding: the same bytes, one-to-one', () => {
    fc.assert(
      fc.property(gatewayId, gatewayId, (a, b) => {
        const [safeA, safeB] = [a, b].map((bytes) => urlSafeRequestId(bytes.toString('base64')));
        expect(safeA).toMatch(URL_SAFE);
        expect(safeA).toBe(a.toString('base64url'));
        // Reversible, so the access log's `requestId` is found from the header.
        expect(Buffer.from(safeA!, 'base64url').equals(a)).toBe(true);
        expect(safeA === safeB).toBe(a.equals(b));
      }),
      { numRuns: 2_000 },
    );
    expect(urlSafeRequestId('JBq7LgBLoAMEbwA=')).toBe('JBq7LgBLoAMEbwA');
    expect(urlSafeRequestId('a+b/cd==')).toBe('a-b_cd');
  });

  it('is what requestIdOf gives, for the event of any request', () => {
    fc.assert(
      fc.property(gatewayId, (bytes) => {
        const raw = bytes.toString('base64');
        const event = { requestContext: { requestId: raw } } as unknown as Event;
        expect(requestIdOf(event)).toBe(urlSafeRequestId(raw));
      }),
    );
    expect(requestIdOf({ requestContext: {} } as unknown as Event)).toBe('unknown');
  });
});
