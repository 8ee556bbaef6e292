/**
 * Endpoint 15: `GET /api/v1/campaigns`, the account's campaigns newest first, paged like every list
 * (`Link: <...>; rel="next"` and `x-next-cursor` while more remain, opaque cursors that work only
 * on the list that gave them). Every describe has tenants of its own (keys issued with the CLI's
 * store), since the other files of the run create campaigns for tenants A and B all the time.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeSortKeyCursor } from '../../lib/db/cursor.ts';
import { campaignOrder, newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { CampaignList } from '../../lib/domain/schemas.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { mapLimit } from '../../tools/wait.ts';
import { type ApiResponse, api, baseUrl, rawRequest, TENANT_B } from '../support/api.ts';
import { errorOf, expectError, expectShape, expectValidation } from '../support/assertions.ts';
import { type CampaignBody, createCampaign, createLink, newTenant } from '../support/records.ts';
import { putItems } from '../support/table.ts';

const LIST = '/api/v1/campaigns';

/** A tenant of this file alone, and its key. */
const newTenantOfThisFile = (label: string) => newTenant(`campaigns-${label}`);

/** Campaigns made one after the other (each answered before the next is sent): creation order is known. */
async function createInOrder(key: string, count: number, name = 'listed'): Promise<CampaignBody[]> {
  const made: CampaignBody[] = [];
  for (let i = 0; i < count; i++) made.push(await createCampaign({ name: `${name} ${i}` }, key));
  return made;
}

/** Check a page: 200, a plain array of campaigns, and the two paging headers present together. */
function expectPage(res: ApiResponse<CampaignBody[]>): {
  items: CampaignBody[];
  next?: string;
  cursor?: string;
} {
  expect(res.status, res.text).toBe(200);
  expectShape(CampaignList, res.body);
  const link = res.headers.get('link') ?? undefined;
  const cursor = res.headers.get('x-next-cursor') ?? undefined;
  expect(link === undefined, `link ${link}, x-next-cursor ${cursor}`).toBe(cursor === undefined);
  let next: string | undefined;
  if (link && cursor) {
    const m = /^<([^>]+)>; rel="next"$/.exec(link);
    expect(m, link).not.toBeNull();
    next = m![1]!;
    const url = new URL(next, baseUrl());
    expect(url.pathname).toBe(LIST);
    expect(url.searchParams.get('cursor')).toBe(cursor);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
  }
  return { items: res.body, next, cursor };
}

/** Every page from `first` on, following the `Link` targets. */
async function allPages(first: string, key: string): Promise<CampaignBody[][]> {
  const pages: CampaignBody[][] = [];
  let path: string | undefined = first;
  while (path) {
    const page = expectPage(await api<CampaignBody[]>('GET', path, { key }));
    pages.push(page.items);
    path = page.next;
    if (pages.length > 200) throw new Error('paging does not end');
  }
  return pages;
}

const idsOf = (campaigns: readonly { id: string }[]) => campaigns.map((c) => c.id);
const newestFirst = (campaigns: readonly CampaignBody[]) => idsOf([...campaigns].reverse());

