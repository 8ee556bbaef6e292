/**
 * The events feed holds each event once, in commit order, whatever the stream consumer is handed
 * again: Lambda retries a stream batch from its first failed record, and the local poller re-reads
 * from its checkpoint after a restart. Events come from the real writers through the API; the
 * replay calls the consumer's own feed writer (lib/webhooks/feed.ts) in process with the stream
 * records of those events, as a retried batch would carry them.
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { describe, expect, it } from 'vitest';
import { api, TENANT_A } from '../support/api.ts';
import { createCampaign, createLink, createLinkAction } from '../support/records.ts';
import { campaignItems, configureInProcessHandlers, table } from '../support/table.ts';
import { eventually, mapLimit } from '../support/wait.ts';

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

/**
 * A campaign with one real action, and events of it as the stream consumer hands them to the
 * feed writer: that action's webhook data under ids of their own.
 */
async function campaignWithEvents(name: string) {
  const campaign = await createCampaign({ name });
  const { referral_code: code } = await createLink(campaign.id);
  const action = await createLinkAction(code, 'template');
  const real = await eventually('the action in the feed', async () => {
    const body = (await api('GET', `/api/v1/events/${campaign.id}`)).body as Array<{
      id: string;
      data: object;
    }>;
    return body.find((e) => e.id === `evt_action_${action.id}`);
  });
  const eventOf = (id: string) => ({
    event_id: id,
    event_type: 'action.created' as const,
    event_time: new Date().toISOString(),
    event_json: JSON.stringify(real.data),
    tenant: TENANT_A.tenant,
    campaign_id: campaign.id,
  });
  return { campaign, eventOf, first: real.id };
}

describe('events feed: numbered in the order of commit, whoever writes it', () => {
  it('six writers of one campaign at once (one per stream shard): a poller following its cursor misses nothing', async () => {
    const { recordFeedEvents } = await import('../../lib/db/webhook-events.ts');
    const { campaign, eventOf, first } = await campaignWithEvents('feed writers');
    const written: string[] = [first];
    let writing = true;
    const writers = mapLimit(Array.from({ length: 6 }), 6, async (_, w) => {
      for (let chunk = 0; chunk < 12; chunk++) {
        const events = Array.from({ length: 1 + ((w + chunk) % 4) }, (_, i) =>
          eventOf(`evt_w${w}_${chunk}_${i}`),
        );
        expect(await recordFeedEvents(events)).toBe(events.length);
        written.push(...events.map((e) => e.event_id));
      }
    }).finally(() => {
      writing = false;
    });
    // A consumer polling the pull feed as the contract tells it: keep the last poll cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    const poll = async () => {
      const res = await api(
        'GET',
        `/api/v1/events/${campaign.id}?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.map((e: { id: string }) => e.id));
      cursor = res.headers.get('x-poll-cursor') ?? cursor;
      return res.body.length;
    };
    while (writing) await poll();
    await writers;
    while ((await poll()) > 0);
    expect(seen).toHaveLength(written.length);
    expect(new Set(seen)).toEqual(new Set(written));
    // And a fresh read lists them in the same order the poller met them.
    const all: string[] = [];
    let next: string | undefined;
    do {
      const res = await api('GET', `/api/v1/events/${campaign.id}?limit=100${next ? `&cursor=${next}` : ''}`);
      all.push(...res.body.map((e: { id: string }) => e.id));
      next = res.headers.get('x-next-cursor') ?? undefined;
    } while (next);
    expect(all).toEqual(seen);
  });

  it('a counter another container moved: the writer goes on after the value it holds, never below', async () => {
    const { recordFeedEvents } = await import('../../lib/db/webhook-events.ts');
    const { feedSequenceKey } = await import('../../lib/db/entities/webhook-event.ts');
    const { campaign, eventOf, first } = await campaignWithEvents('feed counter moved');
    const { db, name } = table();
    const key = feedSequenceKey(TENANT_A.tenant, campaign.id);
    expect(await recordFeedEvents([eventOf('evt_here_1')])).toBe(1);
    const mine = (await db.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item!;
    // Another container wrote 1,000 events meanwhile: the counter is far past what this one knows.
    const elsewhere = Number(mine.sequence) + 1000;
    await db.send(new PutCommand({ TableName: name, Item: { ...mine, sequence: elsewhere } }));
    expect(await recordFeedEvents([eventOf('evt_here_2'), eventOf('evt_here_3')])).toBe(2);
    const feed = await campaignItems(TENANT_A.tenant, campaign.id, 'EV#');
    expect(feed.map((i) => [i.evt_id, Number(String(i.SK).slice(3))])).toEqual([
      [first, Number(mine.sequence) - 1],
      ['evt_here_1', Number(mine.sequence)],
      ['evt_here_2', elsewhere + 1],
      ['evt_here_3', elsewhere + 2],
    ]);
    const after = (await db.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item!;
    expect(after.sequence).toBe(elsewhere + 2);
    // Replayed: nothing is written twice, and the counter does not move.
    expect(await recordFeedEvents([eventOf('evt_here_2')])).toBe(0);
    expect((await campaignItems(TENANT_A.tenant, campaign.id, 'EV#')).length).toBe(4);
  });
});
