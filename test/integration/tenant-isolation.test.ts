import { describe, expect, it } from 'vitest';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';
import { type CampaignBody, createCampaign, randomId } from '../support/records.ts';

const withId = (id: string) => `/api/v1/campaign?id=${id}`;

/** Replace an id in a message so two 404 bodies for different ids can be compared. */
const anonymise = (body: unknown, id: string) => JSON.parse(JSON.stringify(body).split(id).join('<id>'));

async function asA(id: string): Promise<CampaignBody> {
  const res = await api<CampaignBody>('GET', withId(id), { key: TENANT_A.key });
  expect(res.status).toBe(200);
  return res.body;
}

describe('tenant isolation', () => {
  it("tenant B gets exactly a non-existent id's 404 for A's campaign, on every method", async () => {
    const campaign = await createCampaign({ name: 'A only' }, TENANT_A.key);
    const absent = randomId();
    const cases: Array<[string, unknown]> = [
      ['GET', undefined],
      ['PATCH', { name: 'taken over' }],
      ['PATCH', { webhook_url: 'https://attacker.example.com/hook' }],
      ['PATCH', { webhook_url: null }],
      ['PATCH', undefined],
      ['DELETE', undefined],
    ];
    for (const [method, body] of cases) {
      const theirs = await api(method, withId(campaign.id), { key: TENANT_B.key, body });
      const nobodys = await api(method, withId(absent), { key: TENANT_B.key, body });
      expectError(theirs, 404, 'campaign_not_found');
      expect(anonymise(theirs.body, campaign.id), `${method} ${JSON.stringify(body)}`).toEqual(
        anonymise(nobodys.body, absent),
      );
    }
    // Nothing B did changed A's campaign.
    expect(await asA(campaign.id)).toEqual(campaign);
  });

  it("B's url_immutable answer is the same for A's campaign and for a missing one", async () => {
    const campaign = await createCampaign({}, TENANT_A.key);
    const theirs = await api('PATCH', withId(campaign.id), { key: TENANT_B.key, body: { url: 'x.example' } });
    const nobodys = await api('PATCH', withId(randomId()), { key: TENANT_B.key, body: { url: 'x.example' } });
    expect(theirs.status).toBe(nobodys.status);
    expect(theirs.body).toEqual(nobodys.body);
    expect(await asA(campaign.id)).toEqual(campaign);
  });

  it("A's webhook secret survives B's attempts, and B cannot read it", async () => {
    const campaign = await createCampaign({}, TENANT_A.key);
    const set = await api<CampaignBody>('PATCH', withId(campaign.id), {
      key: TENANT_A.key,
      body: { webhook_url: 'https://a.example.com/hook' },
    });
    expect(set.status).toBe(200);
    await api('PATCH', withId(campaign.id), { key: TENANT_B.key, body: { webhook_url: null } });
    const read = await api('GET', withId(campaign.id), { key: TENANT_B.key });
    expectError(read, 404, 'campaign_not_found');
    expect(read.text).not.toContain(set.body.webhook_secret as string);
    expect(await asA(campaign.id)).toEqual(set.body);
  });

  it("B's delete of A's campaign deletes nothing; A's own delete still works", async () => {
    const campaign = await createCampaign({}, TENANT_A.key);
    expectError(await api('DELETE', withId(campaign.id), { key: TENANT_B.key }), 404, 'campaign_not_found');
    expect(await asA(campaign.id)).toEqual(campaign);
    expect((await api('DELETE', withId(campaign.id), { key: TENANT_A.key })).status).toBe(204);
  });

  it('works both ways: A cannot see B', async () => {
    const campaign = await createCampaign({ name: 'B only' }, TENANT_B.key);
    expectError(await api('GET', withId(campaign.id), { key: TENANT_A.key }), 404, 'campaign_not_found');
    const mine = await api('GET', withId(campaign.id), { key: TENANT_B.key });
    expect(mine.body).toEqual(campaign);
  });
});
