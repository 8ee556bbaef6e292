/**
 * The counting consumer's window: what may be up to a minute late (series by link and by
 * referrer, the referrers' totals and the rankings, the contract's Analytics section) is summed
 * per item across the stream batches of a shard, in the state Lambda carries from one invocation
 * of a tumbling window to the next, and written once an item's sum is `flushAgeMs` old, or when
 * the window ends. A link that gets a visit a second is then written once in half a minute, not
 * once a second.
 *
 * Exactly once, whatever Lambda hands over again: the state names the last record it summed
 * (`last`), so a record is summed once; a sum is written whole, in one update, under the shard's
 * high-water mark (`counted-update.ts`), so a sum written before is written once. Only the sums of
 * the state an invocation received are written by it; the records it receives are only summed
 * (but for the window's final invocation, whose state ends with it, and a state grown too big,
 * whose records are written at once, record by record, which the marks also count once). So an
 * invocation that fails and comes again with the same state writes the same sums again, which the
 * marks make a no-op. A write DynamoDB refuses as it is is parked (`parked.ts`); a passing failure
 * throws, and the caller fails the batch.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { keyString } from '../db/batch.ts';
import { db, tableName } from '../db/client.ts';
import { addTypeCount, padSequence, REFERRER_TOTALS, referrerHash } from '../db/entities/analytics.ts';
import { campaignPartition } from '../db/entities/campaign.ts';
import { isPoison, park } from '../stream/parked.ts';
import { inTurns } from '../stream/settled.ts';
import { mergeBoards } from './boards.ts';
import { applyCounted, type CountedItem, type CountedPart, EXPRESSION_BUDGET } from './counted-update.ts';
import {
  type Counted,
  REFERRER_TOTALS_TYPE,
  SERIES_ITEM_TYPE,
  type WindowItem,
  windowItems,
} from './rollup-items.ts';

/** One item's sum, as the state keeps it (short names: the state is JSON of at most 1 MB). */
interface Entry {
  /** The item's sort key (its partition is its campaign's). */
  k: string;
  /** Series item or referrer totals. */
  t: 's' | 'r';
  /** Its campaign: an index into the state's `cs`. */
  c: number;
  /** The entity: a link (id, code) or a referrer (id). */
  n: ['L', number, string] | ['R', string];
  /** First and last record summed. */
  f: string;
  l: string;
  a: Record<string, number>;
  y?: Record<string, number>;
  z?: Record<string, number>;
  /** When the sum was opened (ms). */
  at: number;
}

/** A campaign's entities written since its rankings were last merged. */
interface BoardPending {
  c: number;
  at: number;
  /** Links: id -> code. */
  l: Record<string, string>;
  /** Referrers: id -> their all-time counts as written (`REFERRER_TOTALS`). */
  r: Record<string, Record<string, number>>;
}

export interface WindowState {
  v: 1;
  last?: string;
  /** The campaigns the entries and boards name: [tenant, campaign id]. */
  cs: Array<[string, string]>;
  /** Sums by item (`<campaign index>|<sort key>`; a sum closed for its size gets its last record too). */
  e: Record<string, Entry>;
  /** By campaign index. */
  b: Record<string, BoardPending>;
}

export interface WindowSettings {
  /** A sum is written once it is this old. */
  flushAgeMs: number;
  /** A campaign's rankings are merged once its oldest pending entity is this old. */
  boardAgeMs: number;
  /** At most this many sums written per invocation (the oldest first), but at the window's end. */
  flushesPerInvocation: number;
  /** The state's largest size (JSON characters); `MAX_STATE_CHARS` unless a test says less. */
  maxStateChars?: number;
}

/** Lambda ends a window whose state passes 1 MB; past this, records are written at once instead. */
export const MAX_STATE_CHARS = 600_000;

export function emptyState(): WindowState {
  return { v: 1, cs: [], e: {}, b: {} };
}

/** The index of a campaign in the state's `cs`, added when new. */
function campaignIndex(state: WindowState, tenant: string, campaignId: string): number {
  const at = state.cs.findIndex(([t, c]) => t === tenant && c === campaignId);
  if (at !== -1) return at;
  state.cs.push([tenant, campaignId]);
  return state.cs.length - 1;
}

const campaignOf = (state: WindowState, e: { c: number }) => {
  const [tenant, campaignId] = state.cs[e.c]!;
  return { tenant, campaignId };
};

