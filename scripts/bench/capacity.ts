/** DynamoDB capacity per kind of item: the items touched by key, their sizes read back, on-demand rules. */
import { parseConversionId } from '../../lib/db/entities/conversion.ts';
import { parseRewardId } from '../../lib/domain/reward-ids.ts';
import type { ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { tableDefinition } from '../../lib/table-definition.ts';
import { getItems, type Table } from '../../tools/table.ts';

/** DynamoDB's size of a value: attribute names plus values (numbers ~1 byte per 2 digits + 1). */
function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'number' || typeof value === 'bigint')
    return Math.ceil((String(value).replace(/[-.]/g, '').replace(/^0+/, '').length || 1) / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce<number>((a, v) => a + 1 + itemSize(v), 0);
  return 3 + Object.entries(value).reduce((a, [k, v]) => a + 1 + Buffer.byteLength(k) + itemSize(v), 0);
}
export const sizeOf = (item: Record<string, unknown> = {}) =>
  Object.entries(item).reduce((a, [k, v]) => a + Buffer.byteLength(k) + itemSize(v), 0);
const wcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const rcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));
/** The kinds of items by their keys (`<PK> <SK>`, the layouts of `lib/db/entities/`), the first that matches. */
const KINDS = [
  ['link', /^LINK#/],
  ['visitor marker', /^VISITOR#/],
  ['visitor key', /^VISITKEY#/],
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
  ['feed item', /^T#\S* EV#/],
  ['feed counter', /^T#\S* EVSEQ$/],
  ['action item', /^T#\S* A#/],
  ['referred user', /^T#\S* RU#/],
  ['conversion record', /^T#\S* CV#/],
  ['conversion pointer', /^T#\S* CV[UR]#/],
  ['conversion external id', /^T#\S* CVX#/],
  ['reward', /^T#\S* RW#/],
  ['payout', /^T#\S* PO#/],
] as const;
export type ItemKind = (typeof KINDS)[number][0] | 'other';
export const kindOf = (pk: string, sk: string): ItemKind =>
  KINDS.find(([, key]) => key.test(`${pk} ${sk}`))?.[0] ?? 'other';
/** The kinds the rollups write: the analytics items (` AN#`). */
export const ROLLUP_KINDS = KINDS.flatMap(([kind, key]): ItemKind[] =>
  key.source.includes(' AN#') ? [kind] : [],
);

/** The tracked items of several stretches (or one item's accesses), counts summed per item. */
export function mergeTracked(items: readonly ItemAccesses[]) {
  const byKey = new Map<string, ItemAccesses>();
  for (const item of items) {
    const entry = byKey.get(`${item.pk} ${item.sk}`) ?? { pk: item.pk, sk: item.sk, counts: {} };
    for (const [access, n] of Object.entries(item.counts))
      entry.counts[access] = (entry.counts[access] ?? 0) + n;
    byKey.set(`${item.pk} ${item.sk}`, entry);
  }
  return [...byKey.values()];
}

/** Tracked items split by the campaign their key (or an event lookup's event id) names; those of none shared out by each one's writes. */
type Owner = { id: string; codes: readonly string[] };
export function splitByCampaign(tracked: readonly ItemAccesses[], campaigns: readonly Owner[]) {
  const owners = new Map(
    campaigns.flatMap((c, i) => [c.id.toLowerCase(), ...c.codes].map((k) => [k, i] as const)),
  );
  // An event lookup names its campaign in its event id: a conversion's or refund's in the conversion id
  // (`evt_refund_cv_…_<n>`), a reward's in the reward id (`evt_reward_<state>_rw_…`), an action's at the end.
  const lookupCampaignOf = (pk: string) =>
    parseConversionId(/#EVT#evt_(?:conversion|refund)_(cv_[A-Za-z0-9_-]{40})/.exec(pk)?.[1] ?? '')
      ?.campaignId ??
    parseRewardId(/#EVT#evt_reward_[a-z_]+?_(rw_[A-Za-z0-9_-]{54})/.exec(pk)?.[1] ?? '')?.campaignId;
  const campaignOf = (pk: string) =>
    /^(LINK|VISITOR)#/.test(pk)
      ? pk.split('#')[1]
      : (/^T#.*#C#([^#]+)/.exec(pk)?.[1] ?? lookupCampaignOf(pk) ?? /^T#.*_([0-9a-f-]{36})$/.exec(pk)?.[1]);
  const out = campaigns.map(() => [] as ItemAccesses[]);
  const shared: ItemAccesses[] = [];
  for (const item of tracked) {
    const key = campaignOf(item.pk);
    if (key === undefined) shared.push(item);
    else if (owners.has(key)) out[owners.get(key)!]!.push(item);
  }
  const writes = out.map((items) => items.reduce((a, i) => a + writesOf(i.counts), 0));
  const total = writes.reduce((a, b) => a + b, 0) || 1;
  for (const [i, items] of out.entries())
    for (const item of shared) {
      const counts = Object.entries(item.counts).map(([k, n]) => [k, (n * writes[i]!) / total]);
      items.push({ ...item, counts: Object.fromEntries(counts) });
    }
  return out;
}

const isRead = (access: string) => /^(GetItem|BatchGetItem|TransactGetItems)/.test(access);
const isCheck = (access: string) => access.endsWith(':ConditionCheck');
const isTransactional = (access: string) => access.startsWith('Transact');
const countOf = (test: (access: string) => boolean) => (counts: Record<string, number>) =>
  Object.entries(counts).reduce((a, [k, n]) => a + (test(k) ? n : 0), 0);
export const writesOf = countOf((k) => !isRead(k) && !isCheck(k));
export const checksOf = countOf(isCheck);
export const readsOf = countOf(isRead);
/** What one kind of item cost over the tracked stretch: the items' mean size and units, and their index copies'. */
export type KindUsage = Awaited<ReturnType<typeof capacityOf>>[number];
const SIZE_SAMPLE = 400;
/** The capacity used per kind of item, sizes read back (not counted) from up to `SIZE_SAMPLE` of each kind. */
export async function capacityOf(table: Table, tracked: readonly ItemAccesses[]) {
  const byKind = new Map<ItemKind, ItemAccesses[]>();
  for (const item of tracked) {
    const kind = kindOf(item.pk, item.sk);
    (byKind.get(kind) ?? byKind.set(kind, []).get(kind)!).push(item);
  }
  const out = [];
  for (const [kind, items] of byKind) {
    const step = Math.max(1, items.length / SIZE_SAMPLE);
    const length = Math.min(items.length, SIZE_SAMPLE);
    const sample = Array.from({ length }, (_, i) => items[Math.floor(i * step)]!);
    const keys = sample.map(({ pk, sk }) => ({ PK: pk, SK: sk }));
    const stored = await getItems(keys, table);
    const u = { wru: 0, indexWru: 0, rru: 0, accesses: 0, bytes: 0 };
    const copies = new Map<string, { bytes: number; n: number }>();
    for (const [i, { counts }] of sample.entries()) {
      const item = stored[i] ?? {};
      const size = sizeOf(item);
      u.bytes += size;
      // The indexes whose partition key the item carries: each copy's size, and what an update must write to rewrite it.
      const itemCopies = tableDefinition.globalSecondaryIndexes.flatMap((g) => {
        if (item[g.partitionKey] === undefined) return [];
        const names = ['PK', 'SK', g.partitionKey, g.sortKey, ...g.projectedAttributes];
        const copy = Object.fromEntries(names.filter((n) => item[n] !== undefined).map((n) => [n, item[n]]));
        return [{ index: g.indexName, bytes: sizeOf(copy), attributes: new Set<string>(names) }];
      });
      for (const c of itemCopies) {
        const entry = copies.get(c.index) ?? { bytes: 0, n: 0 };
        copies.set(c.index, { bytes: entry.bytes + c.bytes, n: entry.n + 1 });
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
        // An update names the attributes it writes (` [a b]`); other writes rewrite every copy.
        const updated = /\[([^\]]*)\]$/.exec(access)?.[1]?.split(' ').filter(Boolean);
        for (const c of itemCopies)
          if (!updated || updated.some((a) => c.attributes.has(a))) u.indexWru += n * wcu(c.bytes);
      }
    }
    // The sample's units stand for the kind: scaled by all its accesses over the sample's.
    const all = mergeTracked(items.map(({ counts }) => ({ pk: '', sk: '', counts })))[0]?.counts ?? {};
    const accesses = Object.values(all).reduce((a, n) => a + n, 0);
    const scale = u.accesses === 0 ? 1 : accesses / u.accesses;
    out.push({
      ...{ kind, items: items.length, bytes: sample.length ? u.bytes / sample.length : 0 },
      indexCopies: [...copies].map(([index, c]) => ({ index, bytes: c.bytes / c.n })),
      ...{ writes: writesOf(all), standardWrites: countOf((k) => !isRead(k) && !isTransactional(k))(all) },
      ...{ checks: checksOf(all), reads: readsOf(all) },
      ...{ wru: u.wru * scale, indexWru: u.indexWru * scale, rru: u.rru * scale },
    });
  }
  return out.sort((a, b) => b.wru + b.indexWru - (a.wru + a.indexWru));
}
