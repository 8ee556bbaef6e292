/**
 * Table stream -> analytics rollups and the visit counters of links, exactly once.
 *
 * Every interaction is an item first (a visit, a bot visit, an action, a referred user); this
 * consumer reads their INSERT records and adds them up: per campaign, link and referrer, hour by
 * hour in one item per day (`series`), the all-time rankings (`top`), and a link's `total_clicks` for visits
 * (API writes count their own action when they commit, so their responses include it).
 *
 * Exactly once: a shard's records are applied in order, in transactions that also move that
 * shard's checkpoint (the last sequence number applied) from the value read to the chunk's last
 * record. A batch delivered again, whole or from any record on (a Lambda retry, a local stack
 * restarted, a consumer killed between two transactions), skips what the checkpoint covers, and a
 * transaction either applies a chunk and its checkpoint or nothing. Two invocations racing on one
 * shard cannot both move the checkpoint from one value.
 *
 * Records arrive batched (up to 100 or 1,000 per call), and one chunk sums all its records' counts
 * per item: a link that gets thousands of visits a second is written once per chunk, not once per
 * visit, and the visit requests themselves never write the link.
 *
 * Counts of a deleted campaign are dropped (a ConditionCheck of the campaign in every chunk), and
 * so are the visit counts of a link whose code was purged and reissued (the link update checks the
 * link's id), so nothing is written into a purged campaign's partition.
 */

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { getItems, keyString } from '../db/batch.ts';
import { db, tableName } from '../db/client.ts';
import {
  bucketOf,
  CHECKPOINT_TTL_SECONDS,
  checkpointKey,
  checkpointOf,
  dayTotalAttribute,
  padSequence,
  type Scope,
  type SeriesCount,
  seriesAttribute,
  seriesKey,
  seriesUpdate,
  type TopEntity,
  type TopMetric,
  topAttributes,
  topKey,
  topValueOf,
} from '../db/entities/analytics.ts';
import { campaignKey } from '../db/entities/campaign.ts';
import { CLEAR_LAST_ACTION, linkKey } from '../db/entities/link.ts';
import { transactWrite } from '../db/transactions.ts';
import type { StreamRecordLike } from '../webhooks/stream.ts';
import { type Contribution, contributionOf } from './contributions.ts';

export { type Contribution, contributionOf };

function scopesOf(c: Contribution): Scope[] {
  return [
    { kind: 'campaign' },
    { kind: 'link', linkId: c.link.id },
    ...(c.link.referrerId === null ? [] : [{ kind: 'referrer' as const, referrerId: c.link.referrerId }]),
  ];
}

function seriesCountsOf(c: Contribution): SeriesCount[] {
  switch (c.kind) {
    case 'visit':
      return c.unique ? ['visits', 'unique_visits'] : ['visits'];
    case 'bot_visit':
      return ['bot_visits'];
    case 'referred_user':
      return ['referred_users'];
    case 'action':
      return ['actions', { actionType: c.actionType! }];
  }
}

/** A contribution's series item per scope (the day it falls in), and what it counts in its hour. */
function seriesOf(c: Contribution): { key: Key; hour: number; counts: SeriesCount[] }[] {
  const at = new Date(c.atMs);
  const day = bucketOf(at, 'day');
  const counts = seriesCountsOf(c);
  return scopesOf(c).map((scope) => ({
    key: seriesKey(c.tenant, c.campaignId, scope, day),
    hour: at.getUTCHours(),
    counts,
  }));
}

/**
 * Series items known to hold their day's map of actions by type (`Dt`), as this container last
 * saw them: an update raises a type in the map where there is one and creates the map where there
 * is none, and a wrong belief fails that update's condition (the chunk is tried again with the
 * belief turned). Bounded: forgetting costs one failed transaction at most.
 */
const typesMapKnown = new Set<string>();
const TYPES_MAP_KNOWN_MAX = 10_000;

/** What a new container knows (tests: a consumer started again), or one that believes every map is there. */
export function resetTypesMapBelief(believeAll?: Iterable<{ PK: string; SK: string }>): void {
  typesMapKnown.clear();
  for (const key of believeAll ?? []) typesMapKnown.add(keyString(key));
}

function topMetricsOf(c: Contribution): TopMetric[] {
  switch (c.kind) {
    case 'visit':
      return c.unique ? ['visits', 'unique_visits'] : ['visits'];
    case 'referred_user':
      return ['referred_users'];
    case 'action':
      return ['actions'];
    case 'bot_visit':
      return [];
  }
}

function entitiesOf(c: Contribution): TopEntity[] {
  return [
    { by: 'referral_link', linkId: c.link.id, code: c.link.code, url: c.link.url },
    ...(c.link.referrerId === null ? [] : [{ by: 'referrer' as const, referrerId: c.link.referrerId }]),
  ];
}

type Key = { PK: string; SK: string };

