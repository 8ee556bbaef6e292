/**
 * The counting consumer counts each interaction exactly once whatever the stream hands it again:
 * Lambda retries a batch from its first record with the window's state as it was, the local poller
 * re-reads from its checkpoint after a restart, and a consumer can die between two of its writes.
 * The records are stream INSERTs of visit and action items built by the writers' own builders for
 * real links, and the consumer's handler (functions/stream/feed-and-rollups.ts) runs in process
 * against DynamoDB Local, handed batches and window states as Lambda hands them.
 *
 * The one stub: a consumer killed between two of its writes, made by failing the nth UpdateItem
 * call (no process kill lands reliably between two calls a few ms apart).
 * test/faults/kill-restart.test.ts kills the whole stack under load for the same property.
 */
import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { mapLimit } from '../../tools/wait.ts';
import { api } from '../support/api.ts';
import { killAtCall } from '../support/killed-transaction.ts';
import { createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { configureInProcessHandlers, linkItem, partitionItems, table } from '../support/table.ts';

configureInProcessHandlers();
// Sums are written by the next invocation, and rankings merged at once: every path runs.
Object.assign(process.env, {
  PURGE_QUEUE_URL: 'http://127.0.0.1:9/unused',
  ANALYTICS_FLUSH_AGE_MS: '0',
  ANALYTICS_BOARD_AGE_MS: '0',
});

type Handler = typeof import('../../functions/stream/feed-and-rollups.ts').handler;
let handler: Handler;
beforeAll(async () => {
  handler = (await import('../../functions/stream/feed-and-rollups.ts')).handler;
});
afterEach(() => vi.restoreAllMocks());
// Hundreds of writes per batch, in process, against a DynamoDB Local shared with the run.
vi.setConfig({ testTimeout: 120_000 });

const LINKS = 30;
const VISITS = 300;
const BASE = 10n ** 20n;

type StreamRecord = { eventName: string; dynamodb: { NewImage: unknown; SequenceNumber: string } };
const recordOf = (item: Record<string, unknown>, n: number | bigint): StreamRecord => ({
  eventName: 'INSERT',
  dynamodb: {
    NewImage: marshall(item, { removeUndefinedValues: true }),
    SequenceNumber: String(BASE + BigInt(n)),
  },
});

/** Lambda's side of a shard: the window's state, kept only when an invocation succeeds. */
function shard(id = `test-${randomUUID()}`) {
  let state: Record<string, unknown> = {};
  return {
    id,
    async deliver(records: StreamRecord[], final = false) {
      // As Lambda: a thrown handler, or any failure reported, fails the whole invocation.
      const out = await handler({
        // biome-ignore lint/suspicious/noExplicitAny: a Lambda event built by hand.
        Records: records as any,
        shardId: id,
        state,
        isFinalInvokeForWindow: final,
      }).catch(() => undefined);
      const failed = out === undefined || out.batchItemFailures.length > 0;
      if (!failed) state = final ? {} : out!.state;
      return failed ? 'failed' : 'ok';
    },
    /** The window's end: its sums written, its rankings merged. */
    end() {
      return this.deliver([], true);
    },
  };
}

async function visits() {
  const { linkFromItem } = await import('../../lib/db/entities/link.ts');
  const { newVisitItem } = await import('../../lib/db/entities/visit.ts');
  const campaign = await createCampaign({ name: 'rollup replay' });
  const links: LinkBody[] = await mapLimit(Array.from({ length: LINKS }), 6, (_, i) =>
    createLink(campaign.id, { referrer_id: `ref-${i % 10}` }),
  );
  const items = await Promise.all(links.map(async (l) => linkFromItem((await linkItem(l.referral_code))!)));
  const at = new Date().toISOString();
  // Visit n lands on link n mod LINKS; every third is a returning (not unique) visitor.
  const records = Array.from({ length: VISITS }, (_, n) =>
    recordOf(
      newVisitItem(
        items[n % LINKS]!,
        { id: 8_000_000_000_000_000 + n, at, action_type: 'visit', metadata: {}, referred_user: null },
        n % 3 !== 0,
      ).item,
      n,
    ),
  );
  const perLink = links.map(
    (_, i) => Array.from({ length: VISITS }, (_, n) => n).filter((n) => n % LINKS === i).length,
  );
  const unique = Array.from({ length: VISITS }, (_, n) => n).filter((n) => n % 3 !== 0).length;
  return { campaignId: campaign.id, links, records, perLink, unique };
}

async function expectCountedOnce(s: Awaited<ReturnType<typeof visits>>) {
  const res = await api('GET', `/api/v1/analytics/${s.campaignId}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.totals).toMatchObject({ visits: VISITS, unique_visits: s.unique, bot_visits: 0 });
  const clicks = await Promise.all(
    s.links.map(async (l) => Number((await linkItem(l.referral_code))?.total_clicks)),
  );
  expect(clicks).toEqual(s.perLink);
  const byLink = await api('GET', `/api/v1/analytics/${s.campaignId}?referral_link_id=${s.links[7]!.id}`);
  expect(byLink.body.totals.visits).toBe(s.perLink[7]);
  const byReferrer = await api('GET', `/api/v1/analytics/${s.campaignId}?referrer_id=ref-3`);
  expect(byReferrer.body.totals.visits).toBe(VISITS / 10);
  const top = await api(
    'GET',
    `/api/v1/analytics/${s.campaignId}/top?by=referral_link&metric=visits&limit=100`,
  );
  expect(top.body).toHaveLength(LINKS);
  expect(top.body.reduce((sum: number, r: { value: number }) => sum + r.value, 0)).toBe(VISITS);
  const referrers = await api(
    'GET',
    `/api/v1/analytics/${s.campaignId}/top?by=referrer&metric=visits&limit=100`,
  );
  expect(referrers.body.map((r: { value: number }) => r.value)).toEqual(Array(10).fill(VISITS / 10));
  const uniques = await api('GET', `/api/v1/analytics/${s.campaignId}/top?by=referrer&metric=unique_visits`);
  expect(uniques.body.reduce((sum: number, r: { value: number }) => sum + r.value, 0)).toBe(s.unique);
}

describe('counting consumer: exactly once under replayed stream batches', () => {
  it('a batch handed again, whole, from a later record, or with other boundaries, counts once', async () => {
    const s = await visits();
    const lambda = shard();
    expect(await lambda.deliver(s.records.slice(0, 120))).toBe('ok');
    expect(await lambda.deliver(s.records)).toBe('ok');
    expect(await lambda.deliver(s.records.slice(60))).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    // A new window handed the same records again (a restart that lost its checkpoint).
    expect(await lambda.deliver(s.records.slice(200))).toBe('ok');
    expect(await lambda.deliver(s.records)).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    await expectCountedOnce(s);
  });

  it('a consumer that dies between two writes of a batch: the batch again, with the state as it was, counts once', async () => {
    const s = await visits();
    const lambda = shard();
    expect(await lambda.deliver(s.records.slice(0, 150))).toBe('ok');
    for (const n of [3, 12]) {
      const updates = await killAtCall(n, UpdateCommand.name);
      expect(await lambda.deliver(s.records.slice(0, 250))).toBe('failed');
      expect(updates()).toBeGreaterThanOrEqual(n);
      vi.restoreAllMocks();
    }
    expect(await lambda.deliver(s.records.slice(0, 250))).toBe('ok');
    // The window's end writes the sums of 150-249: killed among them, then again.
    const ended = await killAtCall(5, UpdateCommand.name);
    expect(await lambda.end()).toBe('failed');
    expect(ended()).toBeGreaterThanOrEqual(5);
    vi.restoreAllMocks();
    expect(await lambda.end()).toBe('ok');
    expect(await lambda.deliver(s.records)).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    await expectCountedOnce(s);
  });

  it('a window whose state cannot hold its sums writes them early, and still counts each record once', async () => {
    const { runWindow } = await import('../../lib/analytics/window.ts');
    const { runFast, withTypeNames } = await import('../../lib/analytics/fast.ts');
    const { contributionOf } = await import('../../lib/analytics/contributions.ts');
    const s = await visits();
    const counted = await withTypeNames(
      s.records
        .map((r) => contributionOf(r as never))
        .filter((c): c is NonNullable<typeof c> => c !== undefined),
    );
    const lane = `test-${randomUUID()}`;
    await runFast(counted, lane);
    // A state of a few thousand characters holds a dozen sums: most batches make room by writing
    // older sums early, some cannot be held at all and are written record by record, and batches
    // overlap (handed over again from an earlier record).
    const settings = { flushAgeMs: 60_000, boardAgeMs: 0, flushesPerInvocation: 400, maxStateChars: 8_000 };
    let state: unknown = {};
    for (const [from, to] of [
      [0, 40],
      [40, 45],
      [45, 200],
      [150, 260],
      [255, 300],
    ] as const)
      state = await runWindow(state, counted.slice(from, to), { lane, final: false, settings });
    await runWindow(state, [], { lane, final: true, settings });
    await expectCountedOnce(s);
    const parked = await partitionItems('PARKED', '');
    expect(parked.filter((p) => String(p.work).includes(s.campaignId))).toEqual([]);
  });

  it('another shard is a lane of its own: the same records there count again (as other records would)', async () => {
    const s = await visits();
    const few = s.records.slice(0, 3);
    const one = shard();
    const other = shard();
    expect(await one.deliver(few)).toBe('ok');
    expect(await other.deliver(few)).toBe('ok');
    expect(await one.deliver(few)).toBe('ok');
    await Promise.all([one.end(), other.end()]);
    const res = await api('GET', `/api/v1/analytics/${s.campaignId}`);
    expect(res.body.totals.visits).toBe(6);
  });
});

describe('counting consumer: actions by type', () => {
  async function actionsOn(referrerId: string) {
    const { newActionItem } = await import('../../lib/db/entities/action.ts');
    const { linkFromItem } = await import('../../lib/db/entities/link.ts');
    const campaign = await createCampaign({ name: 'rollup types' });
    const link = await createLink(campaign.id, { referrer_id: referrerId });
    const stored = linkFromItem((await linkItem(link.referral_code))!);
    let n = 0;
    const actions = (types: string[]) =>
      types.map((action_type) =>
        recordOf(
          newActionItem(stored, {
            id: 9_000_000_000_000_000 + n,
            at: new Date().toISOString(),
            action_type,
            metadata: {},
            referred_user: null,
          }).item,
          n++,
        ),
      );
    return { campaign, link, actions };
  }

  it("each day's map of types is created once and raised after, whatever the consumer believes", async () => {
    const { forgetCountedBeliefs } = await import('../../lib/analytics/counted-update.ts');
    const { campaign, link, actions } = await actionsOn('ref-types');
    const lambda = shard();
    forgetCountedBeliefs();
    expect(await lambda.deliver(actions(['purchase', 'share', '__proto__']))).toBe('ok');
    expect(await lambda.deliver(actions(['purchase', 'sign up', 'constructor', '__proto__']))).toBe('ok');
    // A restarted container: it believes there is no map, the write fails, and is tried as a raise.
    forgetCountedBeliefs();
    expect(await lambda.deliver(actions(['purchase']))).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    // Types named like an object's own properties are types like any other (built from JSON: an
    // own `__proto__`).
    const expected = JSON.parse('{"purchase":3,"share":1,"sign up":1,"__proto__":2,"constructor":1}');
    for (const query of ['', '?granularity=hour', `?referral_link_id=${link.id}`, '?referrer_id=ref-types']) {
      const res = await api('GET', `/api/v1/analytics/${campaign.id}${query}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.totals).toMatchObject({ actions: 8, actions_by_type: expected });
    }
    const day = await api('GET', `/api/v1/analytics/${campaign.id}`);
    expect(day.body.series.at(-1).actions_by_type).toEqual(expected);
  });

  it("a campaign's first 100 types count by name, every later one under (other), and nothing stops", async () => {
    const { campaign, actions } = await actionsOn('ref-many');
    const lambda = shard();
    const types = Array.from(
      { length: 250 },
      (_, i) => `type-${String(i).padStart(3, '0')}-${'x'.repeat(55)}`,
    );
    // In batches of mixed size, two of them in one, and a type seen again after the cap.
    expect(await lambda.deliver(actions(types.slice(0, 40)))).toBe('ok');
    expect(await lambda.deliver(actions([...types.slice(40, 200), types[0]!]))).toBe('ok');
    expect(await lambda.deliver(actions([...types.slice(200), types[150]!, types[1]!]))).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    for (const query of ['', '?granularity=hour', '?referrer_id=ref-many']) {
      const res = await api('GET', `/api/v1/analytics/${campaign.id}${query}`);
      expect(res.status, res.text).toBe(200);
      const byType = res.body.totals.actions_by_type as Record<string, number>;
      expect(res.body.totals.actions, query).toBe(253);
      expect(Object.keys(byType)).toHaveLength(101);
      expect(byType['(other)']).toBe(151);
      expect(byType[types[0]!]).toBe(2);
      expect(byType[types[1]!]).toBe(2);
      expect(Object.values(byType).reduce((a, b) => a + b, 0)).toBe(253);
    }
  });
});

