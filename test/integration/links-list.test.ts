/**
 * Endpoints 3 and 4: a campaign's links and a referrer's links, oldest first, paged with opaque
 * cursors (`Link: <...>; rel="next"` and `x-next-cursor` while more items remain).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newLinkItem } from '../../lib/db/entities/link.ts';
import { ReferralLinkList } from '../../lib/domain/link-schemas.ts';
import { eventually } from '../../tools/wait.ts';
import { type ApiResponse, api, baseUrl, TENANT_A, TENANT_B } from '../support/api.ts';
import { errorOf, expectError, expectShape } from '../support/assertions.ts';
import {
  createCampaign,
  createLink,
  createLinkAction,
  createReferredUser,
  fetchLink,
  type LinkBody,
} from '../support/records.ts';
import { putItems } from '../support/table.ts';

const campaignList = (id: string, query = '') => `/api/v1/campaign_referral_links/${id}${query}`;
const referrerList = (id: string, referrer: string, query = '') =>
  `/api/v1/referral_link/${id}/${encodeURIComponent(referrer)}${query}`;

/** The `Link: <url>; rel="next"` target of a page, or undefined. */
function nextLinkOf(res: ApiResponse): string | undefined {
  const header = res.headers.get('link');
  if (!header) return undefined;
  const m = /^<([^>]+)>;\s*rel="next"$/.exec(header);
  if (!m?.[1]) throw new Error(`malformed Link header: ${header}`);
  return m[1];
}

/** A request path for a Link target, whether absolute or a path. */
function pathOf(target: string): string {
  return target.startsWith('http') ? target.slice(new URL(target).origin.length) : target;
}

/** Check a page: 200, a plain array of links, and the two paging headers present together. */
function expectPage(res: ApiResponse<LinkBody[]>): { items: LinkBody[]; next?: string; cursor?: string } {
  expect(res.status, res.text).toBe(200);
  expect(Array.isArray(res.body)).toBe(true);
  expectShape(ReferralLinkList, res.body);
  const next = nextLinkOf(res);
  const cursor = res.headers.get('x-next-cursor') ?? undefined;
  expect(next === undefined).toBe(cursor === undefined);
  if (next && cursor) {
    // The Link target carries the same cursor, URL-safe as it is.
    expect(new URL(next, baseUrl()).searchParams.get('cursor')).toBe(cursor);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  }
  return { items: res.body, next, cursor };
}

async function allPages(first: string): Promise<LinkBody[][]> {
  const pages: LinkBody[][] = [];
  let path: string | undefined = first;
  while (path) {
    const page = expectPage(await api<LinkBody[]>('GET', path));
    pages.push(page.items);
    path = page.next ? pathOf(page.next) : undefined;
    if (pages.length > 100) throw new Error('paging does not end');
  }
  return pages;
}