/** The state Lambda handed over, or an empty one (a new window, or a state this code cannot read). */
export function stateOf(value: unknown): WindowState {
  const s = value as Partial<WindowState> | undefined;
  if (
    s?.v !== 1 ||
    !Array.isArray(s.cs) ||
    typeof s.e !== 'object' ||
    typeof s.b !== 'object' ||
    s.e === null ||
    s.b === null
  )
    return emptyState();
  // A copy: the caller may keep the state it handed over (Lambda does, to hand it again after a
  // failure), and this invocation's changes must not reach it.
  return structuredClone({
    v: 1,
    cs: s.cs,
    e: s.e,
    b: s.b,
    ...(typeof s.last === 'string' ? { last: s.last } : {}),
  });
}

const after = (seq: string, last: string | undefined) => last === undefined || BigInt(seq) > BigInt(last);

function entryOf(state: WindowState, w: WindowItem, now: number): Entry {
  return {
    k: w.key.SK,
    t: w.kind === 'series' ? 's' : 'r',
    c: campaignIndex(state, w.campaign.tenant, w.campaign.campaignId),
    n: w.entity.by === 'referral_link' ? ['L', w.entity.linkId, w.entity.code] : ['R', w.entity.referrerId],
    f: w.part.seq,
    l: w.part.seq,
    a: {},
    at: now,
  };
}

function addPart(e: Entry, part: CountedPart) {
  for (const [name, n] of Object.entries(part.adds)) e.a[name] = (e.a[name] ?? 0) + n;
  if (part.types) {
    e.y ??= {};
    // Types are any text (`__proto__` too): counted as own properties, never assigned.
    for (const [name, n] of Object.entries(part.types)) addTypeCount(e.y, name, n);
  }
  if (part.latest) e.z = { ...(e.z ?? {}), ...part.latest };
  e.l = part.seq;
}

/** Whether adding `part` could make the sum's update pass the budget (an upper bound of its expression). */
function wouldOverflow(e: Entry, part: CountedPart): boolean {
  const newNames = (into: Record<string, number> | undefined, from: Record<string, number> | undefined) =>
    Object.keys(from ?? {}).filter((name) => !Object.hasOwn(into ?? {}, name)).length;
  const terms =
    200 +
    14 * (Object.keys(e.a).length + newNames(e.a, part.adds)) +
    56 * (Object.keys(e.y ?? {}).length + newNames(e.y, part.types)) +
    14 * (Object.keys(e.z ?? {}).length + newNames(e.z, part.latest));
  return terms > EXPRESSION_BUDGET;
}

const baseOf = (t: Entry['t']) => ({ sets: { type: t === 's' ? SERIES_ITEM_TYPE : REFERRER_TOTALS_TYPE } });

export function countedItemOf(state: WindowState, e: Entry): CountedItem {
  const { tenant, campaignId } = campaignOf(state, e);
  return {
    key: { PK: campaignPartition(tenant, campaignId), SK: e.k },
    parts: [
      { seq: e.l, firstSeq: e.f, adds: e.a, ...(e.y ? { types: e.y } : {}), ...(e.z ? { latest: e.z } : {}) },
    ],
    ...baseOf(e.t),
  };
}

/** A piece of work for `park` and `runParkedCounted`. */
export interface ParkedCounted {
  item: CountedItem;
  /** Offered to the rankings once written. */
  board?: { tenant: string; campaignId: string; link?: { id: number; code: string }; referrerId?: string };
}

/** An entry's campaign and entity, for what its write raises in the rankings. */
interface Meta {
  tenant: string;
  campaignId: string;
  n: Entry['n'];
  t: Entry['t'];
}
const metaOf = (state: WindowState, e: Entry): Meta => ({ ...campaignOf(state, e), n: e.n, t: e.t });

function boardOf(e: Meta): ParkedCounted['board'] {
  const { tenant, campaignId } = e;
  if (e.n[0] === 'L') return { tenant, campaignId, link: { id: e.n[1], code: e.n[2] } };
  return e.t === 'r' ? { tenant, campaignId, referrerId: e.n[1] } : undefined;
}

/** Runs parked rollup work again (`npm run parked -- retry`). */
export async function runParkedCounted(work: unknown, lane: string): Promise<void> {
  const { item, board } = work as ParkedCounted;
  const out = await applyCounted(item, lane);
  if (!board || out.outcome !== 'applied') return;
  await mergeBoards({
    tenant: board.tenant,
    campaignId: board.campaignId,
    links: board.link ? [board.link] : [],
    referrers: board.referrerId ? [{ referrerId: board.referrerId, totals: out.item ?? {} }] : [],
  });
}

/**
 * Write `item` under `lane`, and note for its campaign's rankings what it raised. DynamoDB refusing
 * it parks it; anything else passing throws.
 */
