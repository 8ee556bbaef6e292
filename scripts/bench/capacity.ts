/**
 * DynamoDB capacity from what the counting proxy saw: the items a stretch of traffic touched by
 * key (`DynamoCounter.track()`), each item's size read back from the table, and DynamoDB's
 * on-demand rules, summed per kind of item (visit item, link, series, ranking, feed item, …). Used
 * by the hot-link part (writes per item) and the cost model (write and read units per request).
 *
 * Rules (AWS DynamoDB on-demand):
 * - a standard write costs 1 WRU per KB of the item (the larger of before and after: the item as
 *   read back), a transactional write or ConditionCheck 2 WRU per KB;
 * - a write of an item present in a global secondary index rewrites its copy there, 1 WRU per KB
 *   of the copy (keys and projected attributes), unless it is an update that writes none of the
 *   index's keys and projected attributes (the counter records what each update writes); when the
 *   write changes the index's sort key (a ranking entry: its value is GSI4's sort key) the copy is
 *   deleted and put again, 2 writes;
 * - a strongly consistent read costs 1 RRU per 4 KB, an eventually consistent one half, a
 *   transactional one 2.
 */
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import type { Table } from '../../tools/table.ts';
import { mapLimit } from '../../tools/wait.ts';

/** DynamoDB's size of a value: attribute names plus values (numbers ~1 byte per 2 digits + 1). */
export function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'number' || typeof value === 'bigint')
    return Math.ceil((String(value).replace(/[-.]/g, '').replace(/^0+/, '').length || 1) / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce<number>((a, v) => a + 1 + itemSize(v), 0);
  return 3 + Object.entries(value).reduce((a, [k, v]) => a + 1 + Buffer.byteLength(k) + itemSize(v), 0);
}
/** A whole item: no map overhead for the item itself. */
export const sizeOf = (item: Record<string, unknown> = {}) =>
  Object.entries(item).reduce((a, [k, v]) => a + Buffer.byteLength(k) + itemSize(v), 0);
export const wcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
export const rcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));

/** The kinds of items, told apart by their keys (the layouts of `lib/db/entities/`). */
export const ITEM_KINDS = [
  'visit item',
  'bot visit',
  'visitor marker',
  'visitor key',
  'link',
  'campaign',
  'action item',
  'series',
  'ranking',
  'rollup checkpoint',
  'feed item',
  'feed counter',
  'event lookup',
  'id block',
  'api key',
  'idempotency answer',
  'other',
] as const;
export type ItemKind = (typeof ITEM_KINDS)[number];

export function kindOf(pk: string, sk: string): ItemKind {
  if (pk.startsWith('LINK#')) return 'link';
  if (pk.startsWith('VISITOR#')) return 'visitor marker';
  if (pk.startsWith('VISITKEY#')) return 'visitor key';
  if (pk.startsWith('ROLLUP#')) return 'rollup checkpoint';
  if (pk.startsWith('SEQ#')) return 'id block';
  if (pk.startsWith('APIKEY#')) return 'api key';
  if (pk.startsWith('IDEM#')) return 'idempotency answer';
  if (/^T#.*#EVT#/.test(pk)) return 'event lookup';
  if (/^T#.*#C#[^#]+#V\d+$/.test(pk)) return sk.startsWith('B#') ? 'bot visit' : 'visit item';
  if (pk.startsWith('T#')) {
    if (sk === 'CAMPAIGN') return 'campaign';
    if (sk.startsWith('AN#')) return 'series';
    if (sk.startsWith('TOP#')) return 'ranking';
    if (sk.startsWith('EV#')) return 'feed item';
    if (sk === 'EVSEQ') return 'feed counter';
    if (sk.startsWith('A#')) return 'action item';
  }
  return 'other';
}

const isRead = (access: string) => /^(GetItem|BatchGetItem|TransactGetItems)/.test(access);
const isCheck = (access: string) => access.endsWith(':ConditionCheck');
const isTransactional = (access: string) => access.startsWith('Transact');
/** The attributes an update access wrote (` [a b]`, see `Access`), or undefined for other writes. */
const updatedOf = (access: string) => /\[([^\]]*)\]$/.exec(access)?.[1]?.split(' ').filter(Boolean);
/** Writes: everything but reads and transaction condition checks. */
export const writesOf = (counts: Record<string, number>) =>
  Object.entries(counts).reduce((a, [k, n]) => a + (isRead(k) || isCheck(k) ? 0 : n), 0);
export const checksOf = (counts: Record<string, number>) =>
  Object.entries(counts).reduce((a, [k, n]) => a + (isCheck(k) ? n : 0), 0);
export const readsOf = (counts: Record<string, number>) =>
  Object.entries(counts).reduce((a, [k, n]) => a + (isRead(k) ? n : 0), 0);

/** What one kind of item cost over the tracked stretch. */
export interface KindUsage {
  kind: ItemKind;
  /** Distinct items of the kind touched. */
  items: number;
  /** Mean size of the items read back (bytes), and of their copies in the indexes they are in. */
  bytes: number;
  indexCopies: Array<{ index: string; bytes: number; writesPerWrite: number }>;
  writes: number;
  transactionalWrites: number;
  checks: number;
  reads: number;
  /** Write units: of the item itself (standard, transactional, checks), and of its index copies. */
  wru: number;
  indexWru: number;
  rru: number;
}

/** Index copies of an item: the indexes whose partition key it carries, and each copy's size. */
function indexCopiesOf(item: Record<string, unknown>) {
  return tableDefinition.globalSecondaryIndexes
    .filter((g) => item[g.partitionKey] !== undefined)
    .map((g) => {
      const names = [
        tableDefinition.partitionKey,
        tableDefinition.sortKey,
        g.partitionKey,
        g.sortKey,
        ...g.projectedAttributes,
      ];
      const copy = Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]));
      // GSI4's sort key is the ranking's value: every write of a ranking entry moves its copy.
      return {
        index: g.indexName,
        bytes: sizeOf(copy),
        writesPerWrite: g.indexName === 'GSI4' ? 2 : 1,
        // What an update must write for this copy to be rewritten.
        attributes: new Set<string>(names),
      };
    });
}

