/**
 * The local stream poller's filter matching (`lib/local/stream-filters.ts`) over the mappings' real
 * patterns (`lib/webhooks/stream-filter.ts`, `lib/db/purge-filter.ts`) and records shaped as the
 * table's stream delivers them (NEW_IMAGE: REMOVEs carry keys only), so that the handlers can
 * trust the local stack to hand them what the deployed mappings would, and nothing else.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { PURGE_RECORD_FILTER } from '../../lib/db/purge-filter.ts';
import { compileFilters } from '../../lib/local/stream-filters.ts';
import {
  BOT_VISIT_RECORD_FILTER,
  EVENT_RECORD_FILTER,
  FEED_AND_ROLLUP_FILTERS,
  LINK_ACTION_RECORD_FILTER,
  STREAM_CONSUMER_FILTERS,
} from '../../lib/webhooks/stream-filter.ts';

const CAMPAIGN = '3f0c6f0e-8a51-4f57-9d7a-2a0f7cbbf0d1';
const PK = `T#acme#C#${CAMPAIGN}`;

function record(eventName: 'INSERT' | 'MODIFY' | 'REMOVE', item: Record<string, unknown>): DynamoDBRecord {
  const keys = { PK: item.PK, SK: item.SK };
  return {
    eventID: '1b2c',
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'ddblocal',
    dynamodb: {
      ApproximateCreationDateTime: 1_795_785_120,
      Keys: marshall(keys) as never,
      ...(eventName === 'REMOVE'
        ? {}
        : { NewImage: marshall(item, { removeUndefinedValues: true }) as never }),
      SequenceNumber: '000000000000000000042',
      SizeBytes: 310,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

const eventAttributes = (type: string, id: string) => ({
  event_id: id,
  event_type: type,
  event_time: '2026-11-27T13:15:24.526Z',
  event_json: '{"id":7}',
  tenant: 'acme',
  campaign_id: CAMPAIGN,
});
const action = {
  PK,
  SK: 'A#0000000000000007',
  type: 'action',
  link_code: 'ABCD2345',
  ...eventAttributes('action.created', `evt_action_7_${CAMPAIGN}`),
};
const visit = { ...action, PK: `V#acme#C#${CAMPAIGN}#3`, visit: { unique: true } };
const fromLink = { ...action, event_from_link: true };
const referredUser = {
  PK,
  SK: 'U#member-1',
  type: 'referred_user',
  ...eventAttributes('referred_user.created', 'evt_referred_user_12'),
};
const testEvent = { PK, SK: 'W#TEST#1', ...eventAttributes('webhook.test', 'evt_test_1') };
const link = {
  PK: 'LINK#ABCD2345',
  SK: 'LINK',
  type: 'link',
  tenant: 'acme',
  id: 4,
  campaign_id: CAMPAIGN,
  referrer_id: null,
  total_clicks: 3,
  total_referrals: 1,
};
const linkWithAction = { ...link, last_action: { id: 7, json: '{"id":7,"action_type":"signup"}' } };
const botVisit = {
  PK: `V#acme#C#${CAMPAIGN}#11`,
  SK: 'B#001795785124526#q1w2e3r4',
  type: 'bot_visit',
  tenant: 'acme',
  campaign_id: CAMPAIGN,
  link_id: 4,
  link_code: 'ABCD2345',
  referrer_id: null,
  at: '2026-11-27T13:15:24.526Z',
  expires_at: 1_798_377_124,
};
const campaign = { PK, SK: 'CAMPAIGN', type: 'campaign', name: 'Spring', url: 'https://example.com' };

// [what, record, passes the webhook mapping, passes the feed-and-rollups mapping]
const cases: Array<[string, DynamoDBRecord, boolean, boolean]> = [
  ['an action INSERT', record('INSERT', action), true, true],
  ['a visit INSERT (an action in a visit partition)', record('INSERT', visit), true, true],
  ['an action INSERT written from its link record', record('INSERT', fromLink), true, true],
  ['a referred user INSERT', record('INSERT', referredUser), true, true],
  ['a test event INSERT', record('INSERT', testEvent), true, true],
  ['an action MODIFY', record('MODIFY', action), false, false],
  ['an action REMOVE (purge)', record('REMOVE', action), false, false],
  ['a link MODIFY carrying its last action', record('MODIFY', linkWithAction), true, true],
  ['a link MODIFY without an action (a counter)', record('MODIFY', link), false, false],
  ['a link INSERT carrying an action', record('INSERT', linkWithAction), false, false],
  [
    'a link MODIFY whose last_action has no id',
    record('MODIFY', { ...link, last_action: { json: '{}' } }),
    false,
    false,
  ],
  ['a link MODIFY whose last_action is text', record('MODIFY', { ...link, last_action: '7' }), false, false],
  ['a link REMOVE', record('REMOVE', link), false, false],
  ['a bot visit INSERT', record('INSERT', botVisit), false, true],
  ['a bot visit REMOVE (TTL)', record('REMOVE', botVisit), false, false],
  ['a bot visit MODIFY', record('MODIFY', botVisit), false, false],
  ['an INSERT of another type', record('INSERT', { ...botVisit, type: 'bot_visitor' }), false, false],
  ['a campaign REMOVE', record('REMOVE', campaign), false, true],
  ['a campaign INSERT', record('INSERT', campaign), false, false],
  ['a campaign MODIFY', record('MODIFY', campaign), false, false],
  ['a REMOVE of another SK', record('REMOVE', { ...campaign, SK: 'CAMPAIGNS' }), false, false],
];

describe("the mappings' filters, as the local poller applies them", () => {
  const webhooks = compileFilters(STREAM_CONSUMER_FILTERS);
  const feedAndRollups = compileFilters(FEED_AND_ROLLUP_FILTERS);

  it.each(cases)('%s', (_, r, toWebhooks, toFeedAndRollups) => {
    expect(webhooks(r)).toBe(toWebhooks);
    expect(feedAndRollups(r)).toBe(toFeedAndRollups);
  });

  it('each pattern on its own passes its kind of record only', () => {
    const only = (pattern: unknown) => {
      const matches = compileFilters([pattern]);
      return cases.filter(([, r]) => matches(r)).map(([what]) => what);
    };
    expect(only(EVENT_RECORD_FILTER)).toEqual([
      'an action INSERT',
      'a visit INSERT (an action in a visit partition)',
      'an action INSERT written from its link record',
      'a referred user INSERT',
      'a test event INSERT',
    ]);
    expect(only(LINK_ACTION_RECORD_FILTER)).toEqual(['a link MODIFY carrying its last action']);
    expect(only(BOT_VISIT_RECORD_FILTER)).toEqual(['a bot visit INSERT']);
    expect(only(PURGE_RECORD_FILTER)).toEqual(['a campaign REMOVE']);
  });

  it('passes every record without filters; an empty list of them is refused', () => {
    expect(cases.every(([, r]) => compileFilters(undefined)(r))).toBe(true);
    expect(() => compileFilters([])).toThrow(/an empty list/);
  });
});

describe('the matching itself', () => {
  const image = (attributes: Record<string, unknown>) => ({
    eventName: 'INSERT',
    dynamodb: { NewImage: attributes },
  });

  it('exists looks at leaves: present true, absent false, an object is not a leaf', () => {
    const exists = compileFilters([{ dynamodb: { NewImage: { a: { S: [{ exists: true }] } } } }]);
    const absent = compileFilters([{ dynamodb: { NewImage: { a: [{ exists: false }] } } }]);
    expect(exists(image({ a: { S: 'x' } }))).toBe(true);
    expect(exists(image({ a: { N: '1' } }))).toBe(false);
    expect(exists(image({}))).toBe(false);
    expect(absent(image({}))).toBe(true);
    expect(absent(image({ a: { S: 'x' } }))).toBe(true);
    expect(absent({ eventName: 'REMOVE', dynamodb: {} })).toBe(true);
    expect(compileFilters([{ dynamodb: { NewImage: [{ exists: true }] } }])(image({}))).toBe(false);
  });

  it('an exact value matches equal strings, or one element of a set', () => {
    const exact = compileFilters([
      { dynamodb: { NewImage: { tags: { SS: ['b'] } } }, eventName: ['INSERT'] },
    ]);
    expect(exact(image({ tags: { SS: ['a', 'b'] } }))).toBe(true);
    expect(exact(image({ tags: { SS: ['a'] } }))).toBe(false);
    expect(exact({ ...image({ tags: { SS: ['b'] } }), eventName: 'MODIFY' })).toBe(false);
  });

  it.each([
    ['prefix', [{ eventName: [{ prefix: 'INS' }] }]],
    ['anything-but', [{ eventName: [{ 'anything-but': ['REMOVE'] }] }]],
    ['numeric', [{ dynamodb: { NewImage: { n: { N: [{ numeric: ['>', 1] }] } } } }]],
    ['a number', [{ dynamodb: { NewImage: { n: { N: [1] } } } }]],
    ['a boolean', [{ dynamodb: { NewImage: { b: { BOOL: [true] } } } }]],
    ['null', [{ eventName: [null] }]],
    ['exists with another key', [{ eventName: [{ exists: true, prefix: 'I' }] }]],
    ['an empty list', [{ eventName: [] }]],
    ['an empty pattern', [{}]],
    ['a pattern that is a list', [['INSERT']]],
  ])('throws on what it does not implement: %s', (_, patterns) => {
    expect(() => compileFilters(patterns)).toThrow(/stream filter filters\[0\]/);
  });
});
