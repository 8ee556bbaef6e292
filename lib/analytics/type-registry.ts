/**
 * Which name an action's type is counted under: its own for a campaign's first `NAMED_TYPES_MAX`
 * distinct types, `OTHER_TYPE` for every later one, so that no input can grow a rollup item
 * without bound (one tenant posting thousands of distinct types would otherwise pass DynamoDB's
 * limits and stop the counting for everyone).
 *
 * The campaign's registry item holds the named types (a string set). Types are named by a
 * conditional ADD that succeeds only while the set has room for all it adds, so two consumers
 * racing for the last places cannot pass the limit, and the answer for a type never changes
 * afterwards: a batch handed over again counts each of its actions under the same name.
 */
import { addToTypeRegistry, readTypeRegistry } from '../db/counting.ts';
import { NAMED_TYPES_MAX, OTHER_TYPE } from '../db/entities/analytics.ts';

interface Known {
  names: Set<string>;
  /** The set is full: a type not in it is `OTHER_TYPE`. */
  full: boolean;
}

/** Per container, per campaign; bounded (forgetting costs one read). */
const known = new Map<string, Known>();
const KNOWN_MAX = 5_000;

export function forgetTypeRegistry(): void {
  known.clear();
}

async function load(tenant: string, campaignId: string): Promise<Known> {
  const id = `${tenant}\u0000${campaignId}`;
  const cached = known.get(id);
  if (cached) return cached;
  const names = await readTypeRegistry(tenant, campaignId);
  const entry = { names, full: names.size >= NAMED_TYPES_MAX };
  if (known.size >= KNOWN_MAX) known.clear();
  known.set(id, entry);
  return entry;
}

/**
 * Name as many of `types` (in the order they came) as the registry has room for, in one
 * conditional write: it holds only while the set has room for all of them, so the first come are
 * the ones named even when consumers race (the loser reads the set the winner left and tries
 * again with the room that is left).
 */
async function register(
  tenant: string,
  campaignId: string,
  types: readonly string[],
  entry: Known,
): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const wanted = types.filter((t) => !entry.names.has(t)).slice(0, NAMED_TYPES_MAX - entry.names.size);
    if (wanted.length === 0) break;
    entry.names = await addToTypeRegistry(tenant, campaignId, wanted);
    entry.full = entry.names.size >= NAMED_TYPES_MAX;
  }
}

/**
 * The names `types` (in the order they came) are counted under in the campaign: each type itself,
 * or `OTHER_TYPE`. At most one read of the registry per campaign and container, and one write per
 * batch that names new types.
 */
export async function countedTypeNames(
  tenant: string,
  campaignId: string,
  types: Iterable<string>,
): Promise<Map<string, string>> {
  const entry = await load(tenant, campaignId);
  const distinct = [...new Set(types)];
  if (!entry.full && distinct.some((t) => !entry.names.has(t)))
    await register(tenant, campaignId, distinct, entry);
  return new Map(distinct.map((t) => [t, entry.names.has(t) ? t : OTHER_TYPE]));
}
