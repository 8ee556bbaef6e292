/**
 * Endpoint 33: a campaign's referred users, newest first, whole or one link's or one referrer's,
 * paged by cursor like every list (`Link: <...>; rel="next"` and `x-next-cursor`), each with its
 * live link.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ReferredUser } from '../../lib/domain/link-schemas.ts';
import { type ApiResponse, api, baseUrl, TENANT_B } from '../support/api.ts';
import { errorOf, expectError, expectShape } from '../support/assertions.ts';
import {
  createCampaign,
  createLink,
  createReferredUser,
  type LinkBody,
  type ReferredUserBody,
} from '../support/records.ts';

const list = (campaignId: string, query = '') => `/api/v1/referred_users/${campaignId}${query}`;

function expectPage(res: ApiResponse<ReferredUserBody[]>) {
  expect(res.status, res.text).toBe(200);
  for (const user of res.body) expectShape(ReferredUser, user);
  const next = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1];
  const cursor = res.headers.get('x-next-cursor') ?? undefined;
  expect(next === undefined).toBe(cursor === undefined);
  if (next) expect(new URL(next, baseUrl()).searchParams.get('cursor')).toBe(cursor);
  return { items: res.body, next, cursor };
}

/** Every item of a list, following the Link header page after page. */
async function readAll(path: string): Promise<{ items: ReferredUserBody[]; pages: number }> {
  const items: ReferredUserBody[] = [];
  let pages = 0;
  for (let url: string | undefined = path; url; pages++) {
    const page = expectPage(await api<ReferredUserBody[]>('GET', url));
    items.push(...page.items);
    url = page.next;
    expect(pages).toBeLessThan(50);
  }
  return { items, pages };
}

let campaignId: string;
let alice1: LinkBody;
let alice2: LinkBody;
let bob: LinkBody;
let anonymous: LinkBody;
/** The signups in the order they were made (oldest first). */
const made: Array<{ id: string; link: LinkBody }> = [];

beforeAll(async () => {
  campaignId = (await createCampaign({ name: 'referred user list' })).id;
  alice1 = await createLink(campaignId, { referrer_id: 'alice' });
  alice2 = await createLink(campaignId, { referrer_id: 'alice' });
  bob = await createLink(campaignId, { referrer_id: 'bob/ü & co' });
  anonymous = await createLink(campaignId);
  const links = [alice1, bob, alice2, anonymous, alice1, bob, alice1];
  for (const [i, link] of links.entries()) {
    const id = `user-${i}#${i % 2 ? 'odd' : 'even'}`;
    await createReferredUser(link.referral_code, id);
    made.push({ id, link });
  }
});

const newestFirst = (filter: (m: (typeof made)[number]) => boolean) =>
  made
    .filter(filter)
    .map((m) => m.id)
    .reverse();

