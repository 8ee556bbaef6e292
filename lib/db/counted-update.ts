/**
 * One item's counts from a run of stream records, written exactly once without a transaction.
 *
 * The item keeps a high-water mark per lane (a stream shard, or a parked piece of work:
 * `highWaterAttribute`), and every write of it moves its lane's mark to its last record on the
 * condition that its first record is past the mark. A write whose condition fails comes back with
 * the item as it was (`ReturnValuesOnConditionCheckFailure`), from which the writer learns what
 * the mark already covers and writes only the rest: whatever part of a run an earlier attempt
 * applied (a Lambda retry, a batch handed over again after a restart, a consumer killed between
 * two writes), each record counts once. A transaction would do the same at twice the write units.
 *
 * Every write is bounded, whatever the input: a run is written in as many updates as it takes to
 * keep each UpdateExpression under DynamoDB's 4 KB (`EXPRESSION_BUDGET`), each a prefix of what is
 * left; one record adds a handful of terms, so any record fits. What an item can hold is bounded
 * by the layout (24 hours, five metrics, at most 101 action types a day), not here.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  DAY_TYPES_ATTRIBUTE,
  dayTypeKey,
  highWaterAttribute,
  highWaterValue,
  markedSequence,
  padSequence,
  staleMarks,
} from './entities/analytics.ts';
import { keyString } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { PoisonError } from './table/poison.ts';

type Key = { PK: string; SK: string };
type Item = Record<string, unknown>;

/** What one stream record (or a run of them) adds to an item. */
export interface CountedPart {
  /** The record's sequence number (any width; compared zero-padded); a run's last record's. */
  seq: string;
  /**
   * A run's first record, when the part stands for a run summed before (the window's sums): a run
   * is written whole or not at all, so a mark never falls inside one.
   */
  firstSeq?: string;
  /** Top-level numbers to add (`ADD`). */
  adds: Record<string, number>;
  /** Counts to add to the day's map of actions by type (`Dt`), by type name. */
  types?: Record<string, number>;
  /** Attributes set to this record's value (the last part's wins): reach times. */
  latest?: Record<string, number>;
}

export interface CountedItem {
  key: Key;
  /** In stream order. */
  parts: CountedPart[];
  /** Set on every write (the item's `type`, labels). */
  sets?: Record<string, unknown>;
  /** Removed on every write (a link's `last_action`). */
  removes?: readonly string[];
  /**
   * A condition the item must meet besides its mark (a link's id: not a reservation, not a link
   * that re-issued the code), and how to tell from the item as it was whether it failed.
   */
  guard?: { attribute: string; equals: string | number };
}

export type CountedOutcome =
  /** Every part is in the item (now, or by an earlier attempt); `item` is its last write's new image. */
  | { outcome: 'applied'; item: Item | undefined }
  /** The guard failed: the item is not what the parts were for, and nothing was written. */
  | { outcome: 'guard-failed' };

/** DynamoDB refuses an UpdateExpression over 4 KB; the rest of this is room for the condition's own. */
export const EXPRESSION_BUDGET = 3_500;

/** Items known to hold a `Dt` map, as this container last saw them (bounded; forgetting costs one failed write). */
const typesMapKnown = new Set<string>();
const TYPES_MAP_KNOWN_MAX = 20_000;
/** Marks seen stale on an item, removed by its next write. */
const staleByItem = new Map<string, string[]>();
const STALE_KNOWN_MAX = 20_000;

/** What a new container knows (tests: a consumer started again). */
export function forgetCountedBeliefs(): void {
  typesMapKnown.clear();
  staleByItem.clear();
}

const MAX_CONDITION_FAILURES = 8;

/**
 * Write `item`'s parts under `lane`'s mark, each once; see the module comment. Throws what
 * DynamoDB throws otherwise (the caller parks what cannot succeed, `lib/stream/parked.ts`).
 */
export async function applyCounted(item: CountedItem, lane: string): Promise<CountedOutcome> {
  const id = keyString(item.key);
  const mark = highWaterAttribute(lane);
  let pending = sortedParts(item.parts);
  let last: Item | undefined;
  let failures = 0;
  while (pending.length > 0) {
    const typesMap = typesMapKnown.has(id) ? 'add' : 'create';
    const { update, used } = buildUpdate(item, pending, mark, typesMap, staleByItem.get(id) ?? []);
    try {
      const out = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: item.key,
          ...update,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      last = out.Attributes;
      learn(id, last);
      pending = pending.slice(used);
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      if (++failures > MAX_CONDITION_FAILURES)
        throw new PoisonError(`counted update of ${item.key.PK} ${item.key.SK}: its condition kept failing`);
      // biome-ignore lint/suspicious/noExplicitAny: the SDK's marshalled image.
      const old = err.Item ? unmarshall(err.Item as any) : undefined;
      if (item.guard && old?.[item.guard.attribute] !== item.guard.equals) return { outcome: 'guard-failed' };
      learn(id, old);
      const applied = markedSequence(old?.[mark]);
      if (applied !== undefined) {
        if (
          pending.some(
            (p) =>
              p.firstSeq !== undefined && padSequence(p.firstSeq) <= applied && padSequence(p.seq) > applied,
          )
        )
          throw new PoisonError(`counted update of ${item.key.PK} ${item.key.SK}: a mark inside a run`);
        pending = pending.filter((p) => padSequence(p.seq) > applied);
      }
      if (pending.length === 0) last = old;
    }
  }
  return { outcome: 'applied', item: last };
}

