import type { Page } from '../db/links.ts';
import type { HttpResult } from './responses.ts';

export const DEFAULT_LIMIT = 100;

export function limitOf(query: { limit?: string }): number {
  return query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
}

/**
 * A page as the contract wants it: a plain JSON array, and while more items remain a
 * `Link: <path?limit=&cursor=>; rel="next"` header and `x-next-cursor`.
 */
export function listResult<T>(page: Page<T>, rawPath: string, limit: number): HttpResult {
  if (!page.nextCursor) return { status: 200, body: page.items };
  const next = `${rawPath}?limit=${limit}&cursor=${page.nextCursor}`;
  return {
    status: 200,
    body: page.items,
    headers: { link: `<${next}>; rel="next"`, 'x-next-cursor': page.nextCursor },
  };
}