/** At most this many items of each kind are read back for their sizes (evenly spread over the kind). */
const SIZE_SAMPLE = 400;

/**
 * The capacity the tracked accesses used, per kind of item. Sizes are read back from `table`
 * (strongly consistent, not counted): every item of a kind when it has at most `SIZE_SAMPLE`,
 * else an even sample, whose mean write and read units per access stand for the kind.
 */
export async function capacityOf(table: Table, tracked: readonly ItemAccesses[]): Promise<KindUsage[]> {
  const byKind = new Map<ItemKind, ItemAccesses[]>();
  for (const item of tracked) {
    const kind = kindOf(item.pk, item.sk);
    byKind.set(kind, [...(byKind.get(kind) ?? []), item]);
  }
  const out: KindUsage[] = [];
  for (const [kind, items] of byKind) {
    const step = Math.max(1, items.length / SIZE_SAMPLE);
    const sample = Array.from(
      { length: Math.min(items.length, SIZE_SAMPLE) },
      (_, i) => items[Math.floor(i * step)]!,
    );
    const stored = await readBack(table, sample);
    // Per sampled item: the units of each access, from its size (an item gone since counts as 1 KB).
    let [wru, indexWru, rru, writes, checks, reads, bytes] = [0, 0, 0, 0, 0, 0, 0];
    const copies = new Map<string, { bytes: number; n: number; writesPerWrite: number }>();
    for (const [i, s] of sample.entries()) {
      const item = stored[i] ?? {};
      const size = sizeOf(item);
      bytes += size;
      const itemCopies = indexCopiesOf(item);
      for (const c of itemCopies) {
        const entry = copies.get(c.index) ?? { bytes: 0, n: 0, writesPerWrite: c.writesPerWrite };
        entry.bytes += c.bytes;
        entry.n += 1;
        copies.set(c.index, entry);
      }
      for (const [access, n] of Object.entries(s.counts)) {
        if (isRead(access)) {
          reads += n;
          const per = isTransactional(access) ? 2 : access.endsWith('(consistent)') ? 1 : 0.5;
          rru += n * per * rcu(size);
          continue;
        }
        const per = isTransactional(access) ? 2 : 1;
        wru += n * per * wcu(size);
        if (isCheck(access)) {
          checks += n;
          continue;
        }
        writes += n;
        const updated = updatedOf(access);
        for (const c of itemCopies) {
          if (updated && !updated.some((a) => c.attributes.has(a))) continue;
          indexWru += n * c.writesPerWrite * wcu(c.bytes);
        }
      }
    }
    // Scale the sample to the kind: accesses of the items not read back are counted, their units estimated.
    const all = { writes: 0, checks: 0, reads: 0, txWrites: 0 };
    for (const item of items) {
      for (const [access, n] of Object.entries(item.counts)) {
        if (isRead(access)) all.reads += n;
        else if (isCheck(access)) all.checks += n;
        else {
          all.writes += n;
          if (isTransactional(access)) all.txWrites += n;
        }
      }
    }
    const sampled = writes + checks + reads;
    const scale = sampled === 0 ? 1 : (all.writes + all.checks + all.reads) / sampled;
    out.push({
      kind,
      items: items.length,
      bytes: sample.length ? bytes / sample.length : 0,
      indexCopies: [...copies].map(([index, c]) => ({
        index,
        bytes: c.bytes / c.n,
        writesPerWrite: c.writesPerWrite,
      })),
      writes: all.writes,
      transactionalWrites: all.txWrites,
      checks: all.checks,
      reads: all.reads,
      wru: wru * scale,
      indexWru: indexWru * scale,
      rru: rru * scale,
    });
  }
  return out.sort((a, b) => b.wru + b.indexWru - (a.wru + a.indexWru));
}

async function readBack(table: Table, items: readonly ItemAccesses[]) {
  const chunks = Array.from({ length: Math.ceil(items.length / 100) }, (_, c) =>
    items.slice(c * 100, c * 100 + 100),
  );
  const found = new Map<string, Record<string, unknown>>();
  await mapLimit(chunks, 4, async (chunk) => {
    let keys: Array<Record<string, unknown>> = chunk.map((i) => ({ PK: i.pk, SK: i.sk }));
    for (let attempt = 0; keys.length > 0 && attempt < 8; attempt++) {
      const out = await table.db.send(
        new BatchGetCommand({ RequestItems: { [table.name]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of out.Responses?.[table.name] ?? []) found.set(`${item.PK}\u0000${item.SK}`, item);
      keys = out.UnprocessedKeys?.[table.name]?.Keys ?? [];
    }
  });
  return items.map((i) => found.get(`${i.pk}\u0000${i.sk}`));
}

/** Units per request of a kind list: write units (item and index copies) and read units, each divided by `requests`. */
export function perRequest(usage: readonly KindUsage[], requests: number) {
  return usage.map((u) => ({
    kind: u.kind,
    writes: u.writes / requests,
    checks: u.checks / requests,
    reads: u.reads / requests,
    wru: u.wru / requests,
    indexWru: u.indexWru / requests,
    rru: u.rru / requests,
  }));
}