describe('GET /api/v1/campaigns (endpoint 15): newest first, whole campaign objects', () => {
  let key: string;
  let made: CampaignBody[];

  beforeAll(async () => {
    ({ key } = await newTenantOfThisFile('objects'));
    made = await createInOrder(key, 4);
    // Every field of the object set some way: a webhook with its secret, a disabled webhook with a
    // reason, a subset of event types.
    const patch = async (id: string, body: object) => {
      const res = await api('PATCH', `/api/v1/campaign?id=${id}`, { key, body });
      expect(res.status, res.text).toBe(200);
    };
    await patch(made[1]!.id, { webhook_url: 'http://127.0.0.1:9/hook', name: 'renamed' });
    await patch(made[2]!.id, {
      webhook_url: 'http://127.0.0.1:9/other',
      webhook_events: ['referred_user.created'],
      webhook_status: 'disabled',
    });
  });

  it('lists every campaign of the account, newest first, each exactly as GET /api/v1/campaign answers it', async () => {
    const page = expectPage(await api<CampaignBody[]>('GET', LIST, { key }));
    expect(page.cursor).toBeUndefined();
    expect(idsOf(page.items)).toEqual(newestFirst(made));
    for (const campaign of page.items) {
      const one = await api('GET', `/api/v1/campaign?id=${campaign.id}`, { key });
      expect(campaign).toEqual(one.body);
    }
    expect(page.items.find((c) => c.id === made[2]!.id)).toMatchObject({
      webhook_events: ['referred_user.created'],
      webhook_status: 'disabled',
      webhook_disabled_reason: expect.any(String),
    });
    expect(page.items.find((c) => c.id === made[1]!.id)).toMatchObject({
      name: 'renamed',
      webhook_secret: expect.stringMatching(/^whsec_/),
    });
  });

  it('is an empty array, without paging headers, for an account with no campaign', async () => {
    const { key: empty } = await newTenantOfThisFile('empty');
    const page = expectPage(await api<CampaignBody[]>('GET', LIST, { key: empty }));
    expect(page.items).toEqual([]);
    expect(page.cursor).toBeUndefined();
  });

  it('HEAD answers the GET status and headers without a body', async () => {
    const head = await rawRequest('HEAD', `${LIST}?limit=2`, { headers: { 'api-key': key } });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expect(head.headers.get('x-next-cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(head.headers.get('link')).toMatch(
      /^<\/api\/v1\/campaigns\?limit=2&cursor=[A-Za-z0-9_-]+>; rel="next"$/,
    );
  });
});

describe('paging through more campaigns than a page holds', () => {
  let key: string;
  let made: CampaignBody[];

  beforeAll(async () => {
    ({ key } = await newTenantOfThisFile('paging'));
    made = await createInOrder(key, 23);
  }, 60_000);

  it.each([1, 5, 7, 22, 23, 100])(
    'limit=%i: following Link reaches every campaign exactly once, newest first',
    async (limit) => {
      const pages = await allPages(`${LIST}?limit=${limit}`, key);
      expect(idsOf(pages.flat())).toEqual(newestFirst(made));
      // Full pages until the last; the last one has no cursor (a page of exactly the rest included).
      expect(pages.map((p) => p.length)).toEqual(
        Array.from({ length: Math.ceil(made.length / limit) }, (_, i) =>
          Math.min(limit, made.length - i * limit),
        ),
      );
    },
  );

  it('the cursor alone (x-next-cursor as ?cursor=) continues the same list, default limit included', async () => {
    const first = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=10`, { key }));
    const rest = expectPage(await api<CampaignBody[]>('GET', `${LIST}?cursor=${first.cursor}`, { key }));
    expect(rest.cursor).toBeUndefined();
    expect(idsOf([...first.items, ...rest.items])).toEqual(newestFirst(made));
  });

  it('a campaign created after a page was read is on none of the later pages (they continue backwards)', async () => {
    const first = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=20`, { key }));
    const later = await createCampaign({ name: 'later' }, key);
    const rest = expectPage(await api<CampaignBody[]>('GET', first.next!, { key }));
    expect(idsOf(rest.items)).toEqual(newestFirst(made).slice(20));
    const fresh = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=1`, { key }));
    expect(idsOf(fresh.items)).toEqual([later.id]);
    expect((await api('DELETE', `/api/v1/campaign?id=${later.id}`, { key })).status).toBe(204);
  });
});

describe('deleted campaigns', () => {
  it('are gone from the list from the 204 on, and a cursor positioned on one still continues', async () => {
    const { key } = await newTenantOfThisFile('deleted');
    const made = await createInOrder(key, 5);
    const ids = newestFirst(made);
    const del = async (id: string) =>
      expect((await api('DELETE', `/api/v1/campaign?id=${id}`, { key })).status).toBe(204);

    await del(ids[1]!);
    expect(idsOf(expectPage(await api('GET', LIST, { key })).items)).toEqual([
      ids[0],
      ids[2],
      ids[3],
      ids[4],
    ]);

    // Page 1 ends on ids[2]; that campaign is deleted before page 2 is asked for.
    const first = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=2`, { key }));
    expect(idsOf(first.items)).toEqual([ids[0], ids[2]]);
    await del(ids[2]!);
    const rest = await allPages(first.next!, key);
    expect(idsOf(rest.flat())).toEqual([ids[3], ids[4]]);

    for (const id of [ids[0]!, ids[3]!, ids[4]!]) await del(id);
    const none = expectPage(await api<CampaignBody[]>('GET', LIST, { key }));
    expect(none.items).toEqual([]);
    expect(none.cursor).toBeUndefined();
  });
});

