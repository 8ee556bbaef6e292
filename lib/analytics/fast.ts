/**
 * The counts that must be visible within 2 s (the contract's Analytics section), written by every
 * batch of the counting consumer: a visit's `total_clicks` on its link, and the campaign's own
 * series. One non-transactional update per item, summed over the batch, exactly once by the
 * items' high-water marks (`counted-update.ts`); an update DynamoDB refuses as it is is parked
 * (`lib/stream/parked.ts`) and the rest goes on; a passing failure throws, and the batch comes
 * again.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getItems, keyString } from '../db/batch.ts';
import { db, tableName } from '../db/client.ts';
import { campaignKey } from '../db/entities/campaign.ts';
import { BusinessMetric, countEvent } from '../observability/metrics.ts';
import { isPoison, park } from '../stream/parked.ts';
import { inTurns } from '../stream/settled.ts';
import type { Contribution } from './contributions.ts';
import { applyCounted, type CountedItem } from './counted-update.ts';
import { type Counted, fastItems } from './rollup-items.ts';
import { countedTypeNames } from './type-registry.ts';

/** The last record each lane applied in this container: a batch handed over again skips it without a write. */
const appliedUpTo = new Map<string, bigint>();

export function forgetFastProgress(): void {
  appliedUpTo.clear();
}

const CONCURRENCY = 16;

/** Write the batch's fast counts under `lane`; see the module comment. */
export async function runFast(counted: readonly Counted[], lane: string): Promise<void> {
  const done = appliedUpTo.get(lane);
  const fresh = done === undefined ? counted : counted.filter((c) => c.sequence > done);
  if (fresh.length === 0) return;
  await inTurns(fastItems(fresh), CONCURRENCY, (item) => write(item, lane));
  appliedUpTo.set(lane, fresh.at(-1)!.sequence);
  // The business metrics of the interactions, one EMF line per batch (the handler publishes it).
  countEvent(BusinessMetric.VisitsRecorded, fresh.filter((c) => c.countsClick).length);
  countEvent(
    BusinessMetric.ActionsRecorded,
    fresh.filter((c) => c.kind === 'action' || (c.kind === 'visit' && !c.countsClick)).length,
  );
}

async function write(item: CountedItem, lane: string): Promise<void> {
  try {
    await applyCounted(item, lane);
  } catch (err) {
    if (!isPoison(err)) throw err;
    await park('counted', `${lane}\u0000${keyString(item.key)}\u0000${item.parts[0]!.seq}`, { item }, err);
  }
}

/** Campaigns known alive lately, per container: a campaign's delete is rare, and its purge sweeps again later. */
const alive = new Map<string, number>();
const ALIVE_FOR_MS = 2_000;
const ALIVE_MAX = 10_000;

/**
 * The contributions of campaigns that still exist (eventually consistent reads, one BatchGetItem
 * per batch at most): a deleted campaign's interactions count nowhere. A count written in the
 * moment between a delete and this read lands in a partition the purge sweeps a second time.
 */
export async function ofLiveCampaigns<C extends Contribution>(contributions: readonly C[], now = Date.now()) {
  const ids = new Map<string, { PK: string; SK: string }>();
  for (const c of contributions) {
    const key = campaignKey(c.tenant, c.campaignId);
    const id = keyString(key);
    if ((alive.get(id) ?? 0) < now - ALIVE_FOR_MS) ids.set(id, key);
  }
  if (ids.size > 0) {
    const keys = [...ids.values()];
    const found =
      keys.length === 1
        ? [
            (
              await db.send(
                new GetCommand({ TableName: tableName, Key: keys[0]!, ProjectionExpression: 'PK' }),
              )
            ).Item,
          ]
        : await getItems(keys, { consistent: false });
    if (alive.size > ALIVE_MAX) alive.clear();
    keys.forEach((key, i) => {
      if (found[i]) alive.set(keyString(key), now);
      else alive.delete(keyString(key));
    });
  }
  return contributions.filter((c) => alive.has(keyString(campaignKey(c.tenant, c.campaignId))));
}

/** Each action with the name its type is counted under in its campaign (`type-registry.ts`). */
export async function withTypeNames(contributions: readonly Contribution[]): Promise<Counted[]> {
  const byCampaign = new Map<string, { tenant: string; campaignId: string; types: Set<string> }>();
  for (const c of contributions) {
    if (c.kind !== 'action' || c.actionType === undefined) continue;
    const id = `${c.tenant}\u0000${c.campaignId}`;
    const entry = byCampaign.get(id) ?? { tenant: c.tenant, campaignId: c.campaignId, types: new Set() };
    entry.types.add(c.actionType);
    byCampaign.set(id, entry);
  }
  const names = new Map<string, Map<string, string>>();
  await inTurns([...byCampaign], 8, async ([id, { tenant, campaignId, types }]) => {
    names.set(id, await countedTypeNames(tenant, campaignId, types));
  });
  return contributions.map((c) =>
    c.kind === 'action' && c.actionType !== undefined
      ? { ...c, typeName: names.get(`${c.tenant}\u0000${c.campaignId}`)!.get(c.actionType)! }
      : c,
  );
}
