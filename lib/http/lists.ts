import type { Page } from '../db/table/cursor.ts';
import { DEFAULT_LIST_LIMIT } from '../domain/field-rules.ts';
import type { HttpResult } from './responses.ts';

export function limitOf(query: { limit?: string }): number {
  return query.limit === undefined ? DEFAULT_LIST_LIMIT : Number(query.limit);
}

/** The list a page belongs to: its route's path template and the values of its parameters. */
export interface ListRoute {
  /** In API Gateway syntax, e.g. `/api/v1/referral_link/{campaign_id}/{referrer_id}`. */
  path: string;
  params: Record<string, string>;
}

/**
 * A URL of the list, built from the route template and percent-encoded values, never from the
 * request's raw path: a value may hold any character (`>`, `,`, `;`, `"`, `/`), and copied as
 * sent it could end the `<…>` of a Link header and add relations of its own.
 */
export function listUrl(route: ListRoute, query: Record<string, string>): string {
  const path = route.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const value = route.params[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${route.path}`);
    return encodeURIComponent(value);
  });
  const search = Object.entries(query)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  return search ? `${path}?${search}` : path;
}

/**
 * A page as the contract wants it: a plain JSON array, and while more items remain a
 * `Link: <path?limit=&cursor=>; rel="next"` header and `x-next-cursor`.
 */
export function listResult<T>(
  page: Page<T>,
  route: ListRoute,
  limit: number,
  /** The list's own query parameters (a filter), kept in the next page's URL. */
  filters: Record<string, string> = {},
): HttpResult {
  if (!page.nextCursor) return { status: 200, body: page.items };
  const next = listUrl(route, { ...filters, limit: String(limit), cursor: page.nextCursor });
  return {
    status: 200,
    body: page.items,
    headers: { link: `<${next}>; rel="next"`, 'x-next-cursor': page.nextCursor },
  };
}
