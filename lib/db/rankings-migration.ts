/**
 * Moves the rankings of a table written before the counting consumer kept boards (issue 27): each
 * old ranking entry (`TOP#<by>#<metric>#<entity>`, an item per entity and metric, sorted by GSI4)
 * becomes the entity's all-time count where the consumer now keeps it (a link's `an_v`, `an_u`,
 * `an_a` on its own item; a referrer's totals item), added exactly once (a marker attribute per
 * metric on the target, in the same conditional write), and is then offered to its campaign's
 * board with the count the target holds now, and deleted.
 *
 * Safe beside a running consumer, which may already raise the same counts from zero: the old
 * count is added to whatever is there, once. Idempotent: run again (cut short, or twice at once)
 * it adds nothing twice, and what it deleted it does not find again. A Scan (`table-migration.ts`):
 * the local stack's start until the table holds its marker, and `npm run table:migrate` for a
 * deployed stage.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  type BoardEntry,
  boardEntriesOf,
  boardKey,
  LINK_TOTALS,
  mergedEntries,
  REFERRER_TOTALS,
  referrerHash,
  referrerTotalsKey,
  sameEntries,
  storedBoardEntries,
  TOP_BY_KEY,
  TOP_METRIC_KEY,
  type TopBy,
  type TopMetric,
} from './entities/analytics.ts';
import { campaignPartition, parseCampaignPartition } from './entities/campaign.ts';
import { CLEAR_LAST_ACTION_ATTRIBUTE, linkKey } from './entities/link.ts';
import { countInParallel, markMigrated, migrated, scanPages } from './table-migration.ts';

/**
 * The layout the migration reads (what the consumer wrote before issue 27; the tests and the
 * bench build old tables with it): a top item per entity and metric, sorted by GSI4.
 */
export type TopEntity =
  | { by: 'referrer'; referrerId: string }
  | { by: 'referral_link'; linkId: number; code: string; url: string | null };

const entityKey = (entity: TopEntity) =>
  entity.by === 'referrer' ? referrerHash(entity.referrerId) : String(entity.linkId);

export function topKey(tenant: string, campaignId: string, entity: TopEntity, metric: TopMetric) {
  return {
    PK: campaignPartition(tenant, campaignId),
    SK: `TOP#${TOP_BY_KEY[entity.by]}#${TOP_METRIC_KEY[metric]}#${entityKey(entity)}`,
  };
}

/** GSI4's partition (legacy): one ranking of one campaign. */
export function topRankingPartition(
  tenant: string,
  campaignId: string,
  by: TopBy,
  metric: TopMetric,
): string {
  return `${campaignPartition(tenant, campaignId)}#TOP#${TOP_BY_KEY[by]}#${TOP_METRIC_KEY[metric]}`;
}

/** Reach times are inverted so that, read from the highest sort key down, earlier reach comes first. */
const REACH_LIMIT_MS = 9_999_999_999_999;

/** GSI4's sort key: the value, then the inverted reach time, both fixed-width digits. */
export function topScore(value: number, reachMs: number): string {
  return `${String(value).padStart(15, '0')}#${String(REACH_LIMIT_MS - reachMs).padStart(13, '0')}`;
}

/** The attributes a top item stores besides its keys (the labels endpoint 17 answers with). */
export function topAttributes(
  tenant: string,
  campaignId: string,
  entity: TopEntity,
  metric: TopMetric,
  value: number,
  reachMs: number,
) {
  return {
    type: 'analytics_top',
    value,
    reach_ms: reachMs,
    GSI4PK: topRankingPartition(tenant, campaignId, entity.by, metric),
    GSI4SK: topScore(value, reachMs),
    ...(entity.by === 'referrer'
      ? { referrer_id: entity.referrerId }
      : { link_id: entity.linkId, referral_code: entity.code, referral_link: entity.url }),
  };
}

export const RANKINGS_MARKER = { PK: 'MIGRATION#rankings-boards', SK: 'DONE' } as const;

const BY: Record<string, TopBy> = { L: 'referral_link', R: 'referrer' };
const METRIC: Record<string, TopMetric> = {
  r: 'referred_users',
  v: 'visits',
  u: 'unique_visits',
  a: 'actions',
};

type Item = Record<string, unknown>;
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Moves every old ranking entry; returns how many it moved. */
export async function migrateRankings(db: DynamoDBDocumentClient, tableName: string): Promise<number> {
  let moved = 0;
  for await (const page of scanPages(db, tableName, {
    FilterExpression: 'begins_with(SK, :top)',
    ExpressionAttributeValues: { ':top': 'TOP#' },
  })) {
    moved += await countInParallel(page, (item) => moveEntry(db, tableName, item));
  }
  await markMigrated(db, tableName, RANKINGS_MARKER);
  return moved;
}

export const rankingsMigrated = (db: DynamoDBDocumentClient, tableName: string) =>
  migrated(db, tableName, RANKINGS_MARKER);

