/**
 * No tenant's input can stall the counting for the others (issue 27): one tenant floods its
 * campaign with 3,000 actions of distinct 64-character types, through the API as fast as the stack
 * takes them, while another tenant's visits are sent throughout. Each of those visits reaches its
 * link's `total_clicks` within the contract's 2 s; the flood's campaign counts every action, its
 * first 100 types by name and the rest under `(other)`; nothing is parked.
 */
import { describe, expect, it } from 'vitest';
import { eventually, mapLimit } from '../../tools/wait.ts';
import { api, TENANT_B } from '../support/api.ts';
import { BROWSER_UA, createCampaign, createLink } from '../support/records.ts';
import { partitionItems } from '../support/table.ts';

const TYPES = 3_000;
const CONCURRENCY = 16;

describe('a flood of distinct action types', () => {
  it("stalls nobody: another tenant's visits reach total_clicks within 2 s, and every action is counted", async () => {
    const flooded = await createCampaign({ name: 'flood of types' });
    const floodLink = await createLink(flooded.id, { referrer_id: 'flooder' });
    const other = await createCampaign({ name: 'bystander' }, TENANT_B.key);
    const otherLink = await createLink(other.id, {}, TENANT_B.key);
    const type = (i: number) => `${String(i).padStart(5, '0')}-${'f'.repeat(58)}`;

    let done = false;
    const started = Date.now();
    const flood = mapLimit(
      Array.from({ length: TYPES }, (_, i) => i),
      CONCURRENCY,
      async (i) => {
        const res = await api('POST', '/api/v1/action/referral_link', {
          body: { referral_code: floodLink.referral_code, action_type: type(i) },
        });
        expect(res.status, res.text).toBe(201);
      },
    ).finally(() => {
      done = true;
    });

    // The bystander's visits, one at a time throughout the flood: each until total_clicks has it.
    const delays: number[] = [];
    while (!done || delays.length < 3) {
      const visit = await api('GET', `/r/${otherLink.referral_code}`, {
        key: null,
        headers: { 'user-agent': BROWSER_UA },
      });
      expect(visit.status).toBe(302);
      const expected = delays.length + 1;
      await eventually(
        'the visit in total_clicks',
        async () => {
          const link = await api('GET', `/api/v1/referral_link?id=${otherLink.id}`, { key: TENANT_B.key });
          return link.body.total_clicks >= expected ? link.body.total_clicks : undefined;
        },
        30_000,
        50,
      );
      delays.push(Date.now() - visit.at);
    }
    await flood;
    const floodSeconds = (Date.now() - started) / 1000;
    console.log(
      `flood: ${TYPES} actions of distinct types in ${floodSeconds.toFixed(1)} s (${(TYPES / floodSeconds).toFixed(0)}/s); ` +
        `the other tenant's ${delays.length} visits reached total_clicks in ${delays.map((d) => (d / 1000).toFixed(2)).join(', ')} s`,
    );
    expect(Math.max(...delays)).toBeLessThanOrEqual(2_000);

    // Every action counted, the first 100 types by name, the others under (other).
    const totals = await eventually(
      'every action in the analytics',
      async () => {
        const res = await api('GET', `/api/v1/analytics/${flooded.id}`);
        return res.body.totals.actions === TYPES ? res.body.totals : undefined;
      },
      60_000,
      500,
    );
    const byType = totals.actions_by_type as Record<string, number>;
    expect(Object.keys(byType)).toHaveLength(101);
    expect(byType['(other)']).toBe(TYPES - 100);
    const byReferrer = await eventually(
      "the referrer's series",
      async () => {
        const res = await api('GET', `/api/v1/analytics/${flooded.id}?referrer_id=flooder`);
        return res.body.totals.actions === TYPES ? res.body.totals : undefined;
      },
      60_000,
      500,
    );
    expect(Object.keys(byReferrer.actions_by_type)).toHaveLength(101);
    expect((await api('GET', `/api/v1/referral_link?id=${floodLink.id}`)).body.total_clicks).toBe(TYPES);
    // Nothing of either campaign parked (another file may park work of its own on purpose).
    const parked = await partitionItems('PARKED', '');
    expect(
      parked.filter((p) => String(p.work).includes(flooded.id) || String(p.work).includes(other.id)),
    ).toEqual([]);
  }, 300_000);
});
