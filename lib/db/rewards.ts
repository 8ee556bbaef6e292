/**
 * The rewards ledger's reads and writes: what `lib/domain/rewards.ts` decides, applied with
 * conditional writes so that every rule of the ledger holds under retries, replays and concurrent
 * requests (docs/rewards.md):
 *
 * - creation: a source's rewards in one transaction of puts, each only if its (derived) key is
 *   absent, beside a check that the campaign still exists: a replay writes nothing;
 * - every change of state: a put of each changed reward conditioned on the state and `adjusted`
 *   it was read in (a change read against a stale reward fails and runs again on a fresh read);
 * - a payout: ONE transaction of the payout item, the campaign's check and each paid reward,
 *   conditioned as above: two payouts at once cannot both pay a reward.
 */
import { randomBytes } from 'node:crypto';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound, validationError } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import type { RewardRecipient } from '../domain/reward-rules.ts';
import {
  approveReward,
  type Balance,
  balanceOf,
  type Conversion,
  LedgerError,
  ledgerApiError,
  MAX_PAYOUT_REWARDS,
  payRewards,
  REWARD_STATUSES,
  type Reward,
  type RewardStatus,
  refundEffect,
  releaseReward,
  selectPayout,
  type Transition,
  voidReward,
} from '../domain/rewards.ts';
import { campaignExists, campaignStillExists } from './campaigns.ts';
import { CURRENCY_LOCK, campaignKey, campaignPartition, currencyOfItem } from './entities/campaign.ts';
import {
  PAYOUT_ORDER,
  PAYOUT_PREFIX,
  type Payout,
  payoutFromItem,
  payoutItem,
  RECIPIENT_PAYOUTS_INDEX,
  recipientPayoutsPartition,
  toPayoutObject,
} from './entities/payout.ts';
import {
  DUE_REWARDS_INDEX,
  DUE_REWARDS_PARTITION,
  dueUpTo,
  RECIPIENT_REWARDS_INDEX,
  REWARD_LIST_ORDER,
  REWARD_STATUS_INDEX,
  recipientPrefix,
  recipientRewardsPartition,
  rewardFromItem,
  rewardItem,
  rewardKeyOfId,
  rewardStatusPartition,
  toRewardObject,
} from './entities/reward.ts';
import { rememberAnswer } from './idempotency.ts';
import { getItems } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor, type Page } from './table/cursor.ts';
import { mergeNewestFirst } from './table/merge-pages.ts';
import { queryAll, queryPage } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

/** A reward as stored: the domain's reward and its adjustments' ids. */
export interface StoredReward {
  reward: Reward;
  adjustmentIds: string[];
}

/** A change read against a reward that changed meanwhile runs again, at most this many times. */
const ATTEMPTS = 5;

const conditionOn = (read: Reward) => ({
  ConditionExpression: '#status = :status AND adjusted = :adjusted',
  ExpressionAttributeNames: { '#status': 'status' },
  ExpressionAttributeValues: { ':status': read.status, ':adjusted': read.adjusted },
});

/**
 * Create a signup's or a conversion's rewards, exactly once: the puts succeed only where the
 * derived key is absent, all beside the campaign's check (a campaign deleted meanwhile gets no
 * reward its purge could miss). A reward that exists already was made by an earlier run of the
 * same source (a retry, a replayed batch): it is left as it is and the others are written.
 * Returns the rewards this call created.
 */