async function moveEntry(db: DynamoDBDocumentClient, tableName: string, old: Item): Promise<boolean> {
  const [, by, metric] = String(old.SK).split('#') as [string, string, string];
  const campaign = parseCampaignPartition(String(old.PK));
  if (!campaign || !BY[by] || !METRIC[metric]) return false;
  const entry =
    BY[by] === 'referral_link'
      ? await moveLink(db, tableName, old, METRIC[metric])
      : await moveReferrer(db, tableName, old, campaign, METRIC[metric]);
  if (entry)
    await offer(db, tableName, boardKey(campaign.tenant, campaign.campaignId, BY[by], METRIC[metric]), entry);
  await db.send(new DeleteCommand({ TableName: tableName, Key: { PK: old.PK, SK: old.SK } }));
  return true;
}

/** Adds the old count to the target once (the marker in the same write), and returns the target as it is. */
async function addOnce(
  db: DynamoDBDocumentClient,
  tableName: string,
  key: { PK: string; SK: string },
  metric: TopMetric,
  totals: { count: string; reach: string },
  old: Item,
  extra: {
    condition?: string;
    names?: Record<string, string>;
    values?: Record<string, unknown>;
    sets?: Record<string, unknown>;
    removes?: readonly string[];
  } = {},
): Promise<Item | undefined> {
  const marker = `migrated_${metric}`;
  const sets = Object.entries(extra.sets ?? {});
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        // total_referrals is the link's count already: only its reach time is moved.
        UpdateExpression: `SET #m = :true, #reach = if_not_exists(#reach, :reach)${sets.map((_, i) => `, #x${i} = if_not_exists(#x${i}, :x${i})`).join('')}${totals.count === 'total_referrals' ? '' : ' ADD #count :value'}${extra.removes?.length ? ` REMOVE ${extra.removes.join(', ')}` : ''}`,
        ConditionExpression: ['attribute_not_exists(#m)', extra.condition].filter(Boolean).join(' AND '),
        ExpressionAttributeNames: {
          '#m': marker,
          '#reach': totals.reach,
          ...(totals.count === 'total_referrals' ? {} : { '#count': totals.count }),
          ...Object.fromEntries(sets.map(([name], i) => [`#x${i}`, name])),
          ...extra.names,
        },
        ExpressionAttributeValues: {
          ':true': true,
          ':reach': num(old.reach_ms),
          ...(totals.count === 'total_referrals' ? {} : { ':value': num(old.value) }),
          ...Object.fromEntries(sets.map(([, value], i) => [`:x${i}`, value])),
          ...extra.values,
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes;
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    return Item;
  }
}

async function moveLink(
  db: DynamoDBDocumentClient,
  tableName: string,
  old: Item,
  metric: TopMetric,
): Promise<BoardEntry | undefined> {
  const code = old.referral_code;
  if (typeof code !== 'string' || typeof old.link_id !== 'number') return undefined;
  const totals = LINK_TOTALS[metric];
  // Only the very link ranked (not a code reservation, not a link that re-issued the code).
  const link = await addOnce(db, tableName, linkKey(code), metric, totals, old, {
    // Every write of a link takes an action off it (`CLEAR_LAST_ACTION`): left on, the stream's
    // readers would take this write for that action's commit again.
    removes: [CLEAR_LAST_ACTION_ATTRIBUTE],
    condition: '#id = :id',
    names: { '#id': 'id' },
    values: { ':id': old.link_id },
  });
  if (link?.id !== old.link_id) return undefined;
  return {
    k: `L${old.link_id}`,
    label: code,
    value: num(link[totals.count]),
    reachMs: num(link[totals.reach]),
  };
}

async function moveReferrer(
  db: DynamoDBDocumentClient,
  tableName: string,
  old: Item,
  campaign: { tenant: string; campaignId: string },
  metric: TopMetric,
): Promise<BoardEntry | undefined> {
  const referrerId = old.referrer_id;
  if (typeof referrerId !== 'string') return undefined;
  const totals = REFERRER_TOTALS[metric];
  const item = await addOnce(
    db,
    tableName,
    referrerTotalsKey(campaign.tenant, campaign.campaignId, referrerId),
    metric,
    totals,
    old,
    {
      sets: { type: 'analytics_referrer' },
    },
  );
  return {
    k: `R${referrerHash(referrerId)}`,
    label: referrerId,
    value: num(item?.[totals.count]),
    reachMs: num(item?.[totals.reach]),
  };
}

async function offer(
  db: DynamoDBDocumentClient,
  tableName: string,
  key: { PK: string; SK: string },
  entry: BoardEntry,
) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
    const version = num(Item?.version);
    const before = boardEntriesOf(Item);
    const merged = mergedEntries(before, [entry]);
    if (sameEntries(merged, before)) return;
    try {
      await db.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            ...key,
            type: 'analytics_board',
            version: version + 1,
            entries: storedBoardEntries(merged),
          },
          ConditionExpression: Item ? '#v = :v' : 'attribute_not_exists(PK)',
          ...(Item
            ? { ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': version } }
            : {}),
        }),
      );
      return;
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
  throw new Error(`board ${key.SK} of ${key.PK} kept changing`);
}
