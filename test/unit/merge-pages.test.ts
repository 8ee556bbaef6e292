import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeNewestFirst } from '../../lib/db/table/merge-pages.ts';
import type { QueriedPage } from '../../lib/db/table/query.ts';

const order = (item: Record<string, unknown>) => String(item.k);

/**
 * Lists (each sorted newest first) read page after page the way the reward list reads its five
 * states' partitions: every list from the same position, each page cut at `limit` + 1 or earlier
 * (DynamoDB's 1 MB), then merged. Every item must come once, newest first.
 */
function walk(lists: string[][], limit: number, cutAt: (list: number, page: number) => number): string[] {
  const seen: string[] = [];
  let after: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const pages: QueriedPage[] = lists.map((list, i) => {
      const rest = list.filter((k) => after === undefined || k < after);
      // A page stops at limit + 1 items, or earlier when DynamoDB's 1 MB ran out (`cut`).
      const read = rest.slice(0, Math.min(limit + 1, Math.max(1, cutAt(i, page))));
      const stoppedEarly = read.length < Math.min(limit + 1, rest.length);
      const items = read.slice(0, limit).map((k) => ({ k }));
      return { items, last: items.at(-1), more: read.length > limit || stoppedEarly };
    });
    const merged = mergeNewestFirst(pages, limit, order);
    expect(merged.items.length).toBeLessThanOrEqual(limit);
    seen.push(...merged.items.map(order));
    if (!merged.more) return seen;
    after = order(merged.items.at(-1) as Record<string, unknown>);
  }
  throw new Error('did not end');
}

describe('mergeNewestFirst', () => {
  it('reaches every item of every list once, newest first, whatever the limit and the 1 MB cuts', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 9999 }), { maxLength: 60 }),
        fc.array(fc.nat(4), { minLength: 60, maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 50, maxLength: 50 }),
        (keys, listOf, limit, cuts) => {
          const lists: string[][] = [[], [], [], [], []];
          for (const [i, key] of keys.entries()) lists[listOf[i] ?? 0]?.push(String(key).padStart(4, '0'));
          for (const list of lists) list.sort().reverse();
          const all = lists.flat().sort().reverse();
          const seen = walk(lists, limit, (list, page) => cuts[(list * 7 + page) % cuts.length] ?? 1);
          expect(seen).toEqual(all);
        },
      ),
    );
  });

  it('shows an item read in two lists at once (it changed state between the reads) once', () => {
    const page = (keys: string[]): QueriedPage => {
      const items = keys.map((k) => ({ k }));
      return { items, last: items.at(-1), more: false };
    };
    // "50" was pending when the pending list was read, approved when the approved list was.
    const merged = mergeNewestFirst([page(['60', '50', '40']), page(['55', '50'])], 10, order);
    expect(merged.items.map(order)).toEqual(['60', '55', '50', '40']);
    expect(merged.more).toBe(false);
  });

  it('shows nothing older than the last item of a list that stopped early', () => {
    const page = (keys: string[], more: boolean): QueriedPage => {
      const items = keys.map((k) => ({ k }));
      return { items, last: items.at(-1), more };
    };
    // The second list stopped at 1 MB after "80": items below 80 of it may be unread.
    const merged = mergeNewestFirst([page(['90', '70', '60'], false), page(['85', '80'], true)], 10, order);
    expect(merged.items.map(order)).toEqual(['90', '85', '80']);
    expect(merged.more).toBe(true);
  });
});