/** The writes of a chunk, summed per item. */
interface Plan {
  campaigns: Map<string, { tenant: string; campaignId: string }>;
  series: Map<
    string,
    { key: Key; adds: Map<string, number>; totals: Map<string, number>; types: Map<string, number> }
  >;
  links: Map<string, { code: string; id: number; clicks: number }>;
  tops: Map<
    string,
    {
      key: Key;
      tenant: string;
      campaignId: string;
      entity: TopEntity;
      metric: TopMetric;
      add: number;
      reachMs: number;
    }
  >;
}

function keysOf(c: Contribution): string[] {
  const keys = [keyString(campaignKey(c.tenant, c.campaignId))];
  for (const { key } of seriesOf(c)) keys.push(keyString(key));
  if (c.countsClick) keys.push(keyString(linkKey(c.link.code)));
  for (const entity of entitiesOf(c)) {
    for (const metric of topMetricsOf(c))
      keys.push(keyString(topKey(c.tenant, c.campaignId, entity, metric)));
  }
  return keys;
}

const raise = (map: Map<string, number>, name: string) => map.set(name, (map.get(name) ?? 0) + 1);

function planOf(chunk: readonly Contribution[]): Plan {
  const plan: Plan = { campaigns: new Map(), series: new Map(), links: new Map(), tops: new Map() };
  for (const c of chunk) {
    plan.campaigns.set(keyString(campaignKey(c.tenant, c.campaignId)), {
      tenant: c.tenant,
      campaignId: c.campaignId,
    });
    for (const { key, hour, counts } of seriesOf(c)) {
      const entry = plan.series.get(keyString(key)) ?? {
        key,
        adds: new Map<string, number>(),
        totals: new Map<string, number>(),
        types: new Map<string, number>(),
      };
      for (const count of counts) {
        raise(entry.adds, seriesAttribute(hour, count));
        if (typeof count === 'string') raise(entry.totals, dayTotalAttribute(count));
        else raise(entry.types, count.actionType);
      }
      plan.series.set(keyString(key), entry);
    }
    if (c.countsClick) {
      const entry = plan.links.get(c.link.code) ?? { code: c.link.code, id: c.link.id, clicks: 0 };
      entry.clicks += 1;
      plan.links.set(c.link.code, entry);
    }
    for (const entity of entitiesOf(c)) {
      for (const metric of topMetricsOf(c)) {
        const key = topKey(c.tenant, c.campaignId, entity, metric);
        const entry = plan.tops.get(keyString(key)) ?? {
          key,
          tenant: c.tenant,
          campaignId: c.campaignId,
          entity,
          metric,
          add: 0,
          reachMs: 0,
        };
        entry.add += 1;
        entry.reachMs = Math.max(entry.reachMs, c.atMs);
        plan.tops.set(keyString(key), entry);
      }
    }
  }
  return plan;
}

/** TransactWriteItems takes 100 items: the checkpoint and at most 99 others per chunk. */
export const ITEMS_PER_TRANSACTION = 100;

/** The longest prefix of `pending` whose writes fit one transaction beside the checkpoint (at least one record). */
function nextChunk(pending: readonly Contribution[]): Contribution[] {
  const keys = new Set<string>();
  const chunk: Contribution[] = [];
  for (const c of pending) {
    const mine = keysOf(c).filter((k) => !keys.has(k));
    if (chunk.length > 0 && keys.size + mine.length > ITEMS_PER_TRANSACTION - 1) break;
    for (const k of mine) keys.add(k);
    chunk.push(c);
  }
  return chunk;
}

async function readCheckpoint(shardId: string): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: checkpointKey(shardId), ConsistentRead: true }),
  );
  return checkpointOf(Item);
}

const MAX_ATTEMPTS = 30;

/** A batch with records to count but no shard id: the mapping lacks its tumbling window. */
export class MissingShardError extends Error {
  constructor() {
    super('stream batch without shardId: the mapping needs its tumbling window');
    this.name = 'MissingShardError';
  }
}

/** What a failed condition is remembered by: a campaign, and a link (its code and its id). */
const campaignOf = (c: Contribution) => keyString(campaignKey(c.tenant, c.campaignId));
const linkOf = (l: { code: string; id: number }) => `${l.code}#${l.id}`;

/**
 * Apply the contributions of `records` (one shard's, in stream order) to the rollups, each once
 * whatever was applied before; returns how many were applied now. Throws when it cannot finish
 * (DynamoDB down, too much contention): the caller fails the batch and it comes again, and what
 * this call applied is not applied twice.
 */
