/**
 * An action committed on its link (endpoints 5 and 12) is fed and queued from the link's stream
 * record, at that record's place, and the action item written from it later is no second event.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { newActionItem } from '../../lib/db/entities/action.ts';
import { linkFromItem, storedLinkAction } from '../../lib/db/entities/link.ts';
import { EVENT_FROM_LINK } from '../../lib/domain/webhook-events.ts';
import { eventRecordsOf } from '../../lib/webhooks/link-action-events.ts';
import { isEventRecord, messageFromStreamRecord } from '../../lib/webhooks/stream.ts';

// What the stack gives every function: the base of each link's share_url in the event. Restored
// after: the unit files share one module registry and environment per worker (vitest.config.ts).
vi.stubEnv('PUBLIC_BASE_URL', 'https://go.example.com');
afterAll(() => vi.unstubAllEnvs());

const link = {
  PK: 'LINK#ABCD2345',
  SK: 'LINK',
  type: 'link',
  tenant: 'acme',
  id: 12,
  created_at: '2026-11-01T00:00:00.000Z',
  referral_code: 'ABCD2345',
  campaign_id: '3f0c6f0e-8a51-4f57-9d7a-2a0f7cbbf0d1',
  campaign_url: 'https://example.com/',
  referrer_id: 'ref-1',
  total_clicks: 4,
  total_referrals: 1,
};
const record = (eventName: string, image: Record<string, unknown>, sequence: string) => ({
  eventName,
  dynamodb: { NewImage: marshall(image, { removeUndefinedValues: true }), SequenceNumber: sequence },
});

describe('events of actions committed on their link', () => {
  it('a link-action record stands for its action item INSERT, at its place; other records pass as they are', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 4 }),
        fc.string({ minLength: 1, maxLength: 30 }),
        (metadata, actionType) => {
          const action = {
            id: 77,
            at: '2026-11-24T10:00:00.000Z',
            action_type: actionType,
            metadata,
            referred_user: null,
          };
          const modify = record('MODIFY', { ...link, last_action: storedLinkAction(action) }, '200');
          const before = record('INSERT', { PK: 'X', SK: 'Y', type: 'bot_visit' }, '100');
          const [first, second] = eventRecordsOf([before, modify]);
          expect(first).toBe(before);
          expect(second!.eventName).toBe('INSERT');
          expect(second!.dynamodb!.SequenceNumber).toBe('200');
          expect(isEventRecord(second!)).toBe(true);
          const body = JSON.parse(String((second!.dynamodb!.NewImage!.event_json as { S?: string }).S));
          expect(body.referral_link.share_url).toBe('https://go.example.com/r/ABCD2345');
          // The same event as the item the consumer writes from this record.
          const { item } = newActionItem(linkFromItem(link), JSON.parse(storedLinkAction(action).json));
          expect(messageFromStreamRecord(second!)).toEqual(
            messageFromStreamRecord(record('INSERT', item, '200')),
          );
        },
      ),
      { numRuns: 50 },
    );
  });

  it('the action item written from the link record is no event record (fed once)', () => {
    const action = {
      id: 5,
      at: '2026-11-24T10:00:00.000Z',
      action_type: 'x',
      metadata: {},
      referred_user: null,
    };
    const { item } = newActionItem(linkFromItem(link), action);
    expect(isEventRecord(record('INSERT', item, '1'))).toBe(true);
    expect(isEventRecord(record('INSERT', { ...item, [EVENT_FROM_LINK]: true }, '2'))).toBe(false);
    expect(
      eventRecordsOf([record('INSERT', { ...item, [EVENT_FROM_LINK]: true }, '2')]).filter(isEventRecord),
    ).toEqual([]);
  });

  it('an unreadable link-action record is passed on as it is, and is no event', () => {
    const broken = record('MODIFY', { ...link, tenant: 7, last_action: { id: 3, json: '{' } }, '9');
    const [out] = eventRecordsOf([broken]);
    expect(out).toBe(broken);
    expect(isEventRecord(out!)).toBe(false);
  });
});
