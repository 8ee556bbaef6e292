import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../lib/db/cursor.ts';
import { keys } from '../../lib/db/keys.ts';
import { ApiError } from '../../lib/domain/errors.ts';

const position = { sortKey: keys.linkOrder(1_767_225_600_000, 12345), code: 'ABC623KC' };
const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

function expectRejected(cursor: string) {
  let error: unknown;
  try {
    decodeCursor(cursor);
  } catch (err) {
    error = err;
  }
  expect(error, `cursor ${JSON.stringify(cursor)} was accepted`).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(400);
  expect((error as ApiError).code).toBe('validation_failed');
  expect((error as ApiError).details).toEqual([expect.objectContaining({ field: 'cursor' })]);
}

describe('list cursors', () => {
  it('round-trip a position', () => {
    expect(decodeCursor(encodeCursor(position))).toEqual(position);
  });

  it.each(['abcd', 'a_b-', 'Z'.repeat(32), 'A-_z09'])('round-trip custom code %j', (code) => {
    expect(decodeCursor(encodeCursor({ ...position, code }))).toEqual({ ...position, code });
  });

  it('is URL-safe (base64url, no padding) and opaque', () => {
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(cursor).not.toContain(position.code);
    expect(encodeURIComponent(cursor)).toBe(cursor);
  });

  it('different positions give different cursors', () => {
    const other = encodeCursor({ ...position, sortKey: keys.linkOrder(1_767_225_600_000, 12346) });
    expect(other).not.toBe(encodeCursor(position));
  });

  it.each([
    ['empty', ''],
    ['not base64 JSON', 'hello'],
    ['random bytes', Buffer.from([0xff, 0x00, 0x13, 0x37, 0x99]).toString('base64url')],
    ['truncated', encodeCursor(position).slice(0, -3)],
    ['trailing garbage', `${encodeCursor(position)}AAAA`],
    ['first character changed', `A${encodeCursor(position).slice(1)}`],
    ['an object', encode({ sortKey: position.sortKey, code: position.code })],
    ['another version', encode([2, position.sortKey, position.code])],
    ['too short an array', encode([1, position.sortKey])],
    ['too long an array', encode([1, position.sortKey, position.code, 'x'])],
    ['a number sort key', encode([1, 42, position.code])],
    ['a malformed sort key', encode([1, '123#456', position.code])],
    ['a sort key with a suffix', encode([1, `${position.sortKey}#x`, position.code])],
    ['a sort key with a prefix', encode([1, `x${position.sortKey}`, position.code])],
    ['a key-condition injection', encode([1, `${position.sortKey} OR 1=1`, position.code])],
    ['a too short code', encode([1, position.sortKey, 'abc'])],
    ['a too long code', encode([1, position.sortKey, 'a'.repeat(33)])],
    ['a code with a space', encode([1, position.sortKey, 'ab cd'])],
    ['a code with a #', encode([1, position.sortKey, 'ab#cd'])],
    ['a null code', encode([1, position.sortKey, null])],
    ['null', encode(null)],
    ['a string', encode('cursor')],
    ['a number', encode(1)],
    ['an empty array', encode([])],
  ])('rejects %s as 400 validation_failed', (_label, cursor) => {
    expectRejected(cursor);
  });
});
