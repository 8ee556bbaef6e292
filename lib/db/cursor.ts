import { validationError } from '../domain/errors.ts';

/**
 * List cursors: opaque to clients, base64url of the position of the last item returned. Decoding
 * validates the shape strictly, so a tampered or foreign cursor is a 400, never a 5xx, and the
 * Query's partition key always comes from the request, never from the cursor: a cursor cannot
 * reach into another list.
 */
export interface Position {
  sortKey: string;
  code: string;
}

const SORT_KEY = /^\d{15}#\d{16}$/;
const CODE = /^[A-Za-z0-9_-]{4,32}$/;

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([1, position.sortKey, position.code]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): Position {
  const invalid = () =>
    validationError([{ field: 'cursor', message: 'is not a valid cursor for this list' }]);
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== 1) throw invalid();
  const [, sortKey, code] = parsed as [number, unknown, unknown];
  if (
    typeof sortKey !== 'string' ||
    typeof code !== 'string' ||
    !SORT_KEY.test(sortKey) ||
    !CODE.test(code)
  ) {
    throw invalid();
  }
  return { sortKey, code };
}