describe('tenant isolation and cursors of other lists', () => {
  let a: { tenant: string; key: string };
  let b: { tenant: string; key: string };
  let madeA: CampaignBody[];
  let madeB: CampaignBody[];
  let cursorA: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([newTenantOfThisFile('iso-a'), newTenantOfThisFile('iso-b')]);
    [madeA, madeB] = await Promise.all([createInOrder(a.key, 3, 'a'), createInOrder(b.key, 2, 'b')]);
    cursorA = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=1`, { key: a.key })).cursor!;
  });

  it("each account lists its own campaigns only, never another's", async () => {
    const listA = idsOf(expectPage(await api<CampaignBody[]>('GET', LIST, { key: a.key })).items);
    const listB = idsOf(expectPage(await api<CampaignBody[]>('GET', LIST, { key: b.key })).items);
    expect(listA).toEqual(newestFirst(madeA));
    expect(listB).toEqual(newestFirst(madeB));
    // The run's shared tenant B (other files write to it all along) sees none of them either.
    const shared = await allPages(`${LIST}?limit=1000`, TENANT_B.key);
    const sharedIds = new Set(idsOf(shared.flat()));
    for (const id of [...listA, ...listB]) expect(sharedIds.has(id)).toBe(false);
  });

  it("another account's cursor is 400 validation_failed on cursor, before anything is read", async () => {
    const res = await api('GET', `${LIST}?cursor=${cursorA}`, { key: b.key });
    expectValidation(res, 'cursor');
    // With its own key it works.
    const ok = expectPage(await api<CampaignBody[]>('GET', `${LIST}?cursor=${cursorA}`, { key: a.key }));
    expect(idsOf(ok.items)).toEqual(newestFirst(madeA).slice(1));
  });

  it('a cursor of another list is 400 on cursor here, and this list’s cursor is 400 there', async () => {
    const campaign = await createCampaign({ name: 'other lists' }, a.key);
    await createLink(campaign.id, { referrer_id: 'r' }, a.key);
    await createLink(campaign.id, { referrer_id: 'r' }, a.key);
    const linksPage = await api('GET', `/api/v1/campaign_referral_links/${campaign.id}?limit=1`, {
      key: a.key,
    });
    const referrerPage = await api('GET', `/api/v1/referral_link/${campaign.id}/r?limit=1`, { key: a.key });
    const linkCursors = [linksPage, referrerPage].map((r) => r.headers.get('x-next-cursor'));
    for (const cursor of linkCursors) {
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expectValidation(await api('GET', `${LIST}?cursor=${cursor}`, { key: a.key }), 'cursor');
    }
    // Cursors of the events feed and the delivery log have this list's shape (one sort key) but
    // another list's tag.
    const feedCursor = encodeSortKeyCursor(
      { kind: 'events', tenant: a.tenant, campaignId: campaign.id },
      '1795427107903000',
    );
    expectValidation(await api('GET', `${LIST}?cursor=${feedCursor}`, { key: a.key }), 'cursor');
    for (const path of [
      `/api/v1/campaign_referral_links/${campaign.id}`,
      `/api/v1/referral_link/${campaign.id}/r`,
      `/api/v1/events/${campaign.id}`,
      `/api/v1/webhook_deliveries/${campaign.id}`,
    ]) {
      expectValidation(await api('GET', `${path}?cursor=${cursorA}`, { key: a.key }), 'cursor');
    }
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`, { key: a.key })).status).toBe(204);
  });

  it("a cursor made for one's own list at another account's position reads one's own list only", async () => {
    // The tag is no secret (a client can only ever read its own lists): what it must not do is
    // reach into another account's. The position is only where to start in the key's own list.
    const theirs = madeB[1]!;
    const forged = encodeSortKeyCursor(
      { kind: 'campaigns', tenant: a.tenant },
      campaignOrder(Date.now() + 60_000, theirs.id),
    );
    const page = expectPage(await api<CampaignBody[]>('GET', `${LIST}?cursor=${forged}`, { key: a.key }));
    expect(idsOf(page.items)).toEqual(newestFirst(madeA));
  });

  it('an unknown or missing key is 401, and another method 405, as on every /api/v1 route', async () => {
    expectError(await api('GET', LIST, { key: 'not-a-key-0000000000000000' }), 401, 'unauthorized');
    expectError(await api('GET', LIST, { key: null }), 401, 'unauthorized');
    expectError(await api('POST', LIST, { key: a.key, body: {} }), 405, 'method_not_allowed');
  });
});

