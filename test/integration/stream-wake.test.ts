/**
 * The local stack wakes its table-stream pollers after each request it answers. Idle, they read
 * the stream only every `streamIdleIntervalMs`, which this run's stack sets to a minute
 * (test/support/global-setup.ts): what the stream does here after a quiet spell, within seconds,
 * is the request's poke. Everything is read from the table, not through the API, so no request
 * but the one under test wakes anything.
 */
import { describe, expect, it } from 'vitest';
import { rawRequest } from '../support/api.ts';
import { BROWSER_UA, createCampaign, createLink } from '../support/records.ts';
import { settledClicks } from '../support/table.ts';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the local stack after a quiet spell', () => {
  it('counts a visit in total_clicks within 3 s: the redirect woke the idle stream pollers', async () => {
    const campaignId = (await createCampaign({ name: 'wake' })).id;
    const link = await createLink(campaignId, { referrer_id: 'wake' });
    // Both pollers idle: the link's records are handled within about 1.2 s (the rollups gather
    // for 1 s), and 2 s without a record or a poke after that makes a poller idle.
    await pause(4_500);
    const visit = await rawRequest('GET', `/r/${link.referral_code}`, {
      headers: { 'user-agent': BROWSER_UA },
    });
    expect(visit.status).toBe(302);
    // The rollups gather for 1 s; without the poke the next read would be a minute away.
    expect(await settledClicks(link.referral_code, 1, 3_000)).toBe(1);
  });
});