describe('GET /api/v1/campaign_referral_links/{campaign_id} (endpoint 3) with 250 links', () => {
  let campaignId: string;
  /** Batches of ten links, each batch created after the previous one was answered. */
  const batches: LinkBody[][] = [];

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'paging' })).id;
    for (let b = 0; b < 25; b++) {
      batches.push(
        await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            createLink(campaignId, { referrer_id: (b * 10 + i) % 2 === 0 ? 'even' : null }),
          ),
        ),
      );
    }
  }, 120_000);

  /** Position of every created link's batch: a list in creation order never goes back a batch. */
  const batchOf = () => new Map(batches.flatMap((batch, b) => batch.map((l) => [l.id, b] as const)));

  it('limit=100 gives 100/100/50 with next headers on the first two pages only, in creation order', async () => {
    const first = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=100')));
    expect(first.items).toHaveLength(100);
    expect(first.next).toBeDefined();
    // Follow the Link header for the second page, x-next-cursor for the third.
    const second = expectPage(await api<LinkBody[]>('GET', pathOf(first.next!)));
    expect(second.items).toHaveLength(100);
    expect(second.cursor).toBeDefined();
    const third = expectPage(
      await api<LinkBody[]>('GET', campaignList(campaignId, `?limit=100&cursor=${second.cursor}`)),
    );
    expect(third.items).toHaveLength(50);
    expect(third.next).toBeUndefined();
    expect(third.cursor).toBeUndefined();
    expect(first.cursor).not.toBe(second.cursor);

    const all = [...first.items, ...second.items, ...third.items];
    const ids = all.map((l) => l.id);
    expect(new Set(ids).size).toBe(250);
    expect(new Set(ids)).toEqual(new Set(batches.flat().map((l) => l.id)));
    const batch = batchOf();
    const order = ids.map((id) => batch.get(id)!);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // Each listed link is exactly the link that was created (counters still zero).
    const created = new Map(batches.flat().map((l) => [l.id, l]));
    for (const link of all) expect(link).toEqual(created.get(link.id));
  });

  it('default limit is 100', async () => {
    const page = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId)));
    expect(page.items).toHaveLength(100);
    expect(page.next).toBeDefined();
    expect(new URL(page.next!, baseUrl()).pathname).toBe(campaignList(campaignId));
  });

  it('limit=1000 returns everything on one page, without next headers', async () => {
    const page = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1000')));
    expect(page.items).toHaveLength(250);
    expect(page.next).toBeUndefined();
  });

  it('limit=250 (exactly the count) ends without next headers; limit=249 has one more page of 1', async () => {
    const exact = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=250')));
    expect(exact.items).toHaveLength(250);
    expect(exact.next).toBeUndefined();
    const pages = await allPages(campaignList(campaignId, '?limit=249'));
    expect(pages.map((p) => p.length)).toEqual([249, 1]);
  });

  it('limit=7 pages agree with one big page', async () => {
    const big = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1000'))).items;
    const pages = await allPages(campaignList(campaignId, '?limit=7'));
    expect(pages.flat().map((l) => l.id)).toEqual(big.map((l) => l.id));
    expect(pages.slice(0, -1).every((p) => p.length === 7)).toBe(true);
  });

  it('the referrer list pages through its 125 links in the same order', async () => {
    const pages = await allPages(referrerList(campaignId, 'even', '?limit=50'));
    expect(pages.map((p) => p.length)).toEqual([50, 50, 25]);
    const listed = pages.flat();
    expect(listed.every((l) => l.referrer_id === 'even')).toBe(true);
    const all = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1000'))).items;
    expect(listed.map((l) => l.id)).toEqual(all.filter((l) => l.referrer_id === 'even').map((l) => l.id));
  });
});

describe('large items: the 1 MB a Query reads ends pages early, and every link stays reachable', () => {
  const count = 600;
  let campaignId: string;
  let ids: number[];

  beforeAll(async () => {
    // A 2,000-character URL: every link item carries it, so about 450 links fill the 1 MB a
    // Query reads, well before limit=1000.
    const campaign = await createCampaign({
      url: `https://example.com/${'long-path/'.repeat(198)}`,
      name: 'large items',
    });
    campaignId = campaign.id;
    // Written straight into the table in the exact shape the API writes, one millisecond apart.
    const created = Date.now() - count;
    const firstId = 7_000_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;
    const items = Array.from({ length: count }, (_, i) =>
      newLinkItem({
        tenant: TENANT_A.tenant,
        campaignId,
        campaignUrl: campaign.url,
        id: firstId + i,
        code: `BIG-${campaignId.slice(0, 8)}-${i}`,
        referrerId: 'long',
        now: new Date(created + i),
      }),
    );
    await putItems(items);
    ids = items.map((i) => i.id);
  }, 60_000);

  it.each([
    ['campaign list', () => campaignList(campaignId, '?limit=1000')],
    ['referrer list', () => referrerList(campaignId, 'long', '?limit=1000')],
  ])('the %s: following cursors yields every link once, in order', async (_label, first) => {
    const pages = await allPages(first());
    expect(pages[0]!.length).toBeGreaterThan(0);
    expect(pages[0]!.length, 'the first page was not cut by the 1 MB limit').toBeLessThan(count);
    expect(pages.flat().map((l) => l.id)).toEqual(ids);
  });
});

