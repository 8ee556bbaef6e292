/**
 * A visit's uniqueness survives a crash between its two writes. A real `npm start`, told by the
 * FAULT_KILL_AFTER_VISITOR_MARKER fault switch (lib/config.ts) to SIGKILL itself right after its
 * n-th visitor marker write, dies between a visit's marker and its visit item; started again on
 * the same DATA_DIR, the same visitor (same source address and user agent) visits again, and the
 * campaign's analytics count unique visits among the visits that were written, exactly:
 *
 * - visitor X: a written visit of link A, one killed after its marker, one after the restart: the
 *   last is not unique (the written one is within the hour), although the marker's newest visit
 *   is the lost one;
 * - visitor Y: a visit of link B killed after its marker, one after the restart, one more: the
 *   first written one is unique (before this fix it counted as a repeat of the lost one).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/ports.ts';
import { eventually } from '../../tools/wait.ts';
import { type Api, apiAt } from '../support/api.ts';
import { BROWSER_UA, createCampaign, createLink } from '../support/records.ts';
import { cleanUpStacks, ready, start, tempDataDir } from '../support/stack-process.ts';

afterAll(cleanUpStacks);

const KEY = 'visit-crash-key-0000000000000001';
const VISITOR_X = `${BROWSER_UA} crash-x`;
const VISITOR_Y = `${BROWSER_UA} crash-y`;

/** A stack on `dataDir` with one tenant's key, ready. */
async function startOn(dataDir: string, env: Record<string, string> = {}) {
  const s = await start({
    DATA_DIR: dataDir,
    DEV_API_KEYS: `acme:${KEY}`,
    PORT: String(await freePort()),
    ...env,
  });
  return { s, ...(await ready(s)) };
}

/** A browser's visit from this process (the stack sees 127.0.0.1 as its source): its status. */
async function visit(baseUrl: string, code: string, userAgent: string): Promise<number> {
  const res = await fetch(`${baseUrl}/r/${code}`, {
    redirect: 'manual',
    headers: { 'user-agent': userAgent },
  });
  await res.arrayBuffer();
  return res.status;
}

/** A visit whose stack dies during it: no answer, and the stack is gone by SIGKILL. */
async function killedVisit(stack: Awaited<ReturnType<typeof startOn>>, code: string, userAgent: string) {
  await expect(visit(stack.baseUrl, code, userAgent)).rejects.toThrow(TypeError);
  expect(await stack.s.exit).toEqual({ code: null, signal: 'SIGKILL' });
}

interface Totals {
  visits: number;
  unique_visits: number;
}

async function totalsOnce(api: Api, path: string, visits: number): Promise<Totals> {
  return eventually(
    `${visits} visits in ${path}`,
    async () => {
      const res = await api<{ totals: Totals }>('GET', path);
      expect(res.status, res.text).toBe(200);
      return res.body.totals.visits >= visits ? res.body.totals : undefined;
    },
    60_000,
    200,
  );
}

describe('a visit killed between its visitor marker and its visit item', () => {
  it('leaves unique visits exact after a restart on the same DATA_DIR', async () => {
    const dir = tempDataDir();
    // 1. X visits A (written), then again: the stack dies after that visit's marker.
    let stack = await startOn(dir, { FAULT_KILL_AFTER_VISITOR_MARKER: '2' });
    const setup = apiAt(stack.baseUrl, KEY);
    const campaign = await createCampaign({ name: 'crash between writes' }, undefined, setup);
    const a = await createLink(campaign.id, { referrer_id: 'a' }, undefined, setup);
    const b = await createLink(campaign.id, { referrer_id: 'b' }, undefined, setup);
    expect(await visit(stack.baseUrl, a.referral_code, VISITOR_X)).toBe(302);
    await killedVisit(stack, a.referral_code, VISITOR_X);

    // 2. X visits A again (not unique: the first is written); Y visits B: killed after its marker.
    stack = await startOn(dir, { FAULT_KILL_AFTER_VISITOR_MARKER: '2' });
    expect(await visit(stack.baseUrl, a.referral_code, VISITOR_X)).toBe(302);
    await killedVisit(stack, b.referral_code, VISITOR_Y);

    // 3. Y visits B twice: the first written one is unique, the second is not.
    stack = await startOn(dir);
    expect(await visit(stack.baseUrl, b.referral_code, VISITOR_Y)).toBe(302);
    expect(await visit(stack.baseUrl, b.referral_code, VISITOR_Y)).toBe(302);

    // Four visits were written, two of them first visits in the hour.
    const api = apiAt(stack.baseUrl, KEY);
    const path = `/api/v1/analytics/${campaign.id}`;
    expect(await totalsOnce(api, path, 4)).toMatchObject({ visits: 4, unique_visits: 2 });
    expect(await totalsOnce(api, `${path}?referral_link_id=${a.id}`, 2)).toMatchObject({
      visits: 2,
      unique_visits: 1,
    });
    expect(await totalsOnce(api, `${path}?referral_link_id=${b.id}`, 2)).toMatchObject({
      visits: 2,
      unique_visits: 1,
    });
  });
});