export async function createRewards(
  tenant: string,
  campaignId: string,
  rewards: readonly Reward[],
  /** Written with the rewards (the conversion's `reward_ids`); one that fails: the source is gone. */
  extra: Parameters<typeof transactWrite>[0] = [],
  /**
   * The campaign still counts in the rewards' currency, and from now on keeps it: `locked` says
   * whether the campaign item was read locked already (then it is only checked, not written).
   */
  currency?: { code: string; locked: boolean },
): Promise<Reward[]> {
  let pending = [...rewards];
  const now = new Date();
  for (let attempt = 0; pending.length > 0 && attempt < ATTEMPTS; attempt++) {
    const result = await transactWrite([
      ...pending.map((r) => ({
        Put: {
          TableName: tableName,
          Item: rewardItem(tenant, r, [], now),
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      })),
      currency ? campaignCountsIn(tenant, campaignId, currency) : campaignStillExists(tenant, campaignId),
      ...extra,
    ]);
    if (result.ok) return pending;
    // The currency changed since the campaign was read: the caller reads it again (a retry).
    if (result.old.has(pending.length)) throw new Error('the campaign changed its currency meanwhile');
    if ([...result.failed].some((i) => i >= pending.length)) return [];
    pending = pending.filter((_, i) => !result.failed.has(i));
  }
  return [];
}

/**
 * The campaign's part of a reward transaction with a currency: it exists and counts in it; unless
 * read locked, it is locked from now on (`currency_locked`, which a PATCH of `currency` checks, as
 * the first conversion does): rewards in two currencies never meet in one balance or payout.
 */
function campaignCountsIn(tenant: string, campaignId: string, currency: { code: string; locked: boolean }) {
  const check = {
    TableName: tableName,
    Key: campaignKey(tenant, campaignId),
    ConditionExpression: `attribute_exists(PK) AND ${
      currency.code === 'USD'
        ? '(attribute_not_exists(#currency) OR #currency = :currency)'
        : '#currency = :currency'
    }`,
    ExpressionAttributeNames: { '#currency': 'currency' },
    ExpressionAttributeValues: { ':currency': currency.code },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  if (currency.locked) return { ConditionCheck: check };
  return {
    Update: {
      ...check,
      UpdateExpression: 'SET #locked = :true',
      ExpressionAttributeNames: { ...check.ExpressionAttributeNames, '#locked': CURRENCY_LOCK },
      ExpressionAttributeValues: { ...check.ExpressionAttributeValues, ':true': true },
    },
  };
}

async function getStored(tenant: string, id: string): Promise<StoredReward | undefined> {
  const key = rewardKeyOfId(tenant, id);
  if (!key) return undefined;
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return Item ? rewardFromItem(Item) : undefined;
}

/** A reward with its adjustments and (for an adjustment) its parent, all strongly consistent. */
export async function readFamily(
  tenant: string,
  id: string,
): Promise<{ stored: StoredReward; adjustments: StoredReward[]; parent?: StoredReward } | undefined> {
  const stored = await getStored(tenant, id);
  if (!stored) return undefined;
  const parentId = stored.reward.adjusts;
  const keys = [...stored.adjustmentIds, ...(parentId ? [parentId] : [])].map((a) =>
    rewardKeyOfId(tenant, a),
  );
  const items = await getItems(keys.filter((k) => k !== undefined));
  const found = items.flatMap((item) => (item ? [rewardFromItem(item)] : []));
  return {
    stored,
    adjustments: found.filter((f) => f.reward.adjusts === id),
    parent: found.find((f) => f.reward.id === parentId),
  };
}

/**
 * Write `changed` rewards (whole items) in one transaction, each conditioned on the state it was
 * read in (`read`, by id), beside `extra` items. `false`: something changed meanwhile.
 */
async function writeChanges(
  tenant: string,
  read: readonly StoredReward[],
  changed: readonly Reward[],
  extra: Parameters<typeof transactWrite>[0] = [],
  remember?: Parameters<typeof transactWrite>[1],
): Promise<{ ok: true } | { ok: false; failed: ReadonlySet<number> }> {
  const byId = new Map(read.map((s) => [s.reward.id, s]));
  const now = new Date();
  const puts = changed.map((r) => {
    const before = byId.get(r.id);
    if (!before) throw new Error(`a change to a reward not read: ${r.id}`);
    return {
      Put: {
        TableName: tableName,
        Item: rewardItem(
          tenant,
          r,
          before.adjustmentIds,
          r.status !== before.reward.status ? now : undefined,
        ),
        ...conditionOn(before.reward),
      },
    };
  });
  const result = await transactWrite([...puts, ...extra], remember);
  return result.ok ? result : { ok: false, failed: result.failed };
}

/**
 * Run a transition of the reward `id`'s family, reading again when it changed meanwhile. The
 * write is conditioned on the campaign too: a reward of a deleted campaign (not purged yet) is
 * gone for every endpoint at once, as its campaign's other records are. With `idempotency`, the
 * answer (the reward as changed) is stored in the same transaction.
 */
async function transition(
  tenant: string,
  id: string,
  decide: (family: NonNullable<Awaited<ReturnType<typeof readFamily>>>) => Transition,
  idempotency?: IdempotentRequest,
): Promise<Reward> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const family = await readFamily(tenant, id);
    if (!family) throw new LedgerError('reward_not_found');
    const t = decide(family);
    if (!t.ok) throw new LedgerError(t.error, family.stored.reward.status);
    const changed = t.changed.find((r) => r.id === id) ?? family.stored.reward;
    const read = [family.stored, ...family.adjustments];
    const written = await writeChanges(
      tenant,
      read,
      t.changed,
      [campaignStillExists(tenant, changed.campaign_id)],
      idempotency && rememberAnswer(idempotency, 200, toRewardObject(changed)),
    );
    if (written.ok) return changed;
    if (written.failed.has(t.changed.length)) throw new LedgerError('reward_not_found');
  }
  throw new Error(`reward ${id} kept changing under a transition`);
}

