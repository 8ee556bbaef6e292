/**
 * The events feed holds each event once, in commit order, whatever the stream consumer is handed
 * again: Lambda retries a stream batch from its first failed record, and the local poller re-reads
 * from its checkpoint after a restart. A real action's webhook data is the template; the records
 * are stream INSERTs of event items carrying it under ids of their own, on a shard of the test's
 * own, and the consumer's own feed writer (lib/webhooks/feed.ts) runs in process against DynamoDB
 * Local.
 *
 * The one stub: a consumer killed between two feed transactions of one batch, made by failing the
 * second TransactWriteItems call (no process kill lands reliably between two calls 5 ms apart).
 * test/local-stack/kill-restart.test.ts kills the whole stack under load for the same property.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { eventually, mapLimit } from '../../tools/wait.ts';
import { api, TENANT_A } from '../support/api.ts';
import { killAtCall } from '../support/killed-transaction.ts';
import { createCampaign, createLink, createLinkAction } from '../support/records.ts';
import { campaignItems, configureInProcessHandlers, table } from '../support/table.ts';

configureInProcessHandlers();

afterEach(() => vi.restoreAllMocks());

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
    return body.find((e) => e.id === actionEventId(action.id, campaign.id));
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

/** A campaign's feed, every page, as a client reads it. */
async function feedIds(campaignId: string): Promise<string[]> {
  const all: string[] = [];
  let next: string | undefined;
  do {
    const res = await api('GET', `/api/v1/events/${campaignId}?limit=100${next ? `&cursor=${next}` : ''}`);
    expect(res.status).toBe(200);
    all.push(...res.body.map((e: { id: string }) => e.id));
    next = res.headers.get('x-next-cursor') ?? undefined;
  } while (next);
  return all;
}

describe('events feed: exactly once under replayed stream batches', () => {
  async function setUp(count: number) {
    const { campaign, eventOf, first } = await campaignWithEvents('feed replay');
    const ids = Array.from({ length: count }, (_, n) => `evt_replay_${n}`);
    const base = 10n ** 20n;
    const records = ids.map((id, n) => ({
      eventName: 'INSERT',
      dynamodb: { NewImage: marshall(eventOf(id)), SequenceNumber: String(base + BigInt(n)) },
    }));
    return { campaign, first, ids, records, shard: `test-${randomUUID()}` };
  }

  it('a batch handed again, whole, from a later record, or with other boundaries, adds nothing and keeps the order', async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const { eventLookupKey } = await import('../../lib/db/entities/webhook-event.ts');
    const s = await setUp(8);
    expect(await recordFeedRecords(s.records.slice(0, 5), s.shard)).toEqual({
      written: 5,
      failedSequenceNumbers: [],
    });
    expect((await recordFeedRecords(s.records.slice(0, 5), s.shard)).written).toBe(0);
    expect((await recordFeedRecords(s.records.slice(3), s.shard)).written).toBe(3);
    expect((await recordFeedRecords(s.records.slice(2), s.shard)).written).toBe(0);
    expect((await recordFeedRecords(s.records, s.shard)).written).toBe(0);
    expect(await feedIds(s.campaign.id)).toEqual([s.first, ...s.ids]);
    // Every event in the feed has its lookup item (what a redelivery reads).
    const { db, name } = table();
    for (const id of s.ids) {
      const { Item } = await db.send(
        new GetCommand({ TableName: name, Key: eventLookupKey(TENANT_A.tenant, id), ConsistentRead: true }),
      );
      expect(Item?.evt_id, id).toBe(id);
    }
  });

  it('a consumer that dies between two feed transactions of a batch: the batch again writes the rest once', async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    // 150 events of one campaign: two transactions (98 and 52).
    const s = await setUp(150);
    const transactions = await killAtCall(2);
    const died = await recordFeedRecords(s.records, s.shard);
    expect(transactions()).toBe(2);
    expect(died.written).toBe(98);
    // The rest is reported failed, from the first record not written: Lambda retries from there.
    expect(died.failedSequenceNumbers).toEqual(s.records.slice(98).map((r) => r.dynamodb.SequenceNumber));
    vi.restoreAllMocks();
    // Retried whole (as the local poller does after a restart): only the 52 not written yet.
    expect((await recordFeedRecords(s.records, s.shard)).written).toBe(52);
    expect(await feedIds(s.campaign.id)).toEqual([s.first, ...s.ids]);
  });

  it('another shard has its own position: the same records there are other records, written again', async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const s = await setUp(2);
    expect((await recordFeedRecords(s.records, s.shard)).written).toBe(2);
    expect((await recordFeedRecords(s.records, `${s.shard}-other`)).written).toBe(2);
    expect((await recordFeedRecords(s.records, s.shard)).written).toBe(0);
  });

  it("a deleted campaign's events are not written: no feed item and no counter in its partition", async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const s = await setUp(3);
    expect((await api('DELETE', `/api/v1/campaign?id=${s.campaign.id}`)).status).toBe(204);
    // The purge may already be at work: what matters is that these records add nothing.
    const before = await campaignItems(TENANT_A.tenant, s.campaign.id, 'EV');
    expect(await recordFeedRecords(s.records, s.shard)).toEqual({ written: 0, failedSequenceNumbers: [] });
    const after = await campaignItems(TENANT_A.tenant, s.campaign.id, 'EV');
    expect(after.filter((i) => !before.some((b) => b.SK === i.SK)).map((i) => i.SK)).toEqual([]);
    const { eventIdsOfFeedItem } = await import('../../lib/db/entities/webhook-event.ts');
    const ids = after.filter((i) => String(i.SK).startsWith('EV#')).flatMap(eventIdsOfFeedItem);
    expect(ids.some((id) => id.startsWith('evt_replay_'))).toBe(false);
    // The counter, if the purge has not removed it yet, never saw this shard.
    const counter = after.find((i) => i.SK === 'EVSEQ');
    expect((counter?.shards as Record<string, unknown> | undefined)?.[s.shard]).toBeUndefined();
  });

  it('a batch without a shard id is held, not written: no position, no exactly once', async () => {
    const { recordFeedRecords } = await import('../../lib/webhooks/feed.ts');
    const s = await setUp(2);
    expect(await recordFeedRecords(s.records, undefined)).toEqual({
      written: 0,
      failedSequenceNumbers: s.records.map((r) => r.dynamodb.SequenceNumber),
    });
    expect(await feedIds(s.campaign.id)).toEqual([s.first]);
    // A batch with no events needs none.
    expect(await recordFeedRecords([{ eventName: 'MODIFY', dynamodb: {} }], undefined)).toEqual({
      written: 0,
      failedSequenceNumbers: [],
    });
  });
});