describe('large campaigns: the 1 MB a Query reads ends pages early, and every campaign stays reachable', () => {
  const count = 400;
  let key: string;
  let ids: string[];

  beforeAll(async () => {
    let tenant: string;
    ({ tenant, key } = await newTenantOfThisFile('large'));
    // Written straight into the table in the exact shape the API writes (a 400-campaign account
    // with 2,000-character URLs would take long through the API), one millisecond apart: about 4 KB
    // each, so some 250 fill the 1 MB a Query reads, well before limit=1000.
    const created = Date.now() - count;
    const items = Array.from({ length: count }, (_, i) => {
      const at = new Date(created + i);
      return {
        ...newCampaignItem(
          tenant,
          {
            id: randomUUID(),
            created_at: formatTimestamp(at),
            url: `https://example.com/${'long-path/'.repeat(198)}${i}`,
            name: `large ${i}`,
            webhook_url: null,
            webhook_secret: null,
            webhook_events: ['action.created', 'referred_user.created'],
            webhook_status: 'enabled',
            webhook_disabled_reason: null,
          },
          at,
        ),
        webhook_url: `https://hooks.example.com/${'x'.repeat(1900)}`,
      };
    });
    await putItems(items);
    ids = items.map((i) => i.id).reverse();
  }, 60_000);

  it('following cursors with limit=1000 yields every campaign once, newest first', async () => {
    const pages = await allPages(`${LIST}?limit=1000`, key);
    expect(pages[0]!.length).toBeGreaterThan(0);
    expect(pages[0]!.length, 'the first page was not cut by the 1 MB limit').toBeLessThan(count);
    expect(idsOf(pages.flat())).toEqual(ids);
  });
});