describe('counting consumer: what DynamoDB refuses is parked, and nothing else waits', () => {
  it("a link DynamoDB will not count (a counter of the wrong type) is parked; its campaign's other links, series and feed go on", async () => {
    const { PARKED_PARTITION } = await import('../../lib/stream/parked.ts');
    const s = await visits();
    const poisoned = s.links[4]!;
    const { db, name } = table();
    await db.send(
      new UpdateCommand({
        TableName: name,
        Key: { PK: `LINK#${poisoned.referral_code}`, SK: 'LINK' },
        UpdateExpression: 'SET total_clicks = :text',
        ExpressionAttributeValues: { ':text': 'not a number' },
      }),
    );
    const lambda = shard();
    expect(await lambda.deliver(s.records)).toBe('ok');
    expect(await lambda.end()).toBe('ok');
    const clicks = await Promise.all(
      s.links.map(async (l) => (await linkItem(l.referral_code))?.total_clicks),
    );
    expect(clicks).toEqual(s.perLink.map((n, i) => (i === 4 ? 'not a number' : n)));
    const res = await api('GET', `/api/v1/analytics/${s.campaignId}`);
    expect(res.body.totals.visits).toBe(VISITS);
    const parked = await partitionItems(PARKED_PARTITION, '');
    const mine = parked.filter((p) => String(p.work).includes(`LINK#${poisoned.referral_code}`));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ job: 'counted', error: expect.stringContaining('ValidationException') });
    // Handed again, it is parked once.
    expect(await lambda.deliver(s.records)).toBe('ok');
    const again = await partitionItems(PARKED_PARTITION, '');
    expect(again.filter((p) => String(p.work).includes(`LINK#${poisoned.referral_code}`))).toHaveLength(1);

    // Once the cause is fixed, the operator runs it again (`npm run parked -- retry`): counted
    // once, and no longer parked.
    await db.send(
      new UpdateCommand({
        TableName: name,
        Key: { PK: `LINK#${poisoned.referral_code}`, SK: 'LINK' },
        UpdateExpression: 'SET total_clicks = :zero',
        ExpressionAttributeValues: { ':zero': 0 },
      }),
    );
    const { retryParked } = await import('../../lib/stream/parked.ts');
    const { runParkedBoard, runParkedCounted } = await import('../../lib/analytics/window.ts');
    const { runParkedFeed } = await import('../../lib/webhooks/feed.ts');
    const runners = { counted: runParkedCounted, board: runParkedBoard, feed: runParkedFeed };
    expect((await retryParked(runners)).succeeded).toBeGreaterThanOrEqual(1);
    expect((await linkItem(poisoned.referral_code))?.total_clicks).toBe(s.perLink[4]);
    const left = await partitionItems(PARKED_PARTITION, '');
    expect(left.filter((p) => String(p.work).includes(`LINK#${poisoned.referral_code}`))).toEqual([]);
    await retryParked(runners);
    expect((await linkItem(poisoned.referral_code))?.total_clicks).toBe(s.perLink[4]);
  });
});