async function write(
  state: WindowState,
  item: CountedItem,
  meta: Meta,
  lane: string,
  now: number,
): Promise<void> {
  try {
    const out = await applyCounted(item, lane);
    if (out.outcome === 'applied') notePending(state, meta, out.item, now);
  } catch (err) {
    if (!isPoison(err)) throw err;
    const first = item.parts[0]!;
    await park(
      'counted',
      `${lane}\u0000${keyString(item.key)}\u0000${first.firstSeq ?? first.seq}`,
      { item, board: boardOf(meta) } satisfies ParkedCounted,
      err,
    );
  }
}

function notePending(
  state: WindowState,
  meta: Meta,
  written: Record<string, unknown> | undefined,
  now: number,
) {
  const c = campaignIndex(state, meta.tenant, meta.campaignId);
  state.b[c] ??= { c, at: now, l: {}, r: {} };
  const pending = state.b[c];
  if (meta.n[0] === 'L') pending.l[String(meta.n[1])] = meta.n[2];
  else if (meta.t === 'r') {
    // Only the counts: the rest of the item (its marks) would only grow the state.
    const counts: Record<string, number> = {};
    for (const { count, reach } of Object.values(REFERRER_TOTALS))
      for (const name of [count, reach])
        if (typeof written?.[name] === 'number') counts[name] = written[name];
    pending.r[meta.n[1]] = counts;
  }
}

async function mergePending(state: WindowState, ids: string[]): Promise<void> {
  await inTurns(ids, 4, async (id) => {
    const p = state.b[id]!;
    const candidates = {
      ...campaignOf(state, p),
      links: Object.entries(p.l).map(([linkId, code]) => ({ id: Number(linkId), code })),
      referrers: Object.entries(p.r).map(([referrerId, totals]) => ({ referrerId, totals })),
    };
    try {
      await mergeBoards(candidates);
    } catch (err) {
      if (!isPoison(err)) throw err;
      await park('board', `${id}\u0000${p.at}`, candidates, err);
    }
    delete state.b[id];
  });
}

/** Runs parked ranking merges again. */
export const runParkedBoard = (work: unknown) => mergeBoards(work as Parameters<typeof mergeBoards>[0]);

const CONCURRENCY = 16;

/**
 * One invocation's share of the window: write the sums of `input` that are due, merge the
 * rankings that are due, and sum `counted` (this batch's interactions of live campaigns, in
 * stream order). Returns the state to hand back (empty after the window's final invocation).
 */
export async function runWindow(
  input: unknown,
  counted: readonly Counted[],
  options: { lane: string; final: boolean; now?: number; settings: WindowSettings },
): Promise<WindowState> {
  const now = options.now ?? Date.now();
  const { lane, final, settings } = options;
  const state = stateOf(input);
  // A new window goes on after the last record the windows before it wrote: a record handed over
  // again after its window ended (a restart that lost its checkpoint) is not summed again, so a
  // sum never spans records an item has and records it has not (its mark would fall inside it).
  if (state.last === undefined && Object.keys(state.e).length === 0) state.last = await readWindowMark(lane);
  const fresh = counted.filter((c) => after(String(c.sequence), state.last));
  const items = fresh.flatMap((c) => windowItems(c));
  // 1. The sums of the state as received that are due, the oldest first; and, when this batch's
  // sums would not fit beside the rest, older ones too, until they do.
  const open = Object.entries(state.e).sort(([, x], [, y]) => x.at - y.at);
  let due = final
    ? open
    : open.filter(([, e]) => e.at <= now - settings.flushAgeMs).slice(0, settings.flushesPerInvocation);
  let summed: WindowState | undefined;
  if (!final) {
    const without = (flushed: typeof due) => {
      const rest = { ...state, e: { ...state.e } };
      for (const [id] of flushed) delete rest.e[id];
      return rest;
    };
    summed = sum(without(due), items, now, settings.maxStateChars);
    for (let room = Math.max(1, Math.ceil(open.length / 4)); !summed && due.length < open.length; ) {
      const flushing = new Set(due.map(([id]) => id));
      due = [...due, ...open.filter(([id]) => !flushing.has(id)).slice(0, room)];
      summed = sum(without(due), items, now, settings.maxStateChars);
    }
    // Not even alone: every sum is written now, and this batch's records one by one after them,
    // so that no item is left with a sum beside records written past it.
    if (!summed) due = open;
  }
  await writeSums(state, due, lane, now);
  // 2. This batch's records: summed (beside what is left; the trial above said they fit), or,
  // when the window ends here or the state cannot hold them, written at once, record by record,
  // once every sum of the state is written (no item keeps a sum beside records written past it).
  const sums = summed && sum(state, items, now, settings.maxStateChars);
  if (sums) Object.assign(state, sums);
  else {
    await writeSums(state, Object.entries(state.e), lane, now);
    await writeRecordByRecord(state, items, lane, now);
  }
  if (fresh.length > 0) state.last = String(fresh.at(-1)!.sequence);
  // 3. The rankings that are due (all of them at the end).
  const boards = Object.entries(state.b)
    .filter(([, p]) => final || p.at <= now - settings.boardAgeMs)
    .map(([id]) => id);
  await mergePending(state, boards);
  if (final && state.last !== undefined) await writeWindowMark(lane, state.last);
  return final ? emptyState() : state;
}