export async function applyRollups(
  records: readonly StreamRecordLike[],
  shardId: string | undefined,
): Promise<number> {
  const all = records.map(contributionOf).filter((c): c is Contribution => c !== undefined);
  if (all.length === 0) return 0;
  // Without a shard there is no checkpoint, and no way to count exactly once: refuse loudly.
  if (!shardId) throw new MissingShardError();
  let applied = 0;
  let checkpoint = await readCheckpoint(shardId);
  // What a failed condition taught us: gone for good (campaign ids are never reused, link ids never).
  const goneCampaigns = new Set<string>();
  const goneLinks = new Set<string>();
  for (let attempt = 0; ; attempt++) {
    if (attempt >= MAX_ATTEMPTS)
      throw new Error(`rollups of shard ${shardId}: gave up after ${attempt} attempts`);
    const after = checkpoint === undefined ? -1n : BigInt(checkpoint);
    const pending = all.filter((c) => c.sequence > after);
    if (pending.length === 0) return applied;
    const chunk = nextChunk(pending);
    const last = padSequence(String(chunk[chunk.length - 1]!.sequence));
    // A visit of a gone link still counts in its campaign's analytics; only its click has no link.
    const live = chunk.filter((c) => !goneCampaigns.has(campaignOf(c)));
    const clickLost = (c: Contribution) => c.countsClick && goneLinks.has(linkOf(c.link));
    const counted = live.filter((c) => !clickLost(c)).length;
    const plan = planOf(live.map((c) => (clickLost(c) ? { ...c, countsClick: false } : c)));
    const topEntries = [...plan.tops.values()];
    const current = topEntries.length > 0 ? await getItems(topEntries.map((t) => t.key)) : [];

    type Kind =
      | { kind: 'checkpoint' }
      | { kind: 'campaign'; key: string }
      | { kind: 'link'; id: string }
      | { kind: 'top' }
      | { kind: 'series'; key: string; typesMap: 'create' | 'add' };
    const kinds: Kind[] = [];
    // biome-ignore lint/suspicious/noExplicitAny: lib-dynamodb's TransactWriteItem union.
    const items: any[] = [];
    const nowS = Math.floor(Date.now() / 1000);
    items.push({
      Update: {
        TableName: tableName,
        Key: checkpointKey(shardId),
        UpdateExpression: 'SET #seq = :last, expires_at = :exp',
        ConditionExpression: checkpoint === undefined ? 'attribute_not_exists(#seq)' : '#seq = :prev',
        ExpressionAttributeNames: { '#seq': 'sequence' },
        ExpressionAttributeValues: {
          ':last': last,
          ':exp': nowS + CHECKPOINT_TTL_SECONDS,
          ...(checkpoint === undefined ? {} : { ':prev': checkpoint }),
        },
      },
    });
    kinds.push({ kind: 'checkpoint' });
    for (const [k, c] of plan.campaigns) {
      items.push({
        ConditionCheck: {
          TableName: tableName,
          Key: campaignKey(c.tenant, c.campaignId),
          ConditionExpression: 'attribute_exists(PK)',
        },
      });
      kinds.push({ kind: 'campaign', key: k });
    }
    for (const [k, s] of plan.series) {
      const typesMap = typesMapKnown.has(k) ? 'add' : 'create';
      items.push({
        Update: {
          TableName: tableName,
          Key: s.key,
          ...seriesUpdate(s.adds, { totals: s.totals, types: s.types, typesMap }),
        },
      });
      kinds.push({ kind: 'series', key: k, typesMap });
    }
    for (const l of plan.links.values()) {
      items.push({
        Update: {
          TableName: tableName,
          Key: linkKey(l.code),
          UpdateExpression: `ADD total_clicks :n ${CLEAR_LAST_ACTION}`,
          ConditionExpression: '#id = :id',
          ExpressionAttributeNames: { '#id': 'id' },
          ExpressionAttributeValues: { ':n': l.clicks, ':id': l.id },
        },
      });
      kinds.push({ kind: 'link', id: linkOf(l) });
    }
    topEntries.forEach((t, i) => {
      const before = current[i];
      const old = topValueOf(before);
      items.push({
        Put: {
          TableName: tableName,
          Item: {
            ...t.key,
            ...topAttributes(t.tenant, t.campaignId, t.entity, t.metric, old + t.add, t.reachMs),
          },
          ConditionExpression: before === undefined ? 'attribute_not_exists(PK)' : '#value = :old',
          ...(before === undefined
            ? {}
            : {
                ExpressionAttributeNames: { '#value': 'value' },
                ExpressionAttributeValues: { ':old': old },
              }),
        },
      });
      kinds.push({ kind: 'top' });
    });

    const result = await transactWrite(items);
    if (result.ok) {
      applied += counted;
      checkpoint = last;
      if (typesMapKnown.size > TYPES_MAP_KNOWN_MAX) typesMapKnown.clear();
      for (const [k, s] of plan.series) if (s.types.size > 0) typesMapKnown.add(k);
      continue;
    }
    for (const i of result.failed) {
      const kind = kinds[i];
      if (kind?.kind === 'checkpoint') checkpoint = await readCheckpoint(shardId);
      else if (kind?.kind === 'campaign') goneCampaigns.add(kind.key);
      else if (kind?.kind === 'link') goneLinks.add(kind.id);
      // The day's map of actions by type was not as believed: the next attempt turns the belief.
      else if (kind?.kind === 'series') {
        if (kind.typesMap === 'create') typesMapKnown.add(kind.key);
        else typesMapKnown.delete(kind.key);
      }
      // A top item raised meanwhile by another shard's consumer: the next attempt reads it again.
    }
  }
}