const familyOf = (f: NonNullable<Awaited<ReturnType<typeof readFamily>>>) => ({
  reward: f.stored.reward,
  adjustments: f.adjustments.map((a) => a.reward),
});

/** Endpoint 28. */
export const approveRewardById = (
  tenant: string,
  id: string,
  nowMs: number,
  idempotency?: IdempotentRequest,
) => transition(tenant, id, (f) => approveReward(familyOf(f), nowMs), idempotency);

/** Endpoint 29. */
export const voidRewardById = (tenant: string, id: string, reason: string, idempotency?: IdempotentRequest) =>
  transition(tenant, id, (f) => voidReward(familyOf(f), f.parent?.reward, reason), idempotency);

/**
 * What a refund of `conversion` (its `refunded_amount` already raised by the conversion's own
 * write) does to its rewards `rewardIds` (recomputed by the caller with `rewardsForConversion`, as
 * when they were created): each reward voided with its followers, or lowered by a new adjustment
 * put only if absent beside the reward's `adjusted` and `adjustment_ids`, conditioned on the
 * reward as read. A replay, or a refund processed after a later one, finds nothing left to do.
 */
export async function applyRefund(
  tenant: string,
  rewardIds: readonly string[],
  conversion: Pick<Conversion, 'amount' | 'refunded_amount'>,
  nowMs: number,
): Promise<Reward[]> {
  const made: Reward[] = [];
  for (const id of rewardIds) {
    for (let attempt = 0; ; attempt++) {
      if (attempt >= ATTEMPTS) throw new Error(`reward ${id} kept changing under a refund`);
      const family = await readFamily(tenant, id);
      if (!family) break;
      const effect = refundEffect(familyOf(family), conversion, nowMs);
      if (!effect) break;
      const read = [family.stored, ...family.adjustments];
      if (effect.kind === 'void') {
        if ((await writeChanges(tenant, read, effect.changed)).ok) break;
        continue;
      }
      const parent = {
        Put: {
          TableName: tableName,
          Item: rewardItem(tenant, effect.parent, [...family.stored.adjustmentIds, effect.adjustment.id]),
          ...conditionOn(family.stored.reward),
        },
      };
      const adjustment = {
        Put: {
          TableName: tableName,
          Item: rewardItem(tenant, effect.adjustment, [], new Date(nowMs)),
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      };
      if ((await transactWrite([parent, adjustment])).ok) {
        made.push(effect.adjustment);
        break;
      }
    }
  }
  return made;
}

/** Rewards the due index lists per Query page of the scheduled release. */
const RELEASE_PAGE = 100;

/**
 * The scheduled release: every `pending` reward whose hold has ended becomes `approved`, found with
 * one Query of the due index (eventually consistent: each release reads the reward by key and is
 * conditioned on it, so a stale index entry releases nothing twice). Returns how many it released;
 * `more` when the page was full and released something (the caller runs it again at once).
 */
export async function releaseDueRewards(nowMs: number): Promise<{ released: number; more: boolean }> {
  const page = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: DUE_REWARDS_INDEX.indexName,
      KeyConditionExpression: '#pk = :pk AND #sk <= :due',
      ExpressionAttributeNames: { '#pk': DUE_REWARDS_INDEX.partitionKey, '#sk': DUE_REWARDS_INDEX.sortKey },
      ExpressionAttributeValues: { ':pk': DUE_REWARDS_PARTITION, ':due': dueUpTo(nowMs) },
      Limit: RELEASE_PAGE,
    }),
  );
  const due = (page.Items ?? []).flatMap((item) =>
    typeof item.tenant === 'string' && typeof item.id === 'string'
      ? [{ tenant: item.tenant, id: item.id }]
      : [],
  );
  const results = await Promise.allSettled(
    due.map(({ tenant, id }) => transition(tenant, id, (f) => releaseReward(familyOf(f), nowMs))),
  );
  for (const r of results) {
    // Gone (a purged campaign) or no longer pending (approved, voided by the API meanwhile): done.
    if (r.status === 'rejected' && !(r.reason instanceof LedgerError)) throw r.reason;
  }
  const released = results.filter((r) => r.status === 'fulfilled').length;
  // A full page that released nothing holds only entries the index has not dropped yet (rewards
  // released or voided a moment ago): the next run reads them again, this one stops.
  return { released, more: page.LastEvaluatedKey !== undefined && released > 0 };
}

