import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { actionKey } from '../../lib/db/entities/action.ts';
import {
  apiKeyFromItem,
  apiKeyItemKey,
  apiKeyStateOf,
  newApiKeyItem,
} from '../../lib/db/entities/api-key.ts';
import {
  CAMPAIGN_LIST_INDEX,
  campaignFromItem,
  campaignIdOfOrder,
  campaignKey,
  campaignListKeys,
  newCampaignItem,
  parseCampaignPartition,
} from '../../lib/db/entities/campaign.ts';
import { MalformedItemError } from '../../lib/db/entities/decode.ts';
import { idempotencyKey, newIdempotencyItem, storedAnswerOf } from '../../lib/db/entities/idempotency.ts';
import {
  CAMPAIGN_LINKS_INDEX,
  codeReservation,
  indexedLinkFromItem,
  isLinkItem,
  LINK_BY_ID_INDEX,
  type LinkAction,
  linkActionFromItem,
  linkFromItem,
  linkKey,
  newLinkItem,
  REFERRER_LINKS_INDEX,
  storedLinkAction,
} from '../../lib/db/entities/link.ts';
import {
  payoutFromItem,
  payoutItem,
  payoutKey,
  recipientPayoutsPartition,
} from '../../lib/db/entities/payout.ts';
import { referredUserFromItem, referredUserKey } from '../../lib/db/entities/referred-user.ts';
import {
  DUE_REWARDS_INDEX,
  dueOrder,
  dueUpTo,
  RECIPIENT_REWARDS_INDEX,
  REWARD_LIST_ORDER,
  REWARD_STATUS_INDEX,
  recipientPrefix,
  recipientRewardsPartition,
  rewardFromItem,
  rewardItem,
  rewardKey,
  rewardKeyOfId,
  rewardStatusPartition,
} from '../../lib/db/entities/reward.ts';
import { lastIdOf, sequenceKey } from '../../lib/db/entities/sequence.ts';
import { signupVisitorKey } from '../../lib/db/entities/signup-visitor.ts';
import {
  attemptFromItem,
  attemptLogPartition,
  attemptSortKey,
  newAttemptItems,
} from '../../lib/db/entities/webhook-attempt.ts';
import {
  eventFromItem,
  eventLookupKey,
  feedCounterOf,
  feedKey,
  firstFeedSequence,
  formatSequence,
  newEventLookupItem,
  newFeedItem,
  newRedeliveryItem,
  nextFeedCounter,
  SHARD_POSITION_KEEP_MS,
  shardPosition,
  storedEventsFromItem,
} from '../../lib/db/entities/webhook-event.ts';
import { recipientHash } from '../../lib/domain/reward-ids.ts';
import { rewardRulesInput } from '../../lib/domain/reward-rules.ts';
import { rewardsForConversion } from '../../lib/domain/rewards.ts';
import { WEBHOOK_EVENT_TYPES } from '../../lib/domain/webhook-events.ts';
import {
  CAMPAIGN_ITEM_ATTRIBUTES,
  GSI1,
  GSI2,
  GSI3,
  LINK_COUNTER_ATTRIBUTES,
  tableDefinition,
} from '../../lib/table-definition.ts';

const campaignId = '3f0c2a9e-4b1d-4c5e-9f00-0123456789ab';
const now = new Date('2026-11-22T14:05:09.123Z');
const link = newLinkItem({
  tenant: 'acme',
  campaignId: campaignId.toUpperCase(),
  campaignUrl: 'https://example.com/x',
  id: 17,
  code: 'ALICE-SPRING',
  referrerId: 'alice',
  now,
});