describe('list rules', () => {
  let campaignId: string;
  let links: LinkBody[];

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'list rules' })).id;
    links = [];
    // One at a time, so creation order is known exactly.
    for (const referrer of ['alice', 'bob', 'alice', null, 'alice', 'bob', 'Jane Doe', 'user@example.com']) {
      links.push(await createLink(campaignId, { referrer_id: referrer }));
    }
  });

  it('a campaign list is a plain array, oldest first, with no next headers when all fit', async () => {
    const res = await api<LinkBody[]>('GET', campaignList(campaignId));
    const page = expectPage(res);
    expect(page.items).toEqual(links);
    expect(res.headers.get('link')).toBeNull();
    expect(res.headers.get('x-next-cursor')).toBeNull();
  });

  it("a referrer list has only that referrer's links, oldest first", async () => {
    const alice = expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, 'alice')));
    expect(alice.items).toEqual(links.filter((l) => l.referrer_id === 'alice'));
    const bob = expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, 'bob')));
    expect(bob.items).toEqual(links.filter((l) => l.referrer_id === 'bob'));
    for (const referrer of ['Jane Doe', 'user@example.com']) {
      const page = expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, referrer)));
      expect(page.items).toEqual(links.filter((l) => l.referrer_id === referrer));
    }
  });

  it('referrer ids are exact: another case or a prefix is another referrer', async () => {
    expect(expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, 'Alice'))).items).toEqual([]);
    expect(expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, 'ali'))).items).toEqual([]);
  });

  it('a referrer list pages with its own cursor', async () => {
    const pages = await allPages(referrerList(campaignId, 'alice', '?limit=2'));
    expect(pages.map((p) => p.map((l) => l.id))).toEqual([[links[0]!.id, links[2]!.id], [links[4]!.id]]);
  });

  it('an unknown referrer is an empty array (200)', async () => {
    const res = await api<LinkBody[]>('GET', referrerList(campaignId, 'nobody'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.text).toBe('[]');
  });

  it('a campaign without links is an empty array (200)', async () => {
    const empty = await createCampaign({ name: 'empty' });
    const res = await api<LinkBody[]>('GET', campaignList(empty.id));
    expect(res.status).toBe(200);
    expect(res.text).toBe('[]');
  });

  it('unknown campaign: 404 campaign_not_found on both lists', async () => {
    expectError(await api('GET', campaignList(randomUUID())), 404, 'campaign_not_found');
    expectError(await api('GET', referrerList(randomUUID(), 'alice')), 404, 'campaign_not_found');
  });

  it('a malformed campaign id: 400 validation_failed', async () => {
    expectError(await api('GET', campaignList('not-a-uuid')), 400, 'validation_failed');
    expectError(await api('GET', referrerList('not-a-uuid', 'alice')), 400, 'validation_failed');
  });

  it("another tenant's campaign: 404 campaign_not_found on both lists", async () => {
    expectError(await api('GET', campaignList(campaignId), { key: TENANT_B.key }), 404, 'campaign_not_found');
    expectError(
      await api('GET', referrerList(campaignId, 'alice'), { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
  });

  it.each(['0', '1001', 'abc', '-1', '1.5', '10abc'])(
    'limit=%j: 400 validation_failed on both lists',
    async (limit) => {
      expectError(await api('GET', campaignList(campaignId, `?limit=${limit}`)), 400, 'validation_failed');
      expectError(
        await api('GET', referrerList(campaignId, 'alice', `?limit=${limit}`)),
        400,
        'validation_failed',
      );
    },
  );

  it('limit=1 and limit=1000 are accepted', async () => {
    expect(expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1'))).items).toEqual([
      links[0],
    ]);
    expect(expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1000'))).items).toEqual(
      links,
    );
  });
});

describe('cursor tampering', () => {
  let campaignId: string;
  let otherCampaignId: string;
  let links: LinkBody[];
  let otherLinks: LinkBody[];
  let cursor: string;

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'cursors' })).id;
    otherCampaignId = (await createCampaign({ name: 'cursors other' })).id;
    links = [];
    otherLinks = [];
    for (let i = 0; i < 4; i++) {
      otherLinks.push(await createLink(otherCampaignId, { referrer_id: 'r' }));
      links.push(await createLink(campaignId, { referrer_id: 'r' }));
    }
    const page = expectPage(await api<LinkBody[]>('GET', campaignList(campaignId, '?limit=1')));
    cursor = page.cursor!;
    expect(cursor).toBeDefined();
  });

  const encode = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

  /** The contract's answer to a cursor that is not one of this list's: 400, field `cursor`. */
  function expectCursorRefused(res: ApiResponse): void {
    expectError(res, 400, 'validation_failed');
    expect(errorOf(res).details?.map((d) => d.field)).toEqual(['cursor']);
  }

  it('the genuine cursor works', async () => {
    const page = expectPage(
      await api<LinkBody[]>('GET', campaignList(campaignId, `?limit=10&cursor=${cursor}`)),
    );
    expect(page.items.map((l) => l.id)).toEqual(links.slice(1).map((l) => l.id));
  });

  it('tampered cursors: 400 validation_failed, never 5xx', async () => {
    const tampered = [
      `A${cursor.slice(1)}`, // first byte no longer '['
      cursor.slice(0, -5), // truncated JSON
      `${cursor}AAAA`, // trailing garbage
      [...cursor].reverse().join(''),
      cursor.slice(0, 4) +
        cursor
          .slice(4)
          .replace(/[A-Za-z]/g, (c) => (c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase())),
      randomBytes(24).toString('base64url'),
      randomBytes(300).toString('base64url'),
      'x',
      'A'.repeat(2000),
      encodeURIComponent('abc$%^&*'),
      encodeURIComponent('a+b/c='), // standard base64 characters are not base64url
      encode({ sortKey: '000000000000001#0000000000000001', code: 'ABCDEFGH' }),
      encode([2, '000000000000001#0000000000000001', 'ABCDEFGH']),
      encode([3, '000000000000001#0000000000000001', 'ABCDEFGH', 'AAAAAAAAAAAA']),
      encode([1, '000000000000001#0000000000000001']),
      encode([1, '000000000000001#0000000000000001', 'ABCDEFGH', 'extra']),
      encode([1, 123, 'ABCDEFGH']),
      encode([1, 'not-a-sort-key', 'ABCDEFGH']),
      encode([1, '000000000000001#0000000000000001', 'bad code!']),
      encode([1, '000000000000001#0000000000000001', null]),
      encode([1, { $ne: null }, 'ABCDEFGH']),
      encode(null),
      encode('string'),
      encode(42),
      encode({}),
      encode([]),
    ];
    for (const bad of tampered) {
      for (const path of [
        campaignList(campaignId, `?cursor=${bad}`),
        referrerList(campaignId, 'r', `?cursor=${bad}`),
      ]) {
        const res = await api('GET', path);
        expect(res.status, `${bad}: ${res.text}`).toBe(400);
        expectError(res, 400, 'validation_failed');
      }
    }
  });

  it('an empty cursor parameter is not a 5xx', async () => {
    const res = await api('GET', campaignList(campaignId, '?cursor='));
    expect([200, 400]).toContain(res.status);
  });

  it('a well-formed but fabricated cursor is 400, never a 5xx', async () => {
    for (const fabricated of [
      encode([2, '000000000000000#0000000000000000', 'ABCD', 'AAAAAAAAAAAA']),
      encode([2, '999999999999999#9999999999999999', 'ZZZZZZZZ', 'AAAAAAAAAAAA']),
      encode([1, '000000000000001#0000000000000001', otherLinks[0]!.referral_code]),
    ]) {
      const res = await api<LinkBody[]>('GET', campaignList(campaignId, `?cursor=${fabricated}`));
      expectCursorRefused(res);
    }
  });

  it("a cursor of another campaign's list: 400 on both lists", async () => {
    const foreign = expectPage(await api<LinkBody[]>('GET', campaignList(otherCampaignId, '?limit=1')))
      .cursor!;
    expectCursorRefused(await api('GET', campaignList(campaignId, `?cursor=${foreign}`)));
    expectCursorRefused(await api('GET', referrerList(campaignId, 'r', `?cursor=${foreign}`)));
    const foreignReferrer = expectPage(
      await api<LinkBody[]>('GET', referrerList(otherCampaignId, 'r', '?limit=1')),
    ).cursor!;
    expectCursorRefused(await api('GET', referrerList(campaignId, 'r', `?cursor=${foreignReferrer}`)));
  });

  it('a cursor of the campaign list on a referrer list, and back, or of another referrer: 400', async () => {
    const fromReferrer = expectPage(await api<LinkBody[]>('GET', referrerList(campaignId, 'r', '?limit=2')))
      .cursor!;
    expectCursorRefused(await api('GET', campaignList(campaignId, `?cursor=${fromReferrer}`)));
    expectCursorRefused(await api('GET', referrerList(campaignId, 'R', `?cursor=${fromReferrer}`)));
    expectCursorRefused(await api('GET', referrerList(campaignId, 'r', `?cursor=${cursor}`)));
    // Its own list still takes it.
    const own = expectPage(
      await api<LinkBody[]>('GET', referrerList(campaignId, 'r', `?cursor=${fromReferrer}`)),
    );
    expect(own.items.map((l) => l.id)).toEqual(links.slice(2).map((l) => l.id));
  });

  it("tenant B using tenant A's cursor: 400, on B's campaign and on A's alike", async () => {
    const campaignB = await createCampaign({ name: 'cursor b' }, TENANT_B.key);
    await createLink(campaignB.id, {}, TENANT_B.key);
    expectCursorRefused(
      await api('GET', campaignList(campaignB.id, `?cursor=${cursor}`), { key: TENANT_B.key }),
    );
    // The cursor is checked before the campaign is read, so this says nothing about A's campaign:
    // B gets the same 400 for a campaign id that does not exist.
    expectCursorRefused(
      await api('GET', campaignList(campaignId, `?cursor=${cursor}`), { key: TENANT_B.key }),
    );
    expectCursorRefused(
      await api('GET', campaignList(randomUUID(), `?cursor=${cursor}`), { key: TENANT_B.key }),
    );
    expectError(await api('GET', campaignList(campaignId), { key: TENANT_B.key }), 404, 'campaign_not_found');
  });
});

