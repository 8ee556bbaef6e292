/**
 * The events feed holds each event once, in commit order, whatever the stream consumer is handed
 * again: Lambda retries a stream batch from its first failed record, and the local poller re-reads
 * from its checkpoint after a restart. Events come from the real writers through the API; the
 * replay calls the consumer's own feed writer (lib/webhooks/feed.ts) in process with the stream
 * records of those events, as a retried batch would carry them.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { api, TENANT_A } from '../support/api.ts';
import { createCampaign, createLink, createLinkAction } from '../support/records.ts';
import { campaignItems, configureInProcessHandlers } from '../support/table.ts';
import { eventually } from '../support/wait.ts';

configureInProcessHandlers();

describe('events feed: exactly once under replayed stream batches', () => {
  it('a batch handed again, whole or in part, adds nothing and keeps the order', async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const campaign = await createCampaign({ name: 'feed replay' });
    const { referral_code: code } = await createLink(campaign.id);
    const actions = [];
    for (let i = 0; i < 4; i++) actions.push(await createLinkAction(code, `replay-${i}`));
    const ids = actions.map((a) => `evt_action_${a.id}`);
    const feed = async () =>
      (await api('GET', `/api/v1/events/${campaign.id}`)).body.map((e: { id: string }) => e.id);
    await eventually('four events in the feed', async () => ((await feed()).length === 4 ? true : undefined));

    // The stream records of those events: INSERTs of their items, as the table holds them.
    const items = (await campaignItems(TENANT_A.tenant, campaign.id, 'A#')).filter((i) =>
      ids.includes(String(i.event_id)),
    );
    expect(items).toHaveLength(4);
    const records = items.map((item, n) => ({
      eventName: 'INSERT',
      dynamodb: { NewImage: marshall(item, { removeUndefinedValues: true }), SequenceNumber: String(n + 1) },
    }));
    const whole = await recordFeedRecords(records);
    expect(whole).toEqual({ written: 0, failedSequenceNumbers: [] });
    const part = await recordFeedRecords(records.slice(2));
    expect(part.written).toBe(0);
    expect(await feed()).toEqual(ids);
  });
});
