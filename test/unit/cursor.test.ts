import { describe, expect, it } from 'vitest';
import { CAMPAIGN_ORDER, campaignOrder } from '../../lib/db/entities/campaign.ts';
import { linkOrder } from '../../lib/db/entities/link.ts';
import {
  decodeCursor,
  decodeSortKeyCursor,
  encodeCursor,
  encodeSortKeyCursor,
  type ListScope,
  type SortKeyScope,
} from '../../lib/db/table/cursor.ts';
import { ApiError } from '../../lib/domain/errors.ts';

const position = { sortKey: linkOrder(1_767_225_600_000, 12345), code: 'ABC623KC' };
const campaignId = '3f0c2a57-9d7e-4b8f-a1c2-7e5d9b0a4c61';
const scope: ListScope = { tenant: 'acme', campaignId };
const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
/** The tag of `scope`, taken from a genuine cursor, to build otherwise malformed ones. */
const tag = (JSON.parse(Buffer.from(encodeCursor(scope, position), 'base64url').toString()) as string[])[3];

function expectRejected(cursor: string, on: ListScope = scope) {
  let error: unknown;
  try {
    decodeCursor(on, cursor);
  } catch (err) {
    error = err;
  }
  expect(error, `cursor ${JSON.stringify(cursor)} was accepted`).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(400);
  expect((error as ApiError).code).toBe('validation_failed');
  expect((error as ApiError).details).toEqual([expect.objectContaining({ field: 'cursor' })]);
}