/** Every reward and adjustment of one recipient, strongly consistent: one Query (paged past 1 MB). */
export async function recipientRewards(
  tenant: string,
  campaignId: string,
  recipient: RewardRecipient,
  recipientId: string,
): Promise<StoredReward[]> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeValues: {
      ':pk': campaignPartition(tenant, campaignId),
      ':prefix': recipientPrefix(recipient, recipientId),
    },
    ConsistentRead: true,
  });
  return items.map(rewardFromItem);
}

/** Endpoint 30's sums (without the currency, which is the campaign's). */
export async function rewardBalance(
  tenant: string,
  campaignId: string,
  recipient: RewardRecipient,
  recipientId: string,
): Promise<Balance> {
  const items = await queryAll({
    KeyConditionExpression: 'PK = :pk AND begins_with(SK, :prefix)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pk': campaignPartition(tenant, campaignId),
      ':prefix': recipientPrefix(recipient, recipientId),
    },
    ProjectionExpression: '#status, amount',
    ConsistentRead: true,
  });
  return balanceOf(
    items.map((item) => {
      const { status, amount } = item;
      if (typeof amount !== 'number' || typeof status !== 'string') throw new Error('malformed reward item');
      return { status: status as Reward['status'], amount };
    }),
  );
}

export interface PayoutRequest {
  campaignId: string;
  recipient: RewardRecipient;
  recipientId: string;
  reference: string | null;
  nowMs: number;
}

/** A payout as read and decided, not yet written: what `commitPayout` writes or refuses. */
export interface PayoutPlan {
  read: StoredReward[];
  paid: Reward[];
  payout: Payout;
  hasMore: boolean;
}

/** The reads and the decision of a payout (the recipient's rewards, one Query). */
export async function planPayout(tenant: string, request: PayoutRequest): Promise<PayoutPlan> {
  const read = await recipientRewards(tenant, request.campaignId, request.recipient, request.recipientId);
  const selection = selectPayout(
    read.map((s) => s.reward),
    MAX_PAYOUT_REWARDS,
  );
  if (!selection.ok) throw new LedgerError(selection.error);
  const payout: Payout = {
    id: `po_${randomBytes(16).toString('base64url')}`,
    campaign_id: request.campaignId.toLowerCase(),
    recipient: request.recipient,
    recipient_id: request.recipientId,
    amount: selection.amount,
    currency: (selection.rewards[0] as Reward).currency,
    reward_ids: selection.rewards.map((r) => r.id),
    reference: request.reference,
    created_ms: request.nowMs,
  };
  return { read, paid: payRewards(selection.rewards, payout.id), payout, hasMore: selection.hasMore };
}

/**
 * The payout's ONE transaction: the payout item, the campaign's check, and each reward flipped to
 * `paid` only if it is still `approved` with the adjustments it was read with. `false`: a reward
 * changed since the plan was read (another payout paid it, a refund adjusted it).
 */