describe('the key layout (docs/data-model.md)', () => {
  it('keys every item as the table in docs/data-model.md says', () => {
    expect(campaignKey('acme', campaignId)).toEqual({ PK: `T#acme#C#${campaignId}`, SK: 'CAMPAIGN' });
    expect(referredUserKey('acme', campaignId, 'bob')).toEqual({
      PK: `T#acme#C#${campaignId}`,
      SK: 'RU#bob',
    });
    expect(actionKey('acme', campaignId, 42)).toEqual({
      PK: `T#acme#C#${campaignId}`,
      SK: 'A#0000000000000042',
    });
    expect(linkKey('ALICE-SPRING')).toEqual({ PK: 'LINK#ALICE-SPRING', SK: 'LINK' });
    expect(sequenceKey('link')).toEqual({ PK: 'SEQ#link', SK: 'SEQ' });
    expect(idempotencyKey('acme', 'ab12')).toEqual({ PK: 'IDEM#acme#ab12', SK: 'IDEM' });
    expect(apiKeyItemKey('ff00')).toEqual({ PK: 'APIKEY#ff00', SK: 'APIKEY' });
    expect(feedKey('acme', campaignId, '1795427107903000')).toEqual({
      PK: `T#acme#C#${campaignId}`,
      SK: 'EV#1795427107903000',
    });
    expect(eventLookupKey('acme', 'evt_action_7')).toEqual({ PK: 'T#acme#EVT#evt_action_7', SK: 'EVENT' });
    expect(attemptLogPartition('acme', campaignId)).toBe(`T#acme#C#${campaignId}#WD`);
    expect(attemptLogPartition('acme', campaignId, 'failed')).toBe(`T#acme#C#${campaignId}#WD#failed`);
    expect(attemptSortKey(1795427107903, 'evt_action_7', 3)).toBe('1795427107903#evt_action_7#03');
    expect(signupVisitorKey('acme', campaignId.toUpperCase(), 7, 'vh')).toEqual({
      PK: `SIGNUPVISITOR#acme#${campaignId}#7#vh`,
      SK: 'S',
    });
    const hash = recipientHash('referrer', 'alice');
    expect(hash).toMatch(/^[0-9a-f]{24}$/);
    expect(recipientPrefix('referrer', 'alice')).toBe(`RW#${hash}#`);
    expect(payoutKey('acme', campaignId, 1795427107903, 'po_x')).toEqual({
      PK: `T#acme#C#${campaignId}`,
      SK: 'PO#1795427107903#po_x',
    });
    expect(recipientPayoutsPartition('acme', campaignId, 'alice')).toMatch(
      new RegExp(`^T#acme#C#${campaignId}#PO#[0-9a-f]{24}$`),
    );
    expect(dueOrder(1795427107903, 'rw_x')).toBe('1795427107903#rw_x');
    expect(dueUpTo(1795427107903) > dueOrder(1795427107903, 'rw_zzz')).toBe(true);
  });

  it('keeps a reward where its id says, in its campaign partition, in the due index only while pending', () => {
    const campaign = {
      id: campaignId.toUpperCase(),
      currency: 'USD',
      reward_rules: rewardRulesInput([
        { on: 'conversion', recipient: 'referrer', type: 'percent', amount: 500 },
      ]),
    };
    const sale = {
      id: '9',
      referred_user_id: 'bob',
      referrer_id: 'alice',
      amount: 2_000,
      refunded_amount: 0,
      created_ms: now.getTime(),
    };
    const [reward] = rewardsForConversion(campaign, sale, 0);
    if (!reward) throw new Error('no reward');
    const item = rewardItem('acme', reward, ['rw_adjustment']);
    expect({ PK: item.PK, SK: item.SK }).toEqual(rewardKey('acme', reward.id));
    expect(item.PK).toBe(`T#acme#C#${campaignId}`);
    expect(item.SK.startsWith(recipientPrefix('referrer', 'alice'))).toBe(true);
    expect(item.SK).toMatch(/^RW#[0-9a-f]{24}#[0-9a-f]{24}$/);
    expect(rewardKeyOfId('other', reward.id)?.PK).toBe(`T#other#C#${campaignId}`);
    expect(rewardKeyOfId('acme', 'rw_nope')).toBeUndefined();
    expect(DUE_REWARDS_INDEX).toBe(GSI1);
    expect(item).toMatchObject({ GSI1PK: 'REWARDS_DUE', GSI1SK: dueOrder(reward.available_ms, reward.id) });
    expect(rewardItem('acme', { ...reward, status: 'approved' })).not.toHaveProperty('GSI1PK');
    expect(rewardItem('acme', { ...reward, kind: 'adjustment', amount: -1 })).not.toHaveProperty('GSI1PK');
    expect(rewardFromItem({ ...item })).toEqual({
      reward: { ...reward, campaign_id: campaignId },
      adjustmentIds: ['rw_adjustment'],
    });
    expect(() => rewardFromItem({ ...item, status: 'lost' })).toThrow(MalformedItemError);
    // The lists' keys: a state's partition in GSI3, a recipient's (by id, either kind) and state's
    // in GSI2, both by creation time; a change of state moves the item to the new state's.
    const order = `${String(reward.created_ms).padStart(13, '0')}#${reward.id}`;
    const recipientHashOfId = createHash('sha256').update('alice').digest('hex').slice(0, 24);
    expect(item).toMatchObject({
      GSI3PK: `T#acme#C#${campaignId}#RW#S#pending`,
      GSI3SK: order,
      GSI2PK: `T#acme#C#${campaignId}#RW#R#${recipientHashOfId}#S#pending`,
      GSI2SK: order,
    });
    expect(item.GSI3SK).toMatch(REWARD_LIST_ORDER);
    expect(rewardItem('acme', { ...reward, status: 'paid' })).toMatchObject({
      GSI3PK: rewardStatusPartition('acme', campaignId, 'paid'),
      GSI2PK: recipientRewardsPartition('acme', campaignId, 'alice', 'paid'),
    });
    expect([REWARD_STATUS_INDEX, RECIPIENT_REWARDS_INDEX]).toEqual([GSI3, GSI2]);

    const payout = {
      id: 'po_1',
      campaign_id: campaignId,
      recipient: 'referrer' as const,
      recipient_id: 'alice',
      amount: 100,
      currency: 'USD',
      reward_ids: [reward.id],
      reference: null,
      created_ms: now.getTime(),
    };
    const stored = payoutItem('acme', payout);
    expect(stored).toMatchObject({
      ...payoutKey('acme', campaignId, now.getTime(), 'po_1'),
      GSI3PK: recipientPayoutsPartition('acme', campaignId, 'alice'),
    });
    expect(GSI3.partitionKey in stored).toBe(true);
    expect(payoutFromItem({ ...stored })).toEqual(payout);
  });

  it('writes no webhook item that the stream would take for an event (no `event_type`), but the redelivery request', () => {
    const event = {
      event_id: 'evt_action_7',
      event_type: 'action.created' as const,
      event_time: now.toISOString(),
      event_json: '{"id":7}',
      tenant: 'acme',
      campaign_id: campaignId,
    };
    const sequence = formatSequence(firstFeedSequence(now.getTime()));
    const feed = newFeedItem(event, sequence);
    const lookup = newEventLookupItem(event);
    expect(feed).not.toHaveProperty('event_type');
    expect(lookup).not.toHaveProperty('event_type');
    expect(storedEventsFromItem(feed)).toEqual([{ ...event, sequence }]);
    expect(eventFromItem(lookup)).toEqual(event);
    // A lookup is no feed item: it has no place in the feed.
    expect(() => storedEventsFromItem(lookup)).toThrow();
    for (const item of newAttemptItems('acme', campaignId, {
      id: 'att_1',
      event_id: 'evt_action_7',
      event_type: 'action.created',
      attempt: 1,
      status: 'failed',
      attempted_at: now.toISOString(),
      url: 'https://h.example',
      status_code: 500,
      error: 'HTTP 500',
      duration_ms: 3,
      next_attempt_at: null,
    })) {
      expect(item).not.toHaveProperty('event_type');
      expect(attemptFromItem(item).event_type).toBe('action.created');
    }
    expect(newRedeliveryItem(event, 'n1')).toMatchObject({ event_type: 'action.created', redelivery: 'n1' });
    // Sixteen digits, so the feed's sort keys order as the numbers do.
    expect(formatSequence(firstFeedSequence(now.getTime()))).toMatch(/^\d{16}$/);
    expect(formatSequence(7)).toBe('0000000000000007');
  });

  it("gives a link its three indexes' keys, campaign ids in lower case", () => {
    const order = `${String(now.getTime()).padStart(15, '0')}#${'17'.padStart(16, '0')}`;
    expect(link).toMatchObject({
      [LINK_BY_ID_INDEX.partitionKey]: 'LINKID#17',
      [LINK_BY_ID_INDEX.sortKey]: 'LINK',
      [CAMPAIGN_LINKS_INDEX.partitionKey]: `T#acme#C#${campaignId}#LINKS`,
      [CAMPAIGN_LINKS_INDEX.sortKey]: order,
      [REFERRER_LINKS_INDEX.partitionKey]: `T#acme#C#${campaignId}#R#alice`,
      [REFERRER_LINKS_INDEX.sortKey]: order,
    });
    expect([
      LINK_BY_ID_INDEX.indexName,
      CAMPAIGN_LINKS_INDEX.indexName,
      REFERRER_LINKS_INDEX.indexName,
    ]).toEqual(['GSI1', 'GSI2', 'GSI3']);
  });

  it('gives a campaign its list keys in GSI2, in partitions no link list can have', () => {
    const order = `${String(now.getTime()).padStart(15, '0')}#${campaignId}`;
    expect(campaignListKeys('acme', campaignId.toUpperCase(), now.getTime())).toEqual({
      [CAMPAIGN_LIST_INDEX.partitionKey]: 'T#acme#CAMPAIGNS',
      [CAMPAIGN_LIST_INDEX.sortKey]: order,
    });
    expect(CAMPAIGN_LIST_INDEX).toBe(CAMPAIGN_LINKS_INDEX);
    expect(campaignIdOfOrder(order)).toBe(campaignId);
    expect(campaignIdOfOrder(`${order}x`)).toBeUndefined();
    expect(campaignIdOfOrder(String(link[CAMPAIGN_LINKS_INDEX.sortKey]))).toBeUndefined();
    // Tenant names hold no `#` (TENANT_PATTERN): a campaign list partition has two, a link list four.
    expect(String(link[CAMPAIGN_LINKS_INDEX.partitionKey]).split('#')).toHaveLength(5);
    expect('T#acme#CAMPAIGNS'.split('#')).toHaveLength(3);
  });

  it('reads back the campaign partition a REMOVE record names', () => {
    expect(parseCampaignPartition(campaignKey('acme', campaignId).PK)).toEqual({
      tenant: 'acme',
      campaignId,
    });
    expect(parseCampaignPartition('LINK#X')).toBeUndefined();
  });
});

describe('decoding what is read back', () => {
  it('reads a link through an index without counters (no index copies them), and by key with them', () => {
    // An index copy as DynamoDB returns it: the keys and the projected attributes only.
    const projected = Object.fromEntries(
      ['PK', 'SK', ...GSI2.projectedAttributes].filter((a) => a in link).map((a) => [a, (link as never)[a]]),
    );
    for (const counter of LINK_COUNTER_ATTRIBUTES) {
      for (const gsi of tableDefinition.globalSecondaryIndexes)
        expect(gsi.projectedAttributes).not.toContain(counter);
      expect(projected).not.toHaveProperty(counter);
    }
    const {
      total_clicks: _c,
      total_referrals: _r,
      total_conversions: _v,
      total_revenue: _m,
      ...indexed
    } = linkFromItem({ ...link });
    expect(indexedLinkFromItem(projected)).toEqual(indexed);
    expect(() => linkFromItem(projected)).toThrow(/total_clicks is not a number/);
    expect(linkFromItem({ ...link, total_clicks: 5 }).total_clicks).toBe(5);
  });

  it('decodes a link to the attributes every reader sees, and refuses a malformed one by name', () => {
    expect(linkFromItem({ ...link })).toEqual({
      PK: 'LINK#ALICE-SPRING',
      SK: 'LINK',
      tenant: 'acme',
      id: 17,
      created_at: link.created_at,
      referral_code: 'ALICE-SPRING',
      campaign_id: campaignId,
      campaign_url: 'https://example.com/x',
      referrer_id: 'alice',
      total_clicks: 0,
      total_referrals: 0,
      total_conversions: 0,
      total_revenue: 0,
    });
    // A link written before conversions existed has no conversion counters: zero.
    const { total_conversions: _v, total_revenue: _m, ...older } = link;
    expect(linkFromItem(older)).toMatchObject({ total_conversions: 0, total_revenue: 0 });
    expect(linkFromItem({ ...link, referrer_id: undefined }).referrer_id).toBeNull();
    const { total_clicks: _, ...broken } = link;
    expect(() => linkFromItem(broken)).toThrow(MalformedItemError);
    expect(() => linkFromItem(broken)).toThrow(
      /link item \(LINK#ALICE-SPRING \/ LINK\): total_clicks is not a number/,
    );
    expect(() => linkFromItem({ ...link, id: '17' })).toThrow(/id is not a number/);
  });

  it('tells a link from the code reservation at the same key', () => {
    expect(isLinkItem(link as unknown as Record<string, unknown>)).toBe(true);
    expect(isLinkItem({ ...codeReservation('acme', 'ALICE-SPRING', now) })).toBe(false);
    expect(isLinkItem(undefined)).toBe(false);
  });

  it('reads last_action as JSON text and as the older map', () => {
    const action: LinkAction = {
      id: 5,
      at: now.toISOString(),
      action_type: 'purchase',
      metadata: { amount: 42 },
      referred_user: { id: 3, created_at: link.created_at, referred_user_id: 'bob' },
    };
    expect(linkActionFromItem({ ...link, last_action: storedLinkAction(action) })).toEqual(action);
    expect(linkActionFromItem({ ...link, last_action: action })).toEqual(action);
    expect(() => linkActionFromItem({ ...link, last_action: { id: 5, json: '{' } })).toThrow(
      MalformedItemError,
    );
    expect(() => linkActionFromItem({ ...link, last_action: { ...action, metadata: 'x' } })).toThrow(
      /last_action.metadata is not an object/,
    );
  });

  it('decodes campaigns, referred users, id blocks, stored answers and api keys', () => {
    const campaign = {
      id: campaignId,
      created_at: link.created_at,
      url: 'https://example.com/x',
      name: 'Spring',
      webhook_url: null,
      webhook_secret: null,
      webhook_events: [...WEBHOOK_EVENT_TYPES],
      webhook_status: 'enabled' as const,
      webhook_disabled_reason: null,
      click_ids: true,
      attribution_window_days: 30,
      currency: 'USD',
      reward_rules: [
        {
          id: 'share',
          on: 'conversion' as const,
          recipient: 'referrer' as const,
          type: 'percent' as const,
          amount: 1000,
          first_conversions: 2,
          hold_days: 30,
        },
      ],
      review_signups_per_hour: 7,
    };
    expect(campaignFromItem({ ...newCampaignItem('acme', campaign, now) })).toEqual(campaign);
    // An item of a campaign made before click ids and rewards has the defaults.
    const {
      click_ids: _,
      attribution_window_days: __,
      reward_rule_sets: ___,
      review_signups_per_hour: ____,
      ...older
    } = newCampaignItem('acme', campaign, now);
    expect(campaignFromItem(older)).toEqual({
      ...campaign,
      click_ids: false,
      attribution_window_days: 90,
      reward_rules: [],
      review_signups_per_hour: 20,
    });
    expect(
      campaignFromItem({ ...newCampaignItem('acme', campaign, now), webhook_url: 'https://h.example' }),
    ).toEqual({
      ...campaign,
      webhook_url: 'https://h.example',
    });
    // GSI2's copy of a campaign (its keys and projected attributes), with what the campaign list
    // reads from the item (`CAMPAIGN_ITEM_ATTRIBUTES`), is the whole API object.
    const stored = {
      ...newCampaignItem('acme', campaign, now),
      webhook_url: 'https://h.example',
      webhook_secret: `whsec_${'A'.repeat(43)}=`,
      webhook_events: ['referred_user.created'],
      webhook_status: 'disabled',
      webhook_disabled_reason: 'Every attempt failed for 3 days.',
      webhook_slow_lane_url: 'https://h.example',
      webhook_failing_since: now.toISOString(),
    };
    const indexCopy = Object.fromEntries(
      Object.entries(stored).filter(([k]) =>
        [
          'PK',
          'SK',
          CAMPAIGN_LIST_INDEX.partitionKey,
          CAMPAIGN_LIST_INDEX.sortKey,
          ...CAMPAIGN_LIST_INDEX.projectedAttributes,
        ].includes(k),
      ),
    );
    expect(indexCopy).not.toHaveProperty('webhook_slow_lane_url');
    const fromItem = Object.fromEntries(
      Object.entries(stored).filter(([k]) => (CAMPAIGN_ITEM_ATTRIBUTES as readonly string[]).includes(k)),
    );
    expect(campaignFromItem({ ...indexCopy, ...fromItem })).toEqual(campaignFromItem(stored));
    // Without them, the index copy alone would lose them: the list must read them.
    expect(campaignFromItem(indexCopy)).not.toEqual(campaignFromItem(stored));
    expect(() => campaignFromItem({ id: campaignId })).toThrow(/campaign item .*created_at is not a string/);

    expect(() => referredUserFromItem({ PK: 'p', SK: 's' })).toThrow(MalformedItemError);
    expect(lastIdOf({ last_id: 200 })).toBe(200);
    expect(() => lastIdOf(undefined)).toThrow(/last_id is not a number/);

    const answer = newIdempotencyItem(
      { tenant: 'acme', keyHash: 'ab', requestHash: 'cd' },
      201,
      { ok: true },
      Date.now() / 1000,
    );
    expect(storedAnswerOf(answer)).toEqual({ status: 201, body: '{"ok":true}', requestHash: 'cd' });
    expect(storedAnswerOf({ ...answer, expires_at: 1 })).toBeUndefined();

    const key = newApiKeyItem('acme', 'ff00', link.created_at);
    expect(apiKeyFromItem(key)).toEqual({
      hash: 'ff00',
      tenant: 'acme',
      created_at: link.created_at,
      revoked_at: null,
    });
    expect(apiKeyFromItem({ ...key, revoked_at: null }).revoked_at).toBeNull();
    expect(apiKeyStateOf({ ...key, revoked_at: 'x' })).toEqual({ tenant: 'acme', revoked: true });
    expect(apiKeyStateOf({ PK: 'APIKEY#ff00' })).toBeUndefined();
  });
});

describe("the feed counter's shard positions", () => {
  const hour = 60 * 60 * 1000;
  it('moves the writing shard to its last record and keeps the others until 25 hours after their last write', () => {
    const t0 = Date.UTC(2026, 10, 24);
    const first = nextFeedCounter(undefined, 5, 'shard-a', '100', t0);
    expect(first).toEqual({ sequence: 5, shards: { 'shard-a': { s: '100', at: t0 } } });
    const second = nextFeedCounter(first, 9, 'shard-b', '7', t0 + hour);
    expect(shardPosition(second, 'shard-a')).toBe(100n);
    expect(shardPosition(second, 'shard-b')).toBe(7n);
    expect(shardPosition(second, 'shard-c')).toBe(-1n);
    expect(shardPosition(undefined, 'shard-a')).toBe(-1n);
    // Stream sequence numbers are compared as numbers, not as text ('99' < '100').
    expect(shardPosition(nextFeedCounter(second, 10, 'shard-b', '99', t0 + hour), 'shard-b')).toBe(99n);
    // shard-a last wrote 25 hours ago: no record of it can come again, its position goes.
    const later = nextFeedCounter(second, 12, 'shard-b', '8', t0 + SHARD_POSITION_KEEP_MS);
    expect(Object.keys(later.shards)).toEqual(['shard-b']);
    const stillKept = nextFeedCounter(second, 12, 'shard-b', '8', t0 + SHARD_POSITION_KEEP_MS - 1);
    expect(Object.keys(stillKept.shards).sort()).toEqual(['shard-a', 'shard-b']);
  });

  it('reads a stored counter back, and none from an item without one', () => {
    const counter = nextFeedCounter(undefined, 42, 'shard-a', '1', 0);
    expect(feedCounterOf({ PK: 'x', SK: 'EVSEQ', ...counter })).toEqual(counter);
    // Counters written before the positions existed: no shard has a position yet.
    expect(feedCounterOf({ PK: 'x', SK: 'EVSEQ', sequence: 7 })).toEqual({ sequence: 7, shards: {} });
    expect(feedCounterOf(undefined)).toBeUndefined();
    expect(feedCounterOf({ PK: 'x', SK: 'EVSEQ' })).toBeUndefined();
  });
});