describe('list cursors', () => {
  it('round-trip a position on their own list', () => {
    expect(decodeCursor(scope, encodeCursor(scope, position))).toEqual(position);
    const referrer = { ...scope, referrerId: 'alice' };
    expect(decodeCursor(referrer, encodeCursor(referrer, position))).toEqual(position);
  });

  it.each(['abcd', 'a_b-', 'Z'.repeat(32), 'A-_z09'])('round-trip custom code %j', (code) => {
    expect(decodeCursor(scope, encodeCursor(scope, { ...position, code }))).toEqual({ ...position, code });
  });

  it('is URL-safe (base64url, no padding), opaque and small', () => {
    const cursor = encodeCursor({ ...scope, referrerId: 'r'.repeat(256) }, position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain(position.code);
    expect(encodeURIComponent(cursor)).toBe(cursor);
    expect(cursor.length).toBeLessThanOrEqual(100);
  });

  it('a campaign id in another case names the same list', () => {
    const upper = { ...scope, campaignId: campaignId.toUpperCase() };
    expect(decodeCursor(upper, encodeCursor(scope, position))).toEqual(position);
  });

  it('different positions give different cursors', () => {
    const other = encodeCursor(scope, { ...position, sortKey: linkOrder(1_767_225_600_000, 12346) });
    expect(other).not.toBe(encodeCursor(scope, position));
  });

  describe('a cursor of another list is 400 validation_failed (field cursor)', () => {
    const cursorOf = (s: ListScope) => encodeCursor(s, position);
    it.each<[string, ListScope, ListScope]>([
      ['another campaign', scope, { ...scope, campaignId: '3f0c2a57-9d7e-4b8f-a1c2-7e5d9b0a4c62' }],
      ['another tenant', scope, { ...scope, tenant: 'globex' }],
      ['a referrer list on the campaign list', { ...scope, referrerId: 'alice' }, scope],
      ['the campaign list on a referrer list', scope, { ...scope, referrerId: 'alice' }],
      ['another referrer', { ...scope, referrerId: 'alice' }, { ...scope, referrerId: 'bob' }],
      ['a referrer of another case', { ...scope, referrerId: 'alice' }, { ...scope, referrerId: 'Alice' }],
      ['an empty referrer id', { ...scope, referrerId: '' }, scope],
      // Parts that would run into each other if the identity were joined with a separator.
      ['tenant and campaign shifted', { tenant: 'a#C#b', campaignId }, { tenant: 'a', campaignId }],
    ])('%s', (_label, from, on) => {
      expectRejected(cursorOf(from), on);
    });
  });

  it.each([
    ['empty', ''],
    ['not base64 JSON', 'hello'],
    ['random bytes', Buffer.from([0xff, 0x00, 0x13, 0x37, 0x99]).toString('base64url')],
    ['truncated', encodeCursor(scope, position).slice(0, -3)],
    ['trailing garbage', `${encodeCursor(scope, position)}AAAA`],
    ['first character changed', `A${encodeCursor(scope, position).slice(1)}`],
    ['an object', encode({ sortKey: position.sortKey, code: position.code, tag })],
    ['the previous version, without a tag', encode([1, position.sortKey, position.code])],
    ['another version', encode([3, position.sortKey, position.code, tag])],
    ['too short an array', encode([2, position.sortKey, position.code])],
    ['too long an array', encode([2, position.sortKey, position.code, tag, 'x'])],
    ['a number sort key', encode([2, 42, position.code, tag])],
    ['a malformed sort key', encode([2, '123#456', position.code, tag])],
    ['a sort key with a suffix', encode([2, `${position.sortKey}#x`, position.code, tag])],
    ['a sort key with a prefix', encode([2, `x${position.sortKey}`, position.code, tag])],
    ['a key-condition injection', encode([2, `${position.sortKey} OR 1=1`, position.code, tag])],
    ['a too short code', encode([2, position.sortKey, 'abc', tag])],
    ['a too long code', encode([2, position.sortKey, 'a'.repeat(33), tag])],
    ['a code with a space', encode([2, position.sortKey, 'ab cd', tag])],
    ['a code with a #', encode([2, position.sortKey, 'ab#cd', tag])],
    ['a null code', encode([2, position.sortKey, null, tag])],
    ['a null tag', encode([2, position.sortKey, position.code, null])],
    ['a truncated tag', encode([2, position.sortKey, position.code, tag?.slice(0, -1)])],
    ['a forged tag', encode([2, position.sortKey, position.code, 'AAAAAAAAAAAA'])],
    ['null', encode(null)],
    ['a string', encode('cursor')],
    ['a number', encode(1)],
    ['an empty array', encode([])],
  ])('rejects %s as 400 validation_failed', (_label, cursor) => {
    expectRejected(cursor);
  });

  it('accepts exactly the genuine shape built by hand', () => {
    expect(decodeCursor(scope, encode([2, position.sortKey, position.code, tag]))).toEqual(position);
  });
});

describe('campaign list cursors (one sort key, the account as the list)', () => {
  const campaigns: SortKeyScope = { kind: 'campaigns', tenant: 'acme' };
  const order = campaignOrder(1_767_225_600_000, campaignId);
  const decode = (on: SortKeyScope, cursor: string) => decodeSortKeyCursor(on, cursor, CAMPAIGN_ORDER);

  it('round-trip a position of the account’s list', () => {
    expect(decode(campaigns, encodeSortKeyCursor(campaigns, order))).toBe(order);
  });

  it.each<[string, SortKeyScope]>([
    ['another account', { kind: 'campaigns', tenant: 'acme2' }],
    ['the events feed', { kind: 'events', tenant: 'acme', campaignId }],
    ['the delivery log', { kind: 'deliveries', tenant: 'acme', campaignId }],
  ])('a cursor of %s is 400 on cursor here, and this one there', (_label, other) => {
    for (const [from, on] of [
      [other, campaigns],
      [campaigns, other],
    ] as const) {
      const cursor = encodeSortKeyCursor(from, order);
      expect(() => decode(on, cursor)).toThrow(ApiError);
    }
  });

  it('a link list cursor is 400 here, and this one on a link list', () => {
    expect(() => decode(campaigns, encodeCursor(scope, position))).toThrow(ApiError);
    expectRejected(encodeSortKeyCursor(campaigns, order));
  });

  it.each([
    ['a link list position', position.sortKey],
    ['an upper-case id', campaignOrder(1, campaignId).toUpperCase()],
    ['a short time', `1#${campaignId}`],
    ['no id', '001767225600000#'],
  ])('rejects %s in a campaign list cursor', (_label, sortKey) => {
    expect(() => decode(campaigns, encodeSortKeyCursor(campaigns, sortKey))).toThrow(ApiError);
  });
});
