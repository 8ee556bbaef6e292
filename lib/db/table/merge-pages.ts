import type { QueriedPage } from './query.ts';

/**
 * One page of several lists' pages read from the same position, newest first: the `limit` newest
 * items of them all. A list whose page stopped before its end (at `limit`, or at 1 MB) may hold
 * unread items older than its last one read, so nothing older than that is shown yet (the next
 * page, from the last item shown, reads on): every item is reached once.
 */
export function mergeNewestFirst(
  pages: readonly QueriedPage[],
  limit: number,
  orderOf: (item: Record<string, unknown>) => string,
): { items: Record<string, unknown>[]; more: boolean } {
  const cut = pages.reduce<string | undefined>((newest, page) => {
    if (!page.more || !page.last) return newest;
    const lastRead = orderOf(page.last);
    return newest === undefined || lastRead > newest ? lastRead : newest;
  }, undefined);
  // An item that changed partition between two of the reads (a reward approved while its state's
  // pages were read side by side, or an index copy not yet moved) is in two pages: shown once. A
  // batch read of both copies' keys would be refused (duplicate keys), a 500.
  const seen = new Set<string>();
  const merged = pages
    .flatMap((page) => page.items)
    .filter((item) => !seen.has(orderOf(item)) && seen.add(orderOf(item)))
    .sort((a, b) => (orderOf(a) < orderOf(b) ? 1 : -1));
  const items = merged.filter((item) => cut === undefined || orderOf(item) >= cut).slice(0, limit);
  return { items, more: items.length < merged.length || pages.some((page) => page.more) };
}
