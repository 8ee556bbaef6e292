/**
 * Which stream records the rollups count, and as what (`contributionOf`): a record the consumer
 * cannot read is never counted and never throws, since a throw would hold the whole shard back.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contributionOf } from '../../lib/analytics/contributions.ts';

const link = {
  id: 7,
  referral_code: 'ABCD2345',
  referrer_id: 'alice',
  referral_link: 'https://x.example/?rfa=ABCD2345',
};
const insert = (item: Record<string, unknown>, seq = '100') => ({
  eventName: 'INSERT',
  dynamodb: {
    NewImage: marshall(item, { removeUndefinedValues: true }) as Record<string, unknown>,
    SequenceNumber: seq,
  },
});
const base = { tenant: 't', campaign_id: 'c', event_time: '2026-11-23T10:00:00.000Z' };
const action = (type: string, extra: Record<string, unknown> = {}) =>
  insert({
    ...base,
    event_type: 'action.created',
    event_json: JSON.stringify({ action_type: type, referral_link: link }),
    ...extra,
  });

describe('contributionOf', () => {
  it('a visit of /r (unique or not), an API action, an API action of type visit, a signup, a bot visit', () => {
    expect(contributionOf(action('visit', { visit: { unique: true } }))).toMatchObject({
      kind: 'visit',
      unique: true,
      countsClick: true,
    });
    expect(contributionOf(action('visit', { visit: { unique: false } }))).toMatchObject({
      kind: 'visit',
      unique: false,
      countsClick: true,
    });
    expect(contributionOf(action('purchase'))).toMatchObject({
      kind: 'action',
      actionType: 'purchase',
      countsClick: false,
    });
    expect(contributionOf(action('visit'))).toMatchObject({
      kind: 'visit',
      unique: false,
      countsClick: false,
    });
    const signup = insert({
      ...base,
      event_type: 'referred_user.created',
      event_json: JSON.stringify({ referral_link: link }),
    });
    expect(contributionOf(signup)).toMatchObject({
      kind: 'referred_user',
      link: { id: 7, referrerId: 'alice' },
    });
    const bot = insert({
      ...base,
      type: 'bot_visit',
      link_id: 7,
      link_code: 'ABCD2345',
      referrer_id: null,
      at: base.event_time,
    });
    expect(contributionOf(bot)).toMatchObject({ kind: 'bot_visit', link: { id: 7, referrerId: null } });
    expect(contributionOf(action('purchase'))?.atMs).toBe(Date.parse(base.event_time));
  });

  it('not counted: redeliveries, MODIFYs, feed items, items without tenant or link', () => {
    expect(contributionOf(action('purchase', { redelivery: 'r1' }))).toBeUndefined();
    expect(contributionOf({ ...action('purchase'), eventName: 'MODIFY' })).toBeUndefined();
    expect(contributionOf(insert({ ...base, evt_type: 'action.created', evt_json: '{}' }))).toBeUndefined();
    expect(contributionOf(insert({ event_type: 'action.created', event_json: '{}' }))).toBeUndefined();
    expect(
      contributionOf(insert({ ...base, event_type: 'action.created', event_json: '{"action_type":"x"}' })),
    ).toBeUndefined();
  });

  it('any image at all: undefined or a contribution, never a throw', () => {
    const value = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.dictionary(fc.string(), fc.string()),
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            tenant: value,
            campaign_id: value,
            type: fc.oneof(value, fc.constant('bot_visit')),
            event_type: fc.oneof(value, fc.constantFrom('action.created', 'referred_user.created')),
            event_json: fc.oneof(
              fc.string(),
              fc.json(),
              fc.constant(JSON.stringify({ action_type: 'x', referral_link: link })),
            ),
            event_time: fc.oneof(fc.string(), fc.constant(base.event_time)),
            visit: value,
            link_id: value,
            link_code: value,
            at: value,
          },
          { requiredKeys: [] },
        ),
        (image) => {
          const c = contributionOf(insert(image));
          if (c !== undefined) {
            expect(typeof c.tenant).toBe('string');
            expect(Number.isFinite(c.atMs)).toBe(true);
            expect(Number.isInteger(c.link.id)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