export async function commitPayout(
  tenant: string,
  plan: PayoutPlan,
  idempotency?: IdempotentRequest,
): Promise<boolean> {
  const written = await writeChanges(
    tenant,
    plan.read,
    plan.paid,
    [
      campaignStillExists(tenant, plan.payout.campaign_id),
      {
        Put: {
          TableName: tableName,
          Item: payoutItem(tenant, plan.payout),
          ConditionExpression: 'attribute_not_exists(PK)',
        },
      },
    ],
    idempotency && rememberAnswer(idempotency, 201, payoutAnswer(plan.payout, plan.hasMore)),
  );
  if (written.ok) return true;
  if (written.failed.has(plan.paid.length)) throw new LedgerError('campaign_not_found');
  return false;
}

/**
 * Endpoint 31: pay every approved reward of one recipient (at most `MAX_PAYOUT_REWARDS`;
 * `hasMore` says more wait), in one transaction (`commitPayout`). Of two payouts at once, one
 * commits; the other's conditions fail on the rewards the first paid, and it runs again on what
 * is left: a payout of the rest, or `nothing_to_pay`.
 */
export async function recordPayout(
  tenant: string,
  request: PayoutRequest,
  idempotency?: IdempotentRequest,
): Promise<{ payout: Payout; hasMore: boolean }> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const plan = await planPayout(tenant, request);
    if (await commitPayout(tenant, plan, idempotency)) return { payout: plan.payout, hasMore: plan.hasMore };
  }
  throw new Error('a payout kept meeting concurrent changes');
}

/** Endpoint 31's body: the payout and whether approved rewards wait for another one. */
export const payoutAnswer = (payout: Payout, hasMore: boolean) => ({
  ...toPayoutObject(payout),
  has_more: hasMore,
});

/**
 * Endpoint 31 as the API answers it. A campaign that does not exist has no rewards: its payout
 * would be `nothing_to_pay`, so only then is the campaign read (404), and a payout that pays costs
 * no read of it (the transaction checks it).
 */
export async function createPayout(
  tenant: string,
  request: PayoutRequest,
  idempotency?: IdempotentRequest,
): Promise<ReturnType<typeof payoutAnswer>> {
  try {
    const { payout, hasMore } = await recordPayout(tenant, request, idempotency);
    return payoutAnswer(payout, hasMore);
  } catch (err) {
    if (!(err instanceof LedgerError)) throw err;
    if (err.code === 'campaign_not_found') throw campaignNotFound(request.campaignId);
    if (!(await campaignExists(tenant, request.campaignId))) throw campaignNotFound(request.campaignId);
    throw ledgerApiError(err);
  }
}

/** Endpoints 28 and 29 as the API answers them: the reward object, or the contract's error. */
export async function changeReward(change: () => Promise<Reward>) {
  try {
    return toRewardObject(await change());
  } catch (err) {
    throw err instanceof LedgerError ? ledgerApiError(err) : err;
  }
}

/**
 * Endpoint 30: the recipient's sums by state and the campaign's currency, read together (the
 * campaign's item, and one strongly consistent Query of the recipient's rewards).
 */
export async function recipientBalance(
  tenant: string,
  campaignId: string,
  recipient: RewardRecipient,
  recipientId: string,
): Promise<Balance & { currency: string }> {
  const [campaign, balance] = await Promise.all([
    db.send(
      new GetCommand({
        TableName: tableName,
        Key: campaignKey(tenant, campaignId),
        ConsistentRead: true,
        ProjectionExpression: 'PK, currency',
      }),
    ),
    rewardBalance(tenant, campaignId, recipient, recipientId),
  ]);
  if (!campaign.Item) throw campaignNotFound(campaignId);
  return { ...balance, currency: currencyOfItem(campaign.Item) };
}

type RewardObject = ReturnType<typeof toRewardObject>;

/** An index item's position in the reward lists (its index sort key). */
const listOrderOf = (item: Record<string, unknown>, index: { sortKey: string }) =>
  String(item[index.sortKey]);

/**
 * Endpoint 27: a page of a campaign's rewards, newest first, of one state or all, of one recipient
 * (both kinds) or all. One state: one Query of its index partition. Every state: the five
 * partitions' pages, read at once from the same position and merged (`mergeNewestFirst`), so a
 * page still costs the same whatever the list's size. Beside it the campaign's existence; then
 * the page's items by key (no index projects a reward's fields), eventually consistent like the
 * index. A reward whose state changed since the index copy is shown as it is now, and left out of
 * a list of another state (it is in its new state's list).
 */