/**
 * The last record the lane's ended windows summed and wrote: written by each window's final
 * invocation once all its sums are written, read by the next window's first.
 */
export const windowMarkKey = (lane: string) => ({ PK: `WINDOW#${lane}`, SK: 'MARK' });

async function readWindowMark(lane: string): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: windowMarkKey(lane), ConsistentRead: true }),
  );
  return typeof Item?.last === 'string' ? Item.last : undefined;
}

async function writeWindowMark(lane: string, last: string): Promise<void> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...windowMarkKey(lane),
          type: 'window_mark',
          last,
          position: padSequence(last),
          // Stream records live 24 h: a closed shard's mark is kept a day more, then expires.
          expires_at: Math.floor(Date.now() / 1000) + 2 * 24 * 60 * 60,
        },
        ConditionExpression: 'attribute_not_exists(PK) OR #pos < :pos',
        ExpressionAttributeNames: { '#pos': 'position' },
        ExpressionAttributeValues: { ':pos': padSequence(last) },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err; // a later window's mark is there already
  }
}

/**
 * Write `sums` of the state and take them out of it: an item's in the order they were summed (one
 * closed for its size, then the next; a later sum's mark written first would make the earlier one
 * look written), items side by side.
 */
async function writeSums(
  state: WindowState,
  sums: ReadonlyArray<[string, Entry]>,
  lane: string,
  now: number,
) {
  const byItem = new Map<string, Array<[string, Entry]>>();
  for (const [id, e] of sums) {
    const item = `${e.c}|${e.k}`;
    byItem.set(item, [...(byItem.get(item) ?? []), [id, e]]);
  }
  await inTurns([...byItem.values()], CONCURRENCY, async (ofItem) => {
    for (const [id, e] of ofItem.sort(([, x], [, y]) => (BigInt(x.f) < BigInt(y.f) ? -1 : 1))) {
      await write(state, countedItemOf(state, e), metaOf(state, e), lane, now);
      delete state.e[id];
    }
  });
}

/** The state with `items` summed in (pure), or undefined when it would pass `MAX_STATE_CHARS`. */
export function sum(
  state: WindowState,
  items: readonly WindowItem[],
  now: number,
  maxChars = MAX_STATE_CHARS,
): WindowState | undefined {
  const next: WindowState = structuredClone(state); // `state` stays as it was if this one is too big
  for (const w of items) {
    const id = `${campaignIndex(next, w.campaign.tenant, w.campaign.campaignId)}|${w.key.SK}`;
    let e = next.e[id];
    if (e && wouldOverflow(e, w.part)) {
      // Closed here and written by the next invocation: one sum is one update, never split.
      next.e[`${id}|${e.l}`] = e;
      e = undefined;
    }
    if (!e) {
      e = entryOf(next, w, now);
      next.e[id] = e;
    }
    addPart(e, w.part);
  }
  return JSON.stringify(next).length > maxChars ? undefined : next;
}

async function writeRecordByRecord(
  state: WindowState,
  items: readonly WindowItem[],
  lane: string,
  now: number,
) {
  const byItem = new Map<string, { item: CountedItem; meta: Meta }>();
  for (const w of items) {
    const id = keyString(w.key);
    const known = byItem.get(id);
    if (known) known.item.parts.push(w.part);
    else {
      const e = entryOf(state, w, now);
      byItem.set(id, { item: { key: w.key, parts: [w.part], ...baseOf(e.t) }, meta: metaOf(state, e) });
    }
  }
  await inTurns([...byItem.values()], CONCURRENCY, ({ item, meta }) => write(state, item, meta, lane, now));
}

/** Referrer totals' keys by referrer id, for tests and tools. */
export const referrerEntityKey = (referrerId: string) => `R${referrerHash(referrerId)}`;
