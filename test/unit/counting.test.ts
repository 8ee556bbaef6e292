/**
 * The counting consumer's bounds and rules, pure: whatever the input, no write it makes passes
 * DynamoDB's 4 KB expression limit (the stall a tenant could cause with many action types); the
 * rankings' boards are the exact top of the counts offered, in any order; the window's deployed
 * figures keep the contract's freshness; and what counts as work DynamoDB refuses for good.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

process.env.TABLE_NAME ??= 'unit-test';

type Modules = {
  counted: typeof import('../../lib/analytics/counted-update.ts');
  window: typeof import('../../lib/analytics/window.ts');
  items: typeof import('../../lib/analytics/rollup-items.ts');
  boards: typeof import('../../lib/analytics/boards.ts');
  entities: typeof import('../../lib/db/entities/analytics.ts');
  parked: typeof import('../../lib/stream/parked.ts');
};
let m: Modules;
beforeAll(async () => {
  m = {
    counted: await import('../../lib/analytics/counted-update.ts'),
    window: await import('../../lib/analytics/window.ts'),
    items: await import('../../lib/analytics/rollup-items.ts'),
    boards: await import('../../lib/analytics/boards.ts'),
    entities: await import('../../lib/db/entities/analytics.ts'),
    parked: await import('../../lib/stream/parked.ts'),
  };
});

/** DynamoDB's limit on an UpdateExpression. */
const EXPRESSION_LIMIT = 4096;

const typeName = fc.string({ minLength: 1, maxLength: 64, unit: 'grapheme' });
const interaction = fc.record({
  kind: fc.constantFrom('visit', 'bot_visit', 'referred_user', 'action'),
  unique: fc.boolean(),
  hour: fc.integer({ min: 0, max: 23 }),
  type: typeName,
  link: fc.integer({ min: 1, max: 5 }),
  referrer: fc.option(fc.constantFrom('alice', 'bob', '__proto__'), { nil: null }),
});
type Interaction = typeof interaction extends fc.Arbitrary<infer T> ? T : never;

function counted(list: readonly Interaction[]) {
  return list.map((i, n) => ({
    sequence: 1000n + BigInt(n),
    tenant: 't',
    campaignId: 'c',
    atMs: Date.UTC(2026, 10, 27, i.hour, 30),
    link: { id: i.link, code: `CODE${i.link}`, url: null, referrerId: i.referrer },
    kind: i.kind as 'visit' | 'bot_visit' | 'referred_user' | 'action',
    unique: i.kind === 'visit' && i.unique,
    ...(i.kind === 'action' ? { actionType: i.type, typeName: i.type } : {}),
    countsClick: i.kind === 'visit',
  }));
}

describe('every write of the counting consumer fits DynamoDB', () => {
  it('a run of any interactions is written in updates of at most 4 KB of expression, each a prefix of what is left', () => {
    fc.assert(
      fc.property(fc.array(interaction, { minLength: 1, maxLength: 400 }), (list) => {
        for (const item of m.items.fastItems(counted(list))) {
          let left = item.parts;
          while (left.length > 0) {
            for (const typesMap of ['create', 'add'] as const) {
              const { update } = m.counted.buildUpdate(item, left, 'hw_x', typesMap, ['hw_old']);
              expect(update.UpdateExpression.length).toBeLessThanOrEqual(EXPRESSION_LIMIT);
            }
            const { used } = m.counted.buildUpdate(item, left, 'hw_x', 'add', []);
            expect(used).toBeGreaterThanOrEqual(1);
            left = left.slice(used);
          }
        }
      }),
      { numRuns: 60 },
    );
  });

  it("the window's sums are each written in one update of at most 4 KB, however many types they hold", () => {
    fc.assert(
      fc.property(fc.array(interaction, { minLength: 1, maxLength: 600 }), (list) => {
        const items = counted(list).flatMap((c) => m.items.windowItems(c));
        const state = m.window.sum(m.window.emptyState(), items, 0)!;
        for (const e of Object.values(state.e)) {
          const item = m.window.countedItemOf(state, e);
          for (const typesMap of ['create', 'add'] as const) {
            const { update, used } = m.counted.buildUpdate(item, item.parts, 'hw_x', typesMap, [
              'hw_a',
              'hw_b',
            ]);
            expect(used).toBe(1);
            expect(update.UpdateExpression.length).toBeLessThanOrEqual(EXPRESSION_LIMIT);
          }
        }
        // Nothing lost in the sums: each interaction's series count is in its link's sums.
        const summed = Object.values(state.e)
          .filter((e) => e.t === 's' && e.n[0] === 'L')
          .reduce(
            (a, e) =>
              a +
              Object.entries(e.a)
                .filter(([k]) => /^D[vbra]$/.test(k))
                .reduce((x, [, n]) => x + n, 0),
            0,
          );
        expect(summed).toBe(list.length);
      }),
      { numRuns: 40 },
    );
  });

  it('3,000 distinct 64-character types of one campaign: the expression of every write stays bounded', () => {
    const list: Interaction[] = Array.from({ length: 3000 }, (_, i) => ({
      kind: 'action',
      unique: false,
      hour: i % 24,
      type: `${String(i).padStart(4, '0')}${'t'.repeat(60)}`,
      link: 1 + (i % 3),
      referrer: 'alice',
    }));
    const items = m.items.fastItems(counted(list));
    let updates = 0;
    for (const item of items) {
      let left = item.parts;
      while (left.length > 0) {
        const { update, used } = m.counted.buildUpdate(item, left, 'hw_x', 'add', []);
        expect(update.UpdateExpression.length).toBeLessThanOrEqual(EXPRESSION_LIMIT);
        left = left.slice(used);
        updates++;
      }
    }
    expect(updates).toBeGreaterThan(items.length);
  });
});