describe('events feed: numbered in the order of commit, whoever writes it', () => {
  it('six writers of one campaign at once (one per stream shard): a poller following its cursor misses nothing', async () => {
    const { recordFeedEvents } = await import('../../lib/db/webhook-events.ts');
    const { campaign, eventOf, first } = await campaignWithEvents('feed writers');
    const written: string[] = [first];
    let writing = true;
    const writers = mapLimit(Array.from({ length: 6 }), 6, async (_, w) => {
      const shard = `writer-${w}-${randomUUID()}`;
      let position = 0;
      for (let chunk = 0; chunk < 12; chunk++) {
        const events = Array.from({ length: 1 + ((w + chunk) % 4) }, (_, i) =>
          eventOf(`evt_w${w}_${chunk}_${i}`),
        );
        const records = events.map((event) => ({ streamSequence: String(++position), event }));
        expect(await recordFeedEvents(shard, records)).toBe(events.length);
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
    const { feedSequenceKey, storedEventsFromItem } = await import('../../lib/db/entities/webhook-event.ts');
    const feedEvents = async () =>
      (await campaignItems(TENANT_A.tenant, campaign.id, 'EV#'))
        .flatMap(storedEventsFromItem)
        .map((e) => [e.event_id, Number(e.sequence)]);
    const { campaign, eventOf, first } = await campaignWithEvents('feed counter moved');
    const { db, name } = table();
    const key = feedSequenceKey(TENANT_A.tenant, campaign.id);
    const shard = `here-${randomUUID()}`;
    const record = (n: number) => ({ streamSequence: String(n), event: eventOf(`evt_here_${n}`) });
    expect(await recordFeedEvents(shard, [record(1)])).toBe(1);
    const mine = (await db.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item!;
    // Another container wrote 1,000 events meanwhile: the counter is far past what this one knows.
    const elsewhere = Number(mine.sequence) + 1000;
    await db.send(new PutCommand({ TableName: name, Item: { ...mine, sequence: elsewhere } }));
    expect(await recordFeedEvents(shard, [record(2), record(3)])).toBe(2);
    expect(await feedEvents()).toEqual([
      [first, Number(mine.sequence) - 1],
      ['evt_here_1', Number(mine.sequence)],
      ['evt_here_2', elsewhere + 1],
      ['evt_here_3', elsewhere + 2],
    ]);
    const after = (await db.send(new GetCommand({ TableName: name, Key: key, ConsistentRead: true }))).Item!;
    expect(after.sequence).toBe(elsewhere + 2);
    // Replayed: nothing is written twice, and the counter does not move.
    expect(await recordFeedEvents(shard, [record(2)])).toBe(0);
    expect((await feedEvents()).length).toBe(4);
  });
});