describe('GET /api/v1/referred_users/{campaign_id} (endpoint 33)', () => {
  it('lists every referred user newest first, each with its live link', async () => {
    const page = expectPage(await api<ReferredUserBody[]>('GET', list(campaignId)));
    expect(page.cursor).toBeUndefined();
    expect(page.items.map((u) => u.referred_user_id)).toEqual(newestFirst(() => true));
    const newest = page.items[0]!;
    expect(newest.referral_link.id).toBe(alice1.id);
    // Live counters: alice1 brought three of them.
    expect(newest.referral_link.total_referrals).toBe(3);
    expect(page.items.at(-1)?.referral_link.referral_code).toBe(alice1.referral_code);
  });

  it('pages across several pages with the cursor: every user once, in order', async () => {
    const { items, pages } = await readAll(list(campaignId, '?limit=2'));
    expect(pages).toBe(4);
    expect(items.map((u) => u.referred_user_id)).toEqual(newestFirst(() => true));
    // x-next-cursor works as well as the Link URL.
    const first = expectPage(await api<ReferredUserBody[]>('GET', list(campaignId, '?limit=3')));
    const second = expectPage(
      await api<ReferredUserBody[]>('GET', list(campaignId, `?limit=3&cursor=${first.cursor}`)),
    );
    expect(second.items.map((u) => u.referred_user_id)).toEqual(newestFirst(() => true).slice(3, 6));
  });

  it('referral_link_id keeps one link, paged with the filter kept in the Link URL', async () => {
    const { items, pages } = await readAll(list(campaignId, `?referral_link_id=${alice1.id}&limit=1`));
    expect(pages).toBe(3);
    expect(items.map((u) => u.referred_user_id)).toEqual(newestFirst((m) => m.link.id === alice1.id));
    const none = expectPage(
      await api<ReferredUserBody[]>('GET', list(campaignId, '?referral_link_id=999999999')),
    );
    expect(none.items).toEqual([]);
  });

  it("referrer_id keeps the referrer's links, all of them, any characters", async () => {
    const alice = await readAll(list(campaignId, '?referrer_id=alice&limit=2'));
    expect(alice.items.map((u) => u.referred_user_id)).toEqual(
      newestFirst((m) => m.link.referrer_id === 'alice'),
    );
    expect(new Set(alice.items.map((u) => u.referral_link.id))).toEqual(new Set([alice1.id, alice2.id]));
    const odd = await readAll(list(campaignId, `?referrer_id=${encodeURIComponent('bob/ü & co')}&limit=1`));
    expect(odd.items.map((u) => u.referred_user_id)).toEqual(newestFirst((m) => m.link.id === bob.id));
    expect(odd.pages).toBe(2);
  });

  it('both filters: 400 validation_failed', async () => {
    const res = await api('GET', list(campaignId, `?referral_link_id=${alice1.id}&referrer_id=alice`));
    expectError(res, 400, 'validation_failed');
  });

  it('a campaign without signups: an empty array, no cursor', async () => {
    const empty = (await createCampaign({ name: 'no signups' })).id;
    const page = expectPage(await api<ReferredUserBody[]>('GET', list(empty)));
    expect(page.items).toEqual([]);
    expect(page.cursor).toBeUndefined();
  });

  it("another tenant's campaign: 404 campaign_not_found, as an unknown one", async () => {
    expectError(await api('GET', list(campaignId), { key: TENANT_B.key }), 404, 'campaign_not_found');
    expectError(
      await api('GET', list(campaignId, '?referrer_id=alice'), { key: TENANT_B.key }),
      404,
      'campaign_not_found',
    );
    expectError(await api('GET', list(crypto.randomUUID())), 404, 'campaign_not_found');
  });

  it("a cursor of another list (filter, campaign, another list's kind): 400 on field cursor", async () => {
    const whole = expectPage(await api<ReferredUserBody[]>('GET', list(campaignId, '?limit=1')));
    const other = (await createCampaign({ name: 'other list' })).id;
    const links = await api<LinkBody[]>('GET', `/api/v1/campaign_referral_links/${campaignId}?limit=1`);
    const linksCursor = links.headers.get('x-next-cursor');
    expect(linksCursor).toBeTruthy();
    for (const path of [
      list(campaignId, `?referrer_id=alice&cursor=${whole.cursor}`),
      list(campaignId, `?referral_link_id=${alice1.id}&cursor=${whole.cursor}`),
      list(other, `?cursor=${whole.cursor}`),
      list(campaignId, `?cursor=${linksCursor}`),
    ]) {
      const res = await api('GET', path);
      expectError(res, 400, 'validation_failed');
      expect(errorOf(res).details?.map((d) => d.field)).toEqual(['cursor']);
    }
    // Another tenant's: the cursor is refused before anything is read, as on every list.
    const foreign = await api('GET', list(campaignId, `?cursor=${whole.cursor}`), { key: TENANT_B.key });
    expectError(foreign, 400, 'validation_failed');
    expect(errorOf(foreign).details?.map((d) => d.field)).toEqual(['cursor']);
  });

  it('a deleted campaign: 404 at once', async () => {
    const doomed = (await createCampaign({ name: 'doomed list' })).id;
    const link = await createLink(doomed, { referrer_id: 'carol' });
    await createReferredUser(link.referral_code, 'gone-soon');
    expect(expectPage(await api<ReferredUserBody[]>('GET', list(doomed))).items).toHaveLength(1);
    expect((await api('DELETE', `/api/v1/campaign?id=${doomed}`)).status).toBe(204);
    expectError(await api('GET', list(doomed)), 404, 'campaign_not_found');
    expectError(await api('GET', list(doomed, '?referrer_id=carol')), 404, 'campaign_not_found');
  });
});
