/**
 * A referral code stays reserved for the tenant that issued it, also after its campaign is
 * deleted and purged: the purge leaves a reservation at the code's key instead of deleting the
 * link, another tenant gets 409 for the code always, and the issuing tenant may issue it again.
 * The purge never overwrites a link that re-issued the code meanwhile.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../tools/wait.ts';
import { api, baseUrl, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';
import { createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { configureInProcessHandlers, linkItem } from '../support/table.ts';

const B = TENANT_B.key;
const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;

/** Waits until the purge has replaced the link of `code` by its reservation, and returns it. */
async function reservationOf(code: string): Promise<Record<string, unknown>> {
  const reserved = await waitUntil(async () => (await linkItem(code))?.type === 'code_reservation', 60_000);
  expect(reserved, `the purge left no reservation for ${code}`).toBe(true);
  return (await linkItem(code))!;
}

function createWithCode(campaignId: string, code: string, key?: string) {
  return api<LinkBody>('POST', '/api/v1/referral_link', {
    body: { campaign_id: campaignId, referral_code: code },
    key,
  });
}

describe("a deleted campaign's codes", () => {
  const code = `keep_${unique()}`;
  let deleted: LinkBody;
  let generated: LinkBody;
  let campaignB: string;

  beforeAll(async () => {
    const campaign = await createCampaign({ name: 'deleted with its codes' });
    deleted = await createLink(campaign.id, { referral_code: code, referrer_id: 'r' });
    generated = await createLink(campaign.id);
    campaignB = (await createCampaign({ url: 'https://b.example', name: 'takeover attempt' }, B)).id;
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`)).status).toBe(204);
    // At once, before any purge: the link item is still there, so this is the ordinary 409.
    expectError(await createWithCode(campaignB, code, B), 409, 'referral_code_taken');
  });

  it('are replaced by reservations of the issuing tenant, outside every index and without counters', async () => {
    for (const c of [code, generated.referral_code]) {
      expect(await reservationOf(c)).toEqual({
        PK: `LINK#${c}`,
        SK: 'LINK',
        type: 'code_reservation',
        tenant: TENANT_A.tenant,
        reserved_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    }
  });

  it('cannot be taken by another tenant after the purge: 409 referral_code_taken', async () => {
    await reservationOf(code);
    for (const c of [code, generated.referral_code]) {
      expectError(await createWithCode(campaignB, c, B), 409, 'referral_code_taken');
    }
  });

  it('answer like codes never used on every endpoint', async () => {
    await reservationOf(code);
    for (const key of [TENANT_A.key, B]) {
      expectError(
        await api('GET', `/api/v1/referral_link?referral_code=${code}`, { key }),
        404,
        'referral_link_not_found',
      );
      expectError(
        await api('POST', '/api/v1/referred_user', {
          body: { referral_code: code, referred_user_id: 'late' },
          key,
        }),
        404,
        'referral_link_not_found',
      );
      expectError(
        await api('POST', '/api/v1/action/referral_link', {
          body: { referral_code: code, action_type: 'late' },
          key,
        }),
        404,
        'referral_link_not_found',
      );
    }
    expectError(await api('GET', `/api/v1/referral_link?id=${deleted.id}`), 404, 'referral_link_not_found');
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${baseUrl()}/r/${code}`, { method, redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(res.headers.get('location')).toBeNull();
    }
    // Nothing was counted on the reservation.
    expect(await linkItem(code)).not.toHaveProperty('total_clicks');
  });

  it('can be issued again, after the purge, by the tenant that issued them', async () => {
    await reservationOf(code);
    const campaign = await createCampaign({ url: 'https://a.example/again', name: 'the code again' });
    const res = await createWithCode(campaign.id, code);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ referral_code: code, campaign_id: campaign.id, total_clicks: 0 });
    expect(res.body.id).not.toBe(deleted.id);
    const visit = await fetch(`${baseUrl()}/r/${code}`, { redirect: 'manual' });
    expect(visit.status).toBe(302);
    expect(visit.headers.get('location')).toBe(`https://a.example/again?rfa=${code}`);
    // Now a live link of tenant A: still 409 for tenant B.
    expectError(await createWithCode(campaignB, code, B), 409, 'referral_code_taken');
    expectError(await createWithCode(campaign.id, code), 409, 'referral_code_taken');
  });
});

describe('a purge that runs after the code was issued again', () => {
  const code = `race_${unique()}`;
  let old: LinkBody;
  let campaignId: string;
  let purge: typeof import('../../lib/db/purge.ts');

  beforeAll(async () => {
    configureInProcessHandlers();
    purge = await import('../../lib/db/purge.ts');
    campaignId = (await createCampaign({ name: 'purged twice' })).id;
    old = await createLink(campaignId, { referral_code: code });
    expect((await api('DELETE', `/api/v1/campaign?id=${campaignId}`)).status).toBe(204);
    await reservationOf(code);
  });

  it('leaves the new link intact, whether it finds the old link in its index or not', async () => {
    const again = await createCampaign({ url: 'https://a.example/new', name: 'reissued' });
    const reissued = await createLink(again.id, { referral_code: code, referrer_id: 'new' });
    const stored = await linkItem(code);
    expect(stored).toMatchObject({ type: 'link', id: reissued.id });

    // A late pass over the deleted campaign (its follow-up sweep, a redelivered message).
    expect((await purge.purgeCampaign(TENANT_A.tenant, campaignId, Date.now() + 20_000)).done).toBe(true);
    // What a pass does with an index entry of the old link that shows after the link is gone
    // (index reads are eventually consistent): the condition on the link's id refuses it.
    expect(await purge.reserveCodes(TENANT_A.tenant, [{ code, id: old.id }])).toBe(0);

    expect(await linkItem(code)).toEqual(stored);
    const visit = await fetch(`${baseUrl()}/r/${code}`, { redirect: 'manual' });
    expect(visit.headers.get('location')).toBe(`https://a.example/new?rfa=${code}`);
    const listed = await api<LinkBody[]>('GET', `/api/v1/campaign_referral_links/${again.id}`);
    expect(listed.body.map((l) => l.id)).toEqual([reissued.id]);
  });

  it('replaces the links it was given only while each is still at its key, the others in the same pass', async () => {
    const other = await createCampaign({ name: 'reserve directly' });
    const moved = await createLink(other.id, { referral_code: `direct_${unique()}` });
    const stays = await createLink(other.id, { referral_code: `direct_${unique()}` });
    // One transaction: the first condition fails (another link is at that key now), the second
    // holds; the cancelled transaction wrote nothing, so the second goes again on its own.
    expect(
      await purge.reserveCodes(TENANT_A.tenant, [
        { code: moved.referral_code, id: moved.id + 1 },
        { code: stays.referral_code, id: stays.id },
      ]),
    ).toBe(1);
    expect(await linkItem(moved.referral_code)).toMatchObject({ type: 'link', id: moved.id });
    expect(await linkItem(stays.referral_code)).toMatchObject({
      type: 'code_reservation',
      tenant: TENANT_A.tenant,
    });
  });
});
