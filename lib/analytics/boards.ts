/**
 * The rankings of endpoint 17, one item per ranking (`boardKey`): its first `BOARD_SIZE` entries,
 * best first. A ranking's counts only grow, and each raise is offered here with the entity's new
 * all-time count (read from the link's item, or returned by the write of the referrer's totals),
 * so merging keeps the exact top: an entity that falls off the board can come back only through a
 * raise, which is offered in turn. A merge is idempotent (a count offered twice changes nothing),
 * so merges may run in any order and again after a retry.
 *
 * Why not an index sorted by count (GSI4, before): every raise then rewrote the entity's item and
 * moved its index copy (a delete and a put), about 4 write units per visit per ranking when traffic
 * is spread over many links. A board costs a few write units per campaign and merge, however many
 * links it ranks, and the counting consumer merges once per window.
 */
import { readBoard as readStoredBoard, writeBoard } from '../db/counting.ts';
import {
  type BoardEntry,
  boardKey,
  FALLING_TOP_METRICS,
  LINK_TOTALS,
  mergedEntries,
  REFERRER_TOTALS,
  referrerHash,
  sameEntries,
  TOP_METRICS,
  type TopBy,
  type TopMetric,
} from '../db/entities/analytics.ts';
import { linkKey } from '../db/entities/link.ts';
import { getItems, keyString } from '../db/table/batch.ts';
import { allSettledOrThrow } from '../stream/settled.ts';

/** What a merge reads of a link: whose it is, and its all-time counts with their reach times. */
export const LINK_BOARD_READ = [
  'id',
  'tenant',
  'campaign_id',
  ...Object.values(LINK_TOTALS).flatMap((t) => [t.count, t.reach]),
];

/** What a merge is offered: links (by id, with their code) and referrers with their counts. */
export interface BoardCandidates {
  tenant: string;
  campaignId: string;
  links: Array<{ id: number; code: string }>;
  /** A referrer's totals item as its last write returned it. */
  referrers: Array<{ referrerId: string; totals: Record<string, unknown> }>;
}

/** Boards as this container last read or wrote them, with their version (bounded). */
const cached = new Map<string, { version: number; entries: BoardEntry[] }>();
const CACHED_MAX = 2_000;

export function forgetBoards(): void {
  cached.clear();
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * Offer the candidates' current counts to every ranking of their campaign. Links are read by key
 * (strongly consistent, so a count the stream has raised is seen), and a link that is not the one
 * named (its code purged and re-issued) is left out.
 */
export async function mergeBoards(candidates: BoardCandidates): Promise<void> {
  const { tenant, campaignId } = candidates;
  const offered = new Map<string, BoardEntry[]>();
  const offer = (by: TopBy, metric: TopMetric, entry: BoardEntry) => {
    // A falling ranking is offered its zeros too: they take the entity off the board.
    if (entry.value <= 0 && !FALLING_TOP_METRICS.has(metric)) return;
    const id = `${by}#${metric}`;
    const list = offered.get(id);
    if (list) list.push(entry);
    else offered.set(id, [entry]);
  };
  const links = candidates.links;
  const items =
    links.length > 0
      ? await getItems(
          links.map((l) => linkKey(l.code)),
          { attributes: LINK_BOARD_READ },
        )
      : [];
  links.forEach((link, i) => {
    const item = items[i];
    if (item?.id !== link.id || item.campaign_id !== campaignId || item.tenant !== tenant) return;
    for (const metric of TOP_METRICS) {
      const { count, reach } = LINK_TOTALS[metric];
      offer('referral_link', metric, {
        k: `L${link.id}`,
        label: link.code,
        value: num(item[count]),
        reachMs: num(item[reach]),
      });
    }
  });
  for (const { referrerId, totals } of candidates.referrers) {
    for (const metric of TOP_METRICS) {
      const { count, reach } = REFERRER_TOTALS[metric];
      offer('referrer', metric, {
        k: `R${referrerHash(referrerId)}`,
        label: referrerId,
        value: num(totals[count]),
        reachMs: num(totals[reach]),
      });
    }
  }
  await allSettledOrThrow(
    [...offered].map(([id, entries]) => {
      const [by, metric] = id.split('#') as [TopBy, TopMetric];
      return mergeInto(boardKey(tenant, campaignId, by, metric), entries, FALLING_TOP_METRICS.has(metric));
    }),
  );
}

const MAX_CONFLICTS = 10;

async function mergeInto(
  key: { PK: string; SK: string },
  entries: readonly BoardEntry[],
  replace: boolean,
): Promise<void> {
  const id = keyString(key);
  let board = cached.get(id) ?? (await readBoard(key));
  for (let attempt = 0; ; attempt++) {
    const merged = mergedEntries(board.entries, entries, replace);
    if (sameEntries(merged, board.entries)) return;
    if (await writeBoard(key, board.version, merged)) {
      remember(id, { version: board.version + 1, entries: merged });
      return;
    }
    // Another consumer (another shard) merged first, or this container's copy was old.
    if (attempt >= MAX_CONFLICTS)
      throw new Error(`board ${key.PK} ${key.SK}: ${attempt + 1} writes in a row lost a race`);
    board = await readBoard(key);
  }
}

async function readBoard(key: { PK: string; SK: string }) {
  const board = await readStoredBoard(key);
  remember(keyString(key), board);
  return board;
}

function remember(id: string, board: { version: number; entries: BoardEntry[] }) {
  if (cached.size >= CACHED_MAX) cached.clear();
  cached.set(id, board);
}