describe('ranking boards', () => {
  const offer = fc.record({
    entity: fc.integer({ min: 0, max: 300 }),
    raise: fc.integer({ min: 1, max: 5 }),
    at: fc.integer({ min: 0, max: 50 }),
  });

  it('merged in any order and any grouping, a board is the exact top 100 of the counts offered', () => {
    fc.assert(
      fc.property(fc.array(offer, { maxLength: 600 }), fc.integer({ min: 1, max: 50 }), (offers, group) => {
        // Each entity's count grows with its raises; each raise is offered with the new count.
        const counts = new Map<number, { value: number; reachMs: number }>();
        const offered = offers.map((o, i) => {
          const before = counts.get(o.entity)?.value ?? 0;
          const now = { value: before + o.raise, reachMs: i * 100 + o.at };
          counts.set(o.entity, now);
          return { k: `L${o.entity}`, label: `C${o.entity}`, ...now };
        });
        // Offers arrive grouped, and the groups in any order (shards, retries).
        const groups: (typeof offered)[] = [];
        for (let i = 0; i < offered.length; i += group) groups.push(offered.slice(i, i + group));
        let board: ReturnType<typeof m.entities.mergedEntries> = [];
        for (const g of [...groups].reverse()) board = m.entities.mergedEntries(board, g);
        for (const g of groups) board = m.entities.mergedEntries(board, g); // again: idempotent
        const expected = [...counts]
          .map(([e, c]) => ({ k: `L${e}`, label: `C${e}`, ...c }))
          .sort(m.entities.compareBoardEntries)
          .slice(0, m.entities.BOARD_SIZE);
        expect(board).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });
});

describe("the window's deployed figures", () => {
  it('keep series by link and referrer, and the rankings, within the contract’s 60 s', async () => {
    const { ROLLUP_STREAM_BATCHING } = await import('../../lib/webhooks/stream-filter.ts');
    const { config } = await import('../../lib/config.ts');
    const saved = { ...process.env };
    try {
      delete process.env.ANALYTICS_FLUSH_AGE_MS;
      delete process.env.ANALYTICS_BOARD_AGE_MS;
      const flush = config.analyticsFlushAgeMs / 1000;
      const board = config.analyticsBoardAgeMs / 1000;
      expect({ flush, board, ...ROLLUP_STREAM_BATCHING }).toEqual({
        flush: 30,
        board: 10,
        batchSize: 1000,
        windowSeconds: 1,
        tumblingWindowSeconds: 45,
      });
      // A sum waits until it is old or its window ends, then its rankings until they are due,
      // and each step for the next batch (a second); a few seconds of writing on top.
      const worst =
        Math.min(flush, ROLLUP_STREAM_BATCHING.tumblingWindowSeconds) +
        board +
        2 * ROLLUP_STREAM_BATCHING.windowSeconds;
      expect(worst).toBeLessThanOrEqual(50);
      expect(
        ROLLUP_STREAM_BATCHING.tumblingWindowSeconds + ROLLUP_STREAM_BATCHING.windowSeconds,
      ).toBeLessThanOrEqual(50);
    } finally {
      process.env = saved;
    }
  });
});

describe('work DynamoDB refuses for good', () => {
  const awsError = (name: string, fault: 'client' | 'server', retryable?: object) =>
    Object.assign(new Error(name), {
      name,
      $fault: fault,
      $metadata: { httpStatusCode: 400 },
      $retryable: retryable,
    });

  it('is a client fault other than throttling or a condition; anything passing or unknown fails the batch instead', () => {
    expect(m.parked.isPoison(awsError('ValidationException', 'client'))).toBe(true);
    expect(m.parked.isPoison(new m.parked.PoisonError('a mark inside a run'))).toBe(true);
    for (const passing of [
      awsError('ThrottlingException', 'client'),
      awsError('ProvisionedThroughputExceededException', 'client'),
      awsError('RequestLimitExceeded', 'client'),
      awsError('TransactionConflictException', 'client'),
      awsError('ConditionalCheckFailedException', 'client'),
      awsError('ResourceNotFoundException', 'client'),
      awsError('InternalServerError', 'server'),
      awsError('ValidationException', 'client', { throttling: false }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }),
      new Error('killed'),
    ])
      expect(m.parked.isPoison(passing), passing.name).toBe(false);
  });
});
