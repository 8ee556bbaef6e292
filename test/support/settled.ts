/**
 * Reads of what the run's table stream counts (the rollups reader, `functions/stream/
 * feed-and-rollups.ts`) once the reader has handled every record written before them, so that a
 * count read is final rather than "not yet changed". The barrier is a counted visit of a marker
 * link of this worker's own, written after those records: the local poller hands a shard's
 * records over in order, a failed batch again before any later record (as Lambda does), and the
 * run's stack writes to one shard (DynamoDB Local's stream has one open shard per table). Once
 * that visit shows in the marker's `total_clicks`, every earlier record has been counted, or
 * passed over as a crawler's visit is, for good.
 */

import { eventually, waitUntil } from '../../tools/wait.ts';
import { api } from './api.ts';
import { BROWSER_UA, createCampaign, createLink } from './records.ts';
import { linkItem } from './table.ts';

let marker: Promise<string> | undefined;
/** The barrier being set up or waited for; callers that come before its visit is sent join it. */
let round: { visitSent: boolean; done: Promise<void> } | undefined;

const clicksOf = async (code: string) => Number((await linkItem(code))?.total_clicks ?? Number.NaN);

async function markerVisitCounted(current: { visitSent: boolean }, timeoutMs: number): Promise<void> {
  marker ??= (async () => {
    const campaign = await createCampaign({ name: 'stream barrier' });
    return (await createLink(campaign.id)).referral_code;
  })();
  const code = await marker;
  const before = await clicksOf(code);
  current.visitSent = true;
  const visit = await api('GET', `/r/${code}`, { key: null, headers: { 'user-agent': BROWSER_UA } });
  if (visit.status !== 302) throw new Error(`the stream barrier's visit answered ${visit.status}`);
  await eventually(
    "the stream barrier's visit counted",
    async () => ((await clicksOf(code)) > (before || 0) ? true : undefined),
    timeoutMs,
    50,
  );
}

/** Resolves once the rollups reader has handled every record written before the call. */
export function rollupsCaughtUp(timeoutMs = 60_000): Promise<void> {
  if (round && !round.visitSent) return round.done;
  const previous = round?.done.catch(() => undefined);
  const next = { visitSent: false, done: Promise.resolve() };
  next.done = (async () => {
    await previous;
    await markerVisitCounted(next, timeoutMs);
  })();
  round = next;
  return next.done;
}

/**
 * A link's stored `total_clicks` once the rollups have counted its visits: waits until it equals
 * `expected`, then until the reader has handled everything written so far, and reads it again,
 * so a visit counted twice (or one that should not count at all) shows as a different value. The
 * caller asserts the value returned.
 */
export async function settledClicks(code: string, expected: number, timeoutMs = 10_000): Promise<number> {
  await waitUntil(async () => (await clicksOf(code)) === expected, timeoutMs, 50);
  await rollupsCaughtUp();
  return clicksOf(code);
}