describe('limit and cursor: any value is a 200 or a 400 in the contract shape, never more', () => {
  let tenant: string;
  let key: string;
  let made: CampaignBody[];

  beforeAll(async () => {
    ({ tenant, key } = await newTenantOfThisFile('garbage'));
    made = await createInOrder(key, 3);
  });

  const validLimit = (s: string) => /^(?:[1-9][0-9]{0,2}|1000)$/.test(s);

  it('limit: 1–1000 as digits is a 200 of at most that many; anything else 400 on limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.constantFrom(
            '0',
            '1',
            '2',
            '3',
            '1000',
            '1001',
            '-1',
            '1.5',
            '01',
            ' 5',
            '5 ',
            '1e2',
            '',
            'NaN',
          ),
          fc.integer({ min: -5, max: 2000 }).map(String),
          fc.string({ maxLength: 8 }),
          fc.string({ unit: 'binary', maxLength: 8 }),
        ),
        async (limit) => {
          const res = await api('GET', `${LIST}?limit=${encodeURIComponent(limit)}`, { key });
          if (validLimit(limit)) {
            const page = expectPage(res);
            expect(idsOf(page.items)).toEqual(newestFirst(made).slice(0, Number(limit)));
          } else {
            // `limit=` too: an empty value is a value, and not an integer.
            expectValidation(res, 'limit');
          }
        },
      ),
      { numRuns: 120 },
    );
  });

  it('cursor: a 200 only for a position in this list, else 400 on cursor (or on limit)', async () => {
    const genuine = expectPage(await api<CampaignBody[]>('GET', `${LIST}?limit=1`, { key })).cursor!;
    const ownTag = (position: string) => encodeSortKeyCursor({ kind: 'campaigns', tenant }, position);
    // [cursor, whether it names a position in this account's list]
    const cursor: fc.Arbitrary<[string, boolean]> = fc.oneof(
      fc.constant<[string, boolean]>([genuine, true]),
      // Positions of the list's own shape, anywhere: valid, they start the list there.
      fc
        .tuple(fc.integer({ min: 0, max: Date.now() + 10 ** 9 }), fc.uuid({ version: 4 }))
        .map(([ms, id]): [string, boolean] => [ownTag(campaignOrder(ms, id)), true]),
      ...[
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.string({ maxLength: 60 }).map((s) => Buffer.from(s).toString('base64url')),
        fc
          .tuple(fc.constantFrom(2, 3, 4), fc.string({ maxLength: 60 }), fc.string({ maxLength: 14 }))
          .map((parts) => Buffer.from(JSON.stringify(parts)).toString('base64url')),
        // This list's tag, at something that is not a campaign list position.
        fc
          .oneof(
            fc.string({ maxLength: 60 }),
            fc.uuid().map((id) => `000000000000001#${id.toUpperCase()}`),
            fc.uuid().map((id) => `1#${id}`),
          )
          .map(ownTag),
        // A genuine position under another account's tag.
        fc.constant(
          encodeSortKeyCursor({ kind: 'campaigns', tenant: 'someone-else' }, campaignOrder(1, randomUUID())),
        ),
      ].map((garbage) => garbage.map((c): [string, boolean] => [c, false])),
    );
    const limits = fc.option(fc.constantFrom('1', '2', '1000', '0', 'x', ''), { nil: undefined });
    await fc.assert(
      fc.asyncProperty(cursor, limits, async ([c, positioned], limit) => {
        const query = `cursor=${encodeURIComponent(c)}${limit === undefined ? '' : `&limit=${limit}`}`;
        const res = await api('GET', `${LIST}?${query}`, { key });
        const limitOk = limit === undefined || validLimit(limit);
        if (positioned && limitOk) {
          // Whatever the position, the page is a run of this account's list: its campaigns older
          // than the position, newest first, at most `limit` of them.
          const ids = idsOf(expectPage(res).items);
          const all = newestFirst(made);
          const from = ids.length > 0 ? all.indexOf(ids[0]!) : all.length;
          expect(ids).toEqual(all.slice(from, from + Number(limit ?? 100)));
          if (c === genuine) expect(ids).toEqual(all.slice(1, 1 + Number(limit ?? 100)));
          return;
        }
        expectError(res, 400, 'validation_failed');
        const fields = errorOf(res).details?.map((d) => d.field) ?? [];
        expect(
          fields.every((f) => f === 'cursor' || f === 'limit'),
          res.text,
        ).toBe(true);
        expect(fields, res.text).toContain(limitOk ? 'cursor' : 'limit');
      }),
      { numRuns: 200 },
    );
  });

  it('many pages at once from many clients: each request is one answer of its own', async () => {
    const answers = await mapLimit(
      Array.from({ length: 20 }, (_, i) => i),
      10,
      async (i) => api<CampaignBody[]>('GET', `${LIST}?limit=${(i % 3) + 1}`, { key }),
    );
    for (const [i, res] of answers.entries()) {
      expect(idsOf(expectPage(res).items)).toEqual(newestFirst(made).slice(0, (i % 3) + 1));
    }
  });
});