function sortedParts(parts: readonly CountedPart[]): CountedPart[] {
  return [...parts].sort((a, b) => {
    const [x, y] = [padSequence(a.seq), padSequence(b.seq)];
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** What an item as read (or as written) says: whether it has its types map, which marks are stale. */
function learn(id: string, seen: Item | undefined) {
  if (seen?.[DAY_TYPES_ATTRIBUTE] !== undefined) {
    if (typesMapKnown.size >= TYPES_MAP_KNOWN_MAX) typesMapKnown.clear();
    typesMapKnown.add(id);
  } else typesMapKnown.delete(id);
  const stale = staleMarks(seen, Date.now());
  if (stale.length > 0) {
    if (staleByItem.size >= STALE_KNOWN_MAX) staleByItem.clear();
    staleByItem.set(id, stale);
  } else staleByItem.delete(id);
}

/**
 * The update of the longest prefix of `parts` whose expression fits `EXPRESSION_BUDGET` (at
 * least one part), and how many parts it holds.
 */
export function buildUpdate(
  item: CountedItem,
  parts: readonly CountedPart[],
  mark: string,
  typesMap: 'create' | 'add',
  removeMarks: readonly string[],
) {
  let used = 0;
  let built = expressionOf(item, parts.slice(0, 1), mark, typesMap, removeMarks);
  // Grow by doubling, then settle by halving: a run is usually far below the budget.
  let lo = 1;
  let hi = parts.length;
  if (parts.length > 1) {
    const whole = expressionOf(item, parts, mark, typesMap, removeMarks);
    if (whole.UpdateExpression.length <= EXPRESSION_BUDGET) return { update: whole, used: parts.length };
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const candidate = expressionOf(item, parts.slice(0, mid), mark, typesMap, removeMarks);
      if (candidate.UpdateExpression.length <= EXPRESSION_BUDGET) {
        lo = mid;
        built = candidate;
      } else hi = mid - 1;
    }
  }
  used = lo;
  return { update: built, used };
}

function expressionOf(
  item: CountedItem,
  parts: readonly CountedPart[],
  mark: string,
  typesMap: 'create' | 'add',
  removeMarks: readonly string[],
) {
  const adds = new Map<string, number>();
  const types = new Map<string, number>();
  const latest = new Map<string, number>();
  for (const part of parts) {
    for (const [name, n] of Object.entries(part.adds)) adds.set(name, (adds.get(name) ?? 0) + n);
    for (const [name, n] of Object.entries(part.types ?? {})) types.set(name, (types.get(name) ?? 0) + n);
    for (const [name, v] of Object.entries(part.latest ?? {})) latest.set(name, v);
  }
  const names: Record<string, string> = { '#hw': mark };
  const values: Record<string, unknown> = {
    ':hw': highWaterValue(parts.at(-1)!.seq, Date.now()),
    ':first': padSequence(parts[0]!.firstSeq ?? parts[0]!.seq),
  };
  const sets = ['#hw = :hw'];
  const addTerms: string[] = [];
  let i = 0;
  for (const [name, value] of Object.entries(item.sets ?? {})) {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
    i++;
  }
  for (const [name, value] of latest) {
    names[`#s${i}`] = name;
    values[`:s${i}`] = value;
    sets.push(`#s${i} = :s${i}`);
    i++;
  }
  i = 0;
  for (const [name, n] of adds) {
    if (n === 0) continue;
    names[`#a${i}`] = name;
    values[`:a${i}`] = n;
    addTerms.push(`#a${i} :a${i}`);
    i++;
  }
  const conditions = ['(attribute_not_exists(#hw) OR #hw < :first)'];
  if (types.size > 0) {
    names['#dt'] = DAY_TYPES_ATTRIBUTE;
    if (typesMap === 'create') {
      values[':dt'] = Object.fromEntries([...types].map(([type, n]) => [dayTypeKey(type), n]));
      sets.push('#dt = :dt');
      conditions.push('attribute_not_exists(#dt)');
    } else {
      values[':zero'] = 0;
      let t = 0;
      for (const [type, n] of types) {
        names[`#t${t}`] = dayTypeKey(type);
        values[`:t${t}`] = n;
        sets.push(`#dt.#t${t} = if_not_exists(#dt.#t${t}, :zero) + :t${t}`);
        t++;
      }
      conditions.push('attribute_exists(#dt)');
    }
  }
  const removes = [...(item.removes ?? []), ...removeMarks.filter((m) => m !== mark)];
  const removeTerms = removes.map((name, r) => {
    names[`#r${r}`] = name;
    return `#r${r}`;
  });
  if (item.guard) {
    names['#guard'] = item.guard.attribute;
    values[':guard'] = item.guard.equals;
    conditions.push('#guard = :guard');
  }
  return {
    UpdateExpression: [
      `SET ${sets.join(', ')}`,
      addTerms.length > 0 ? `ADD ${addTerms.join(', ')}` : '',
      removeTerms.length > 0 ? `REMOVE ${removeTerms.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' '),
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}