describe('the Link header of a referrer list with an unusual referrer id', () => {
  it.each(['>; rel="x", <https://evil.example/', 'a/b?c=d&cursor=x#frag', '100% 😀, "quoted"; rel=prev'])(
    '%j: one relation, and following it gives the next page of the same list',
    async (referrerId) => {
      const campaign = await createCampaign({ name: 'odd referrer' });
      const created = [];
      for (let i = 0; i < 3; i++) created.push(await createLink(campaign.id, { referrer_id: referrerId }));
      const first = await api<LinkBody[]>('GET', referrerList(campaign.id, referrerId, '?limit=2'));
      const header = first.headers.get('link') ?? '';
      expect(header.match(/</g), header).toHaveLength(1);
      expect(header.match(/rel=/g), header).toHaveLength(1);
      const page = expectPage(first);
      expect(page.items.map((l) => l.id)).toEqual(created.slice(0, 2).map((l) => l.id));
      const pages = await allPages(pathOf(page.next!));
      expect(pages.flat().map((l) => l.id)).toEqual([created[2]!.id]);
      expect(pages.flat().every((l) => l.referrer_id === referrerId)).toBe(true);
    },
  );
});

describe('counters of links read through an index (no index copies them)', () => {
  it('lists and the fetch by id answer each link with the counters of its item', async () => {
    const campaign = await createCampaign({ name: 'counters through indexes' });
    const links = [
      await createLink(campaign.id, { referrer_id: 'counting-referrer' }),
      await createLink(campaign.id),
      await createLink(campaign.id, { referrer_id: 'counting-referrer' }),
    ];
    // Different counts per link: link i gets i + 1 actions and i signups.
    for (const [i, link] of links.entries()) {
      for (let n = 0; n <= i; n++) await createLinkAction(link.referral_code, `act-${n}`);
      for (let n = 0; n < i; n++) await createReferredUser(link.referral_code, `counted-${i}-${n}`);
    }
    const want = links.map((l, i) => ({ ...l, total_clicks: i + 1, total_referrals: i }));
    // By id: the link itself, read by key after the index, so exact at once.
    for (const [i, link] of links.entries()) expect(await fetchLink(link.id)).toEqual(want[i]);
    // The lists read their links' counters with eventually consistent reads: current within moments.
    const pages = async (path: string) => {
      const seen: LinkBody[] = [];
      let next: string | undefined = path;
      while (next) {
        const page = expectPage(await api<LinkBody[]>('GET', next));
        seen.push(...page.items);
        next = page.next && pathOf(page.next);
      }
      return seen;
    };
    await eventually('the campaign list shows every counter', async () => {
      const seen = await pages(campaignList(campaign.id, '?limit=2'));
      return JSON.stringify(seen) === JSON.stringify(want) ? true : undefined;
    });
    await eventually("the referrer's list shows every counter", async () => {
      const seen = await pages(referrerList(campaign.id, 'counting-referrer', '?limit=1'));
      return JSON.stringify(seen) === JSON.stringify([want[0], want[2]]) ? true : undefined;
    });
  });
});
