/**
 * The events feed's items: several events of one campaign packed into one item (deflated), read
 * back exactly, split by size, and the items written before packing still read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MalformedItemError } from '../../lib/db/entities/decode.ts';
import {
  eventIdsOfFeedItem,
  FEED_PACK_MAX_BYTES,
  feedPacks,
  formatSequence,
  lastSequenceOf,
  newFeedItem,
  newFeedPackItem,
  storedEventsFromItem,
} from '../../lib/db/entities/webhook-event.ts';
import type { EventAttributes } from '../../lib/domain/webhook-events.ts';

const tenant = 'acme';
const campaignId = '3f0c2a9e-4b1d-4c5e-9f00-0123456789ab';

const eventArb: fc.Arbitrary<EventAttributes> = fc.record({
  event_id: fc.oneof(
    fc.nat().map((n) => `evt_action_${n}`),
    fc.nat().map((n) => `evt_referred_user_${n}`),
  ),
  event_type: fc.constantFrom('action.created' as const, 'referred_user.created' as const),
  event_time: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  // Any text a metadata value may hold, unpaired surrogates and NULs included, as JSON.
  event_json: fc.dictionary(fc.string(), fc.string({ unit: 'binary' })).map((o) => JSON.stringify(o)),
  tenant: fc.constant(tenant),
  campaign_id: fc.constant(campaignId),
});

describe('feed items that pack events', () => {
  it('give back exactly the events packed, in order, numbered from the first sequence', () => {
    fc.assert(
      fc.property(
        fc.array(eventArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 8e15 }),
        (events, first) => {
          const item = newFeedPackItem(events, first);
          expect(item).not.toHaveProperty('event_type'); // the stream's filter would take it for an event
          expect(item.SK).toBe(`EV#${formatSequence(first + events.length - 1)}`);
          expect(lastSequenceOf(item)).toBe(first + events.length - 1);
          expect(storedEventsFromItem(item)).toEqual(
            events.map((e, i) => ({ ...e, sequence: formatSequence(first + i) })),
          );
          expect(eventIdsOfFeedItem(item)).toEqual(events.map((e) => e.event_id));
        },
      ),
    );
  });

  it('are a few hundred bytes for a burst of visits of one campaign (what makes them cheap)', () => {
    const visits = Array.from({ length: 98 }, (_, i) => ({
      event_id: `evt_action_${1000 + i}`,
      event_type: 'action.created' as const,
      event_time: new Date(1_795_000_000_000 + i * 7).toISOString(),
      event_json: JSON.stringify({
        id: 1000 + i,
        action_type: 'visit',
        referral_link_id: 17 + (i % 5),
        referral_code: `CODE-${i % 5}`,
        referrer_id: `referrer-${i % 5}`,
        metadata: {
          user_agent: `Mozilla/5.0 (X11; Linux x86_64) Chrome/13${i % 9}.0`,
          referer: 'https://news.example.org/',
        },
        at: new Date(1_795_000_000_000 + i * 7).toISOString(),
        referred_user: null,
        total_clicks: 500 + i,
      }),
      tenant,
      campaign_id: campaignId,
    }));
    const packed = newFeedPackItem(visits, 1).evz.byteLength;
    const oneByOne = visits.reduce((a, v) => a + v.event_json.length, 0);
    expect(packed).toBeLessThan(oneByOne / 4);
  });

  it('split a run of events by size: in order, each pack within the limit unless one event alone is over it', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 30 }),
        (sizes) => {
          const records = sizes.map((n, i) => ({
            i,
            event: {
              event_id: `evt_action_${i}`,
              event_type: 'action.created' as const,
              event_time: '2026-11-24T00:00:00.000Z',
              event_json: JSON.stringify('x'.repeat(n)),
              tenant,
              campaign_id: campaignId,
            },
          }));
          const packs = feedPacks(records);
          expect(packs.flat().map((r) => r.i)).toEqual(records.map((r) => r.i));
          for (const pack of packs) {
            expect(pack.length).toBeGreaterThan(0);
            const raw = Buffer.byteLength(
              JSON.stringify(
                pack.map((r) => [
                  r.event.event_id,
                  r.event.event_type,
                  r.event.event_time,
                  r.event.event_json,
                ]),
              ),
            );
            if (pack.length > 1) expect(raw).toBeLessThanOrEqual(FEED_PACK_MAX_BYTES);
            // Whatever the split, an item stays under DynamoDB's 400 KB.
            if (pack.length > 1)
              expect(
                newFeedPackItem(
                  pack.map((r) => r.event),
                  1,
                ).evz.byteLength,
              ).toBeLessThan(400_000);
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('read the items written before packing, one event each at the sequence of their key', () => {
    const event = {
      event_id: 'evt_action_7',
      event_type: 'action.created' as const,
      event_time: '2026-11-22T14:05:09.123Z',
      event_json: '{"id":7}',
      tenant,
      campaign_id: campaignId,
    };
    const item = newFeedItem(event, formatSequence(1795427107903000));
    expect(storedEventsFromItem(item)).toEqual([{ ...event, sequence: '1795427107903000' }]);
    expect(eventIdsOfFeedItem(item)).toEqual(['evt_action_7']);
  });

  it('refuse an item whose events do not match its sequences, rather than number them wrongly', () => {
    const events = [1, 2, 3].map((n) => ({
      event_id: `evt_action_${n}`,
      event_type: 'action.created' as const,
      event_time: '2026-11-24T00:00:00.000Z',
      event_json: '{}',
      tenant,
      campaign_id: campaignId,
    }));
    const item = newFeedPackItem(events, 10);
    expect(() => storedEventsFromItem({ ...item, first: 11 })).toThrow(MalformedItemError);
    expect(() => storedEventsFromItem({ ...item, first: 13 })).toThrow(MalformedItemError);
    expect(() => storedEventsFromItem({ ...item, evz: 'not bytes' })).toThrow(MalformedItemError);
  });
});