export async function listRewards(
  tenant: string,
  campaignId: string,
  options: { status?: RewardStatus; recipientId?: string; limit: number; cursor?: string },
): Promise<Page<RewardObject>> {
  const scope = {
    kind: 'rewards' as const,
    tenant,
    campaignId,
    filter: JSON.stringify([options.status ?? null, options.recipientId ?? null]),
  };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, REWARD_LIST_ORDER) : undefined;
  const index = options.recipientId === undefined ? REWARD_STATUS_INDEX : RECIPIENT_REWARDS_INDEX;
  const partitionOf = (status: RewardStatus) =>
    options.recipientId === undefined
      ? rewardStatusPartition(tenant, campaignId, status)
      : recipientRewardsPartition(tenant, campaignId, options.recipientId, status);
  // The id after the time: of the shape, but perhaps no id the API made (a forged cursor).
  const afterKey = after && rewardKeyOfId(tenant, after.slice(after.indexOf('#') + 1));
  if (after && !afterKey)
    throw validationError([{ field: 'cursor', message: 'is not a valid cursor for this list' }]);
  const start = after && afterKey ? { sortKey: after, tableKey: afterKey } : undefined;
  const statuses = options.status ? [options.status] : REWARD_STATUSES;
  const [pages, exists] = await Promise.all([
    Promise.all(
      statuses.map((status) =>
        queryPage({
          index,
          partition: partitionOf(status),
          limit: options.limit,
          newestFirst: true,
          after: start,
        }),
      ),
    ),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const { items: shown, more } = mergeNewestFirst(pages, options.limit, (item) => listOrderOf(item, index));
  const read = shown.length > 0 ? await getItems(shown.map(tableKeyOf), { consistent: false }) : [];
  const rewards = read.flatMap((item) => {
    if (!item) return [];
    const { reward } = rewardFromItem(item);
    return options.status && reward.status !== options.status ? [] : [toRewardObject(reward)];
  });
  const last = shown.at(-1);
  return {
    items: rewards,
    nextCursor: more && last ? encodeSortKeyCursor(scope, listOrderOf(last, index)) : undefined,
  };
}

const tableKeyOf = (item: Record<string, unknown>) => ({ PK: String(item.PK), SK: String(item.SK) });

/**
 * Endpoint 32: a page of a campaign's payouts, newest first, all of them (one Query of the
 * campaign's partition, read backwards) or one recipient's (one Query of GSI3, then the page's
 * items by key: the index projects no payout field), beside the campaign's existence.
 */
export async function listPayouts(
  tenant: string,
  campaignId: string,
  options: { recipientId?: string; limit: number; cursor?: string },
): Promise<Page<ReturnType<typeof toPayoutObject>>> {
  const { recipientId } = options;
  const scope = { kind: 'payouts' as const, tenant, campaignId, filter: recipientId };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, PAYOUT_ORDER) : undefined;
  const partition = campaignPartition(tenant, campaignId);
  const query =
    recipientId === undefined
      ? queryPage({
          partition,
          sortKeyPrefix: PAYOUT_PREFIX,
          limit: options.limit,
          newestFirst: true,
          after: after ? { sortKey: `${PAYOUT_PREFIX}${after}` } : undefined,
        })
      : queryPage({
          index: RECIPIENT_PAYOUTS_INDEX,
          partition: recipientPayoutsPartition(tenant, campaignId, recipientId),
          limit: options.limit,
          newestFirst: true,
          after: after
            ? { sortKey: after, tableKey: { PK: partition, SK: `${PAYOUT_PREFIX}${after}` } }
            : undefined,
        });
  const [page, exists] = await Promise.all([query, campaignExists(tenant, campaignId)]);
  if (!exists) throw campaignNotFound(campaignId);
  const items =
    recipientId === undefined || page.items.length === 0
      ? page.items
      : (await getItems(page.items.map(tableKeyOf), { consistent: false })).flatMap((item) =>
          item ? [item] : [],
        );
  const last = page.last;
  return {
    items: items.map((item) => toPayoutObject(payoutFromItem(item))),
    nextCursor:
      page.more && last ? encodeSortKeyCursor(scope, String(last.SK).slice(PAYOUT_PREFIX.length)) : undefined,
  };
}
