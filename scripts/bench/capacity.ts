/**
 * DynamoDB capacity from what the counting proxy saw: the items a stretch of traffic touched by
 * key (`DynamoCounter.track()`), each item's size read back from the table, and DynamoDB's
 * on-demand rules, summed per kind of item. Rules (AWS DynamoDB on-demand):
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
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import { getItems, type Table } from '../../tools/table.ts';

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
const wcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const rcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));

/**
 * The kinds of items, by their keys (`<PK> <SK>`, the layouts of `lib/db/entities/`), the first
 * that matches: today's, and those of the counting pipeline of issue 27 (series types items, the
 * type registry, referrer totals, ranking boards, parked work), so both pipelines classify.
 */
const KINDS = [
  ['link', /^LINK#/],
  ['visitor marker', /^VISITOR#/],
  ['visitor key', /^VISITKEY#/],
  ['rollup checkpoint', /^ROLLUP#/],
  ['parked work', /^PARKED /],
  ['id block', /^SEQ#/],
  ['api key', /^APIKEY#/],
  ['idempotency answer', /^IDEM#/],
  ['event lookup', /^T#\S*#EVT#/],
  ['bot visit', /^T#\S*#C#[^#\s]+#V\d+ B#/],
  ['visit item', /^T#\S*#C#[^#\s]+#V\d+ /],
  ['campaign', /^T#\S* CAMPAIGN$/],
  ['series types item', /^T#\S* AN#S#C#[^#]+#T$/],
  ['type registry', /^T#\S* AN#TYPES$/],
  ['referrer totals', /^T#\S* AN#RT#/],
  ['ranking board', /^T#\S* AN#TOP#/],
  ['series', /^T#\S* AN#/],
  ['ranking', /^T#\S* TOP#/],
  ['feed item', /^T#\S* EV#/],
  ['feed counter', /^T#\S* EVSEQ$/],
  ['action item', /^T#\S* A#/],
] as const;
export type ItemKind = (typeof KINDS)[number][0] | 'other';
export const kindOf = (pk: string, sk: string): ItemKind =>
  KINDS.find(([, key]) => key.test(`${pk} ${sk}`))?.[0] ?? 'other';
/** The kinds the rollups write. */
export const ROLLUP_KINDS: ItemKind[] = [
  'series',
  'series types item',
  'type registry',
  'referrer totals',
  'ranking',
  'ranking board',
];

const sumCounts = (items: ItemAccesses[]) => {
  const byKey = new Map<string, ItemAccesses>();
  for (const item of items) {
    const entry = byKey.get(`${item.pk} ${item.sk}`) ?? { pk: item.pk, sk: item.sk, counts: {} };
    for (const [access, n] of Object.entries(item.counts))
      entry.counts[access] = (entry.counts[access] ?? 0) + n;
    byKey.set(`${item.pk} ${item.sk}`, entry);
  }
  return [...byKey.values()];
};
/** The tracked items of several stretches, counts summed per item. */
export const mergeTracked = (stretches: readonly ItemAccesses[][]) => sumCounts(stretches.flat());

/**
 * The tracked items of one stretch split between campaigns: an item goes to the campaign whose id
 * its key holds (its partitions, its events) or whose link's code it holds (link items, visitor
 * markers); an item of another campaign is left out; an item of none (id blocks, rollup
 * checkpoints, the day's visitor key) is shared out in proportion to each campaign's own writes.
 */
export function splitByCampaign(
  tracked: readonly ItemAccesses[],
  campaigns: ReadonlyArray<{ id: string; codes: readonly string[] }>,
) {
  const owners = new Map(
    campaigns.flatMap((c, i) => [c.id.toLowerCase(), ...c.codes].map((k) => [k, i] as const)),
  );
  const campaignOf = (pk: string) =>
    /^(LINK|VISITOR)#/.test(pk)
      ? pk.split('#')[1]
      : (/^T#.*#C#([^#]+)/.exec(pk)?.[1] ?? /^T#.*_([0-9a-f-]{36})$/.exec(pk)?.[1]);
  const out = campaigns.map(() => [] as ItemAccesses[]);
  const shared: ItemAccesses[] = [];
  for (const item of tracked) {
    const key = campaignOf(item.pk);
    if (key === undefined) shared.push(item);
    else if (owners.has(key)) out[owners.get(key)!]!.push(item);
  }
  const writes = out.map((items) => items.reduce((a, i) => a + writesOf(i.counts), 0));
  const total = writes.reduce((a, b) => a + b, 0) || 1;
  const share = (counts: Record<string, number>, i: number) =>
    Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, (n * writes[i]!) / total]));
  for (const [i, items] of out.entries())
    for (const item of shared) items.push({ ...item, counts: share(item.counts, i) });
  return out;
}

const isRead = (access: string) => /^(GetItem|BatchGetItem|TransactGetItems)/.test(access);
const isCheck = (access: string) => access.endsWith(':ConditionCheck');
const isTransactional = (access: string) => access.startsWith('Transact');
/** The attributes an update access wrote (` [a b]`, see `Access`), or undefined for other writes. */
const updatedOf = (access: string) => /\[([^\]]*)\]$/.exec(access)?.[1]?.split(' ').filter(Boolean);
const countOf = (test: (access: string) => boolean) => (counts: Record<string, number>) =>
  Object.entries(counts).reduce((a, [k, n]) => a + (test(k) ? n : 0), 0);
/** Writes: everything but reads and transaction condition checks. */
export const writesOf = countOf((k) => !isRead(k) && !isCheck(k));
export const checksOf = countOf(isCheck);
export const readsOf = countOf(isRead);

/** What one kind of item cost over the tracked stretch: units of the item itself (standard, transactional, checks) and of its index copies. */
export interface KindUsage {
  kind: ItemKind;
  /** Distinct items of the kind touched, their mean size read back (bytes), and of their copies in the indexes they are in. */
  items: number;
  bytes: number;
  indexCopies: Array<{ index: string; bytes: number; writesPerWrite: number }>;
  writes: number;
  transactionalWrites: number;
  checks: number;
  reads: number;
  wru: number;
  indexWru: number;
  rru: number;
}

/** Index copies of an item: the indexes whose partition key it carries, each copy's size, and what an update must write to rewrite it. */
function indexCopiesOf(item: Record<string, unknown>) {
  const { partitionKey, sortKey } = tableDefinition;
  return tableDefinition.globalSecondaryIndexes
    .filter((g) => item[g.partitionKey] !== undefined)
    .map((g) => {
      const names = [partitionKey, sortKey, g.partitionKey, g.sortKey, ...g.projectedAttributes];
      const copy = Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]));
      return {
        index: g.indexName,
        bytes: sizeOf(copy),
        writesPerWrite: 1,
        // What an update must write for this copy to be rewritten.
        attributes: new Set<string>(names),
      };
    });
}

/** At most this many items of each kind are read back for their sizes (evenly spread over the kind). */
const SIZE_SAMPLE = 400;

/**
 * The capacity the tracked accesses used, per kind of item. Sizes are read back from `table`
 * (not counted): every item of a kind when it has at most `SIZE_SAMPLE`, else an even sample, whose
 * units per access stand for the kind. An item gone since counts as 1 KB.
 */
export async function capacityOf(table: Table, tracked: readonly ItemAccesses[]): Promise<KindUsage[]> {
  const byKind = new Map<ItemKind, ItemAccesses[]>();
  for (const item of tracked) {
    const kind = kindOf(item.pk, item.sk);
    if (!byKind.has(kind)) byKind.set(kind, []);
    byKind.get(kind)!.push(item);
  }
  const out: KindUsage[] = [];
  for (const [kind, items] of byKind) {
    const step = Math.max(1, items.length / SIZE_SAMPLE);
    const sample = Array.from(
      { length: Math.min(items.length, SIZE_SAMPLE) },
      (_, i) => items[Math.floor(i * step)]!,
    );
    const stored = await getItems(
      sample.map((i) => ({ PK: i.pk, SK: i.sk })),
      table,
    );
    const u = { wru: 0, indexWru: 0, rru: 0, accesses: 0, bytes: 0 };
    const copies = new Map<string, { bytes: number; n: number; writesPerWrite: number }>();
    for (const [i, { counts }] of sample.entries()) {
      const item = stored[i] ?? {};
      const size = sizeOf(item);
      u.bytes += size;
      const itemCopies = indexCopiesOf(item);
      for (const c of itemCopies) {
        const entry = copies.get(c.index) ?? { bytes: 0, n: 0, writesPerWrite: c.writesPerWrite };
        copies.set(c.index, { ...entry, bytes: entry.bytes + c.bytes, n: entry.n + 1 });
      }
      for (const [access, n] of Object.entries(counts)) {
        u.accesses += n;
        const transactional = isTransactional(access);
        if (isRead(access)) {
          u.rru += n * (transactional ? 2 : access.endsWith('(consistent)') ? 1 : 0.5) * rcu(size);
          continue;
        }
        u.wru += n * (transactional ? 2 : 1) * wcu(size);
        if (isCheck(access)) continue;
        const updated = updatedOf(access);
        for (const c of itemCopies)
          if (!updated || updated.some((a) => c.attributes.has(a)))
            u.indexWru += n * c.writesPerWrite * wcu(c.bytes);
      }
    }
    // The sample's units stand for the kind: scaled by all its accesses over the sample's.
    const all = sumCounts(items.map(({ counts }) => ({ pk: '', sk: '', counts })))[0]?.counts ?? {};
    const accesses = Object.values(all).reduce((a, n) => a + n, 0);
    const scale = u.accesses === 0 ? 1 : accesses / u.accesses;
    out.push({
      kind,
      items: items.length,
      bytes: sample.length ? u.bytes / sample.length : 0,
      indexCopies: [...copies].map(([index, c]) => ({
        index,
        bytes: c.bytes / c.n,
        writesPerWrite: c.writesPerWrite,
      })),
      writes: writesOf(all),
      transactionalWrites: countOf((k) => isTransactional(k) && !isRead(k) && !isCheck(k))(all),
      checks: checksOf(all),
      reads: readsOf(all),
      ...{ wru: u.wru * scale, indexWru: u.indexWru * scale, rru: u.rru * scale },
    });
  }
  return out.sort((a, b) => b.wru + b.indexWru - (a.wru + a.indexWru));
}

/** Units per request of a kind list: each figure divided by `requests`. */
export const perRequest = (usage: readonly KindUsage[], requests: number) =>
  usage.map(({ kind, writes, checks, reads, wru, indexWru, rru }) => {
    const per = (n: number) => n / requests;
    return {
      kind,
      writes: per(writes),
      checks: per(checks),
      reads: per(reads),
      wru: per(wru),
      indexWru: per(indexWru),
      rru: per(rru),
    };
  });
