/**
 * The events feed read from items that pack several events each (`lib/db/webhook-events.ts`,
 * `listFeed`): whatever the pack sizes, the page size and the gaps in the sequences (where a
 * campaign's feed counter started, and the one-event items written before packing below it),
 * reading every page through the API gives every event once, in order; a poll cursor then yields
 * exactly what was written after. The items are written straight into DynamoDB Local with the feed
 * writer's own builders, so the layouts that only time makes (old items, a counter started late)
 * are there at once.
 *
 * On a stack of its own: its pages, hundreds of requests per generated case, would queue the other
 * files' requests behind them in the shared stack's DynamoDB Local (`own-stack.ts`).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatSequence, newFeedItem, newFeedPackItem } from '../../lib/db/entities/webhook-event.ts';
import type { EventAttributes } from '../../lib/domain/webhook-events.ts';
import { eventually } from '../../tools/wait.ts';
import { api, TENANT_A } from '../support/api.ts';
import { stackOfItsOwn } from '../support/own-stack.ts';
import { createCampaign, createLink, createLinkAction } from '../support/records.ts';
import { putItems } from '../support/table.ts';

// biome-ignore lint/suspicious/noExplicitAny: the tests read a few fields of known responses
type Json = any;

stackOfItsOwn();

/** A real action's webhook data (what the OpenAPI document says an event holds), the events' template. */
let template: Json;
beforeAll(async () => {
  const campaign = await createCampaign({ name: 'feed packs template' });
  const { referral_code: code } = await createLink(campaign.id);
  await createLinkAction(code, 'template');
  template = await eventually('the template action in the feed', async () => {
    const res = await api('GET', `/api/v1/events/${campaign.id}`);
    return res.body[0]?.data;
  });
});
const dataOf = (id: number, metadata: Record<string, unknown>) =>
  JSON.stringify({ ...template, id, metadata });

/** Every page of a campaign's feed from `cursor`, as a client reads it: the events' ids, the pages' sizes, the last poll cursor. */
async function readAll(campaignId: string, limit: number, cursor?: string) {
  const ids: string[] = [];
  const sizes: number[] = [];
  let next = cursor;
  let poll = '';
  for (;;) {
    const res = await api(
      'GET',
      `/api/v1/events/${campaignId}?limit=${limit}${next ? `&cursor=${next}` : ''}`,
    );
    expect(res.status).toBe(200);
    ids.push(...res.body.map((e: Json) => e.id));
    sizes.push(res.body.length);
    poll = res.headers.get('x-poll-cursor')!;
    next = res.headers.get('x-next-cursor') ?? undefined;
    if (!next) return { ids, sizes, poll };
    expect(sizes.length).toBeLessThan(500);
  }
}

describe('events feed over packed items', () => {
  it('pages through any mix of packs and older one-event items exactly once, in order, and polls only what came after', async () => {
    await fc.assert(
      fc.asyncProperty(
        // One-event items written before packing (their sequences the writer's clock, with gaps)…
        fc.oneof(fc.constant([]), fc.array(fc.integer({ min: 1, max: 5_000 }), { maxLength: 12 })),
        // …then a feed counter started above them, and the packs of its transactions.
        fc.integer({ min: 1, max: 1e9 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { maxLength: 12 }),
        fc.integer({ min: 1, max: 120 }),
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 4 }),
        async (oldGaps, counterGap, packSizes, limit, laterPacks) => {
          const campaign = await createCampaign({ name: 'feed packs' });
          let n = 0;
          const eventOf = (): EventAttributes => ({
            event_id: `evt_action_${++n}`,
            event_type: 'action.created',
            event_time: new Date(1_795_000_000_000 + n).toISOString(),
            event_json: dataOf(n, { note: 'é'.repeat(n % 7) }),
            tenant: TENANT_A.tenant,
            campaign_id: campaign.id,
          });
          const items: object[] = [];
          let sequence = 1_700_000_000_000_000;
          for (const gap of oldGaps) {
            sequence += gap;
            items.push(newFeedItem(eventOf(), formatSequence(sequence)));
          }
          sequence += counterGap;
          const pack = (size: number) => {
            const item = newFeedPackItem(Array.from({ length: size }, eventOf), sequence + 1);
            sequence += size;
            return item;
          };
          for (const size of packSizes) items.push(pack(size));
          await putItems(items);

          const before = n;
          const all = await readAll(campaign.id, limit);
          expect(all.ids).toEqual(Array.from({ length: before }, (_, i) => `evt_action_${i + 1}`));
          for (const size of all.sizes) expect(size).toBeLessThanOrEqual(limit);
          // A page reads across 7 jumps in the sequences (8 rounds of reads): with fewer, only the last page is short.
          if (oldGaps.length + 1 <= 7) for (const size of all.sizes.slice(0, -1)) expect(size).toBe(limit);

          // Polled later, the last page's poll cursor yields exactly what was written since.
          const idle = await readAll(campaign.id, limit, all.poll);
          expect(idle.ids).toEqual([]);
          await putItems(laterPacks.map(pack));
          const polled = await readAll(campaign.id, limit, all.poll);
          expect(polled.ids).toEqual(
            Array.from({ length: n - before }, (_, i) => `evt_action_${before + i + 1}`),
          );
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);

  it('gives back the events exactly as the webhook bodies, whatever their text', async () => {
    const campaign = await createCampaign({ name: 'feed pack text' });
    const texts = [
      '',
      'plain',
      '"quoted" \\ back',
      '\u0000\u001f controls',
      '😀 emoji',
      '\ud800 lone surrogate',
    ];
    const events = texts.map((t, i) => ({
      event_id: `evt_action_${i + 1}`,
      event_type: 'action.created' as const,
      event_time: new Date(1_795_000_000_000 + i).toISOString(),
      event_json: dataOf(i + 1, { t }),
      tenant: TENANT_A.tenant,
      campaign_id: campaign.id,
    }));
    await putItems([newFeedPackItem(events, 1_795_000_000_000_001)]);
    const res = await api('GET', `/api/v1/events/${campaign.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      events.map((e) => ({
        id: e.event_id,
        type: e.event_type,
        timestamp: e.event_time,
        campaign_id: campaign.id,
        data: JSON.parse(e.event_json),
      })),
    );
  });
});
