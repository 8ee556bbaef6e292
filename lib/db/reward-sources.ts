/**
 * What makes rewards happen (docs/rewards.md): the table stream's records of signups, conversions
 * and refunds, turned into rewards by the ledger's rules (`lib/domain/rewards.ts`) and written by
 * its storage (`rewards.ts`). Run by `functions/stream/create-rewards.ts` in AWS and by the local
 * stack's stream poller, with the same filters (`REWARD_SOURCE_FILTERS`).
 *
 * Exactly once: a reward's id derives from its rule and source, and its put is conditioned on the
 * id's absence, so a replayed batch, or a consumer killed mid-batch and run again, writes nothing
 * new. What a replay must decide the same way is stored the first time: a signup's review reasons
 * (on the referred user, first decision wins), and a conversion's reward ids (on the conversion,
 * in the rewards' own transaction), which its refunds read.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { type RewardRule, rulesInForce } from '../domain/reward-rules.ts';
import {
  type ReviewReason,
  type RewardCampaign,
  reviewReasons,
  rewardsForConversion,
  rewardsForSignup,
} from '../domain/rewards.ts';
import { parseTimestamp } from '../domain/time.ts';
import {
  CURRENCY_LOCK,
  campaignKey,
  currencyOfItem,
  reviewSignupsPerHourOf,
  ruleSetsOfItem,
} from './entities/campaign.ts';
import { type ConversionItem, conversionFromItem, conversionListPrefix } from './entities/conversion.ts';
import type { StoredItem } from './entities/decode.ts';
import { linkOrder } from './entities/link.ts';
import {
  REFERRED_USER_LIST_INDEX,
  referredUserFromItem,
  referredUserKey,
  referredUserListPartition,
} from './entities/referred-user.ts';
import { MARKED_SIGNUPS, signupVisitorKey } from './entities/signup-visitor.ts';
import { applyRefund, createRewards } from './rewards.ts';
import { db, tableName } from './table/client.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export { REWARD_SOURCE_FILTERS } from './reward-source-filter.ts';

/** A record this module acts on, read from its new image. */
export type RewardSource =
  | { kind: 'signup'; item: StoredItem }
  | { kind: 'conversion'; item: StoredItem }
  | { kind: 'refund'; item: StoredItem };

interface RecordLike {
  eventName?: string;
  dynamodb?: { NewImage?: Record<string, unknown> };
}

/** The source a record is, or undefined for anything else (the filters pass nothing else). */
export function rewardSourceOf(record: RecordLike): RewardSource | undefined {
  const image = record.dynamodb?.NewImage;
  if (!image) return undefined;
  // biome-ignore lint/suspicious/noExplicitAny: Lambda's and the SDK's AttributeValue types differ only nominally.
  const item = unmarshall(image as any) as StoredItem;
  if (record.eventName === 'INSERT' && item.type === 'referred_user') return { kind: 'signup', item };
  if (record.eventName === 'INSERT' && item.type === 'conversion') return { kind: 'conversion', item };
  if (record.eventName === 'MODIFY' && item.type === 'conversion') return { kind: 'refund', item };
  return undefined;
}

/** The campaign key of a source's item: records are processed in order per campaign. */
export const campaignOfSource = (source: RewardSource) => String(source.item.PK);

/** Campaign items read once per batch (strongly consistent: a PATCH of rules just before counts). */
export class CampaignReads {
  readonly #reads = new Map<string, Promise<StoredItem | undefined>>();

  get(tenant: string, campaignId: string): Promise<StoredItem | undefined> {
    const key = `${tenant}\u0000${campaignId}`;
    let read = this.#reads.get(key);
    if (!read) {
      read = db
        .send(
          new GetCommand({
            TableName: tableName,
            Key: campaignKey(tenant, campaignId),
            ConsistentRead: true,
          }),
        )
        .then((r) => r.Item);
      this.#reads.set(key, read);
      read.catch(() => this.#reads.delete(key));
    }
    return read;
  }
}

/** Act on one source: create its rewards, or apply its refund. Throws on a passing failure (retry). */
export async function processRewardSource(source: RewardSource, campaigns: CampaignReads): Promise<void> {
  if (source.kind === 'signup') return rewardSignup(source.item, campaigns);
  const conversion = conversionFromItem(source.item);
  if (source.kind === 'conversion') return rewardConversion(conversion, campaigns);
  return refundConversion(conversion);
}

const rewardCampaign = (campaignId: string, currency: string, rules: RewardRule[]): RewardCampaign => ({
  id: campaignId,
  currency,
  reward_rules: rules,
});

/** The signup's commit time in ms: its list position holds it (`created_at` has seconds only). */
function signupMs(item: StoredItem): number {
  const order = item.GSI2SK;
  const ms = typeof order === 'string' ? Number(order.split('#')[0]) : Number.NaN;
  if (Number.isSafeInteger(ms)) return ms;
  const at = parseTimestamp(String(item.created_at));
  if (!at) throw new Error(`referred user ${String(item.SK)} has no creation time`);
  return at.getTime();
}

/** The link's referrer, which the referrer list's partition names (`referredUserListKeys`). */
function referrerOf(item: StoredItem, tenant: string, campaignId: string): string | null {
  const partition = item.GSI3PK;
  const prefix = `${referredUserListPartition(tenant, campaignId, { kind: 'campaign' })}#R#`;
  return typeof partition === 'string' && partition.startsWith(prefix)
    ? partition.slice(prefix.length)
    : null;
}

async function rewardSignup(stored: StoredItem, campaigns: CampaignReads): Promise<void> {
  const user = referredUserFromItem(stored);
  const campaign = await campaigns.get(user.tenant, user.campaign_id);
  if (!campaign) return; // deleted: its purge takes everything
  const createdMs = signupMs(stored);
  const rules = rulesInForce(ruleSetsOfItem(campaign), createdMs);
  // A campaign without rules at the signup's commit rewards nothing and keeps no signals.
  if (rules.length === 0) return;
  const referrerId = referrerOf(stored, user.tenant, user.campaign_id);
  const reasons = await signupReviewReasons(user.tenant, user.campaign_id, user.referred_user_id, () =>
    computeSignupReasons({
      tenant: user.tenant,
      campaignId: user.campaign_id,
      referrerId,
      createdMs,
      id: user.id,
      perHour: reviewSignupsPerHourOf(campaign),
      referredUserId: user.referred_user_id,
      linkId: user.link_id,
      visitor: typeof stored.visitor === 'string' ? stored.visitor : undefined,
    }),
  );
  if (reasons === undefined) return; // the referred user is gone (a purge)
  const rewards = rewardsForSignup(
    rewardCampaign(user.campaign_id, currencyOfItem(campaign), rules),
    { referred_user_id: user.referred_user_id, referrer_id: referrerId, created_ms: createdMs },
    reasons,
  );
  if (rewards.length > 0)
    await createRewards(user.tenant, user.campaign_id, rewards, [], {
      code: currencyOfItem(campaign),
      locked: campaign[CURRENCY_LOCK] === true,
    });
}

/**
 * The signup's review reasons, decided once: stored on the referred user the first time
 * (`if_not_exists`), and what is stored is what every later run (a replay) and the referred user's
 * conversions use. Undefined when the referred user is gone.
 */
async function signupReviewReasons(
  tenant: string,
  campaignId: string,
  referredUserId: string,
  compute: () => Promise<ReviewReason[]>,
): Promise<ReviewReason[] | undefined> {
  const reasons = await compute();
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: referredUserKey(tenant, campaignId, referredUserId),
        UpdateExpression: 'SET review_reasons = if_not_exists(review_reasons, :reasons)',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':reasons': reasons },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return (Attributes?.review_reasons as ReviewReason[] | undefined) ?? reasons;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return undefined;
    throw err;
  }
}

interface SignupSignalsInput {
  tenant: string;
  campaignId: string;
  referrerId: string | null;
  createdMs: number;
  id: number;
  perHour: number;
  referredUserId: string;
  linkId: number;
  /** The visitor of the signup's click (by click id only). */
  visitor: string | undefined;
}

async function computeSignupReasons(input: SignupSignalsInput): Promise<ReviewReason[]> {
  const [earlier, repeat] = await Promise.all([
    input.referrerId === null ? 0 : referrerSignupsBefore(input),
    input.visitor === undefined ? false : repeatVisitor(input, input.visitor),
  ]);
  return reviewReasons({
    referrerSignupsLastHour: earlier + 1,
    reviewSignupsPerHour: input.perHour,
    repeatVisitor: repeat,
  });
}

/**
 * Whether the signup's visitor already produced a signup on the link in the 24 h before it: one
 * UpdateItem that adds this signup to the marker and returns what it held. A replay finds itself
 * in the marker (the condition) and adds nothing; the marker as it was is the answer all the same.
 */
async function repeatVisitor(input: SignupSignalsInput, visitor: string): Promise<boolean> {
  const slots = Array.from({ length: MARKED_SIGNUPS }, (_, n) => `s${n}`);
  let old: StoredItem | undefined;
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: signupVisitorKey(input.tenant, input.campaignId, input.linkId, visitor),
        UpdateExpression: `SET s0 = :signup, ${slots
          .slice(1)
          .map((slot, n) => `${slot} = if_not_exists(s${n}, :none)`)
          .join(', ')}, expires_at = :exp`,
        ConditionExpression: slots
          .map((slot) => `(attribute_not_exists(${slot}.rid) OR ${slot}.rid <> :rid)`)
          .join(' AND '),
        ExpressionAttributeValues: {
          ':signup': { rid: input.referredUserId, at: input.createdMs },
          ':rid': input.referredUserId,
          ':none': null,
          ':exp': Math.floor((input.createdMs + 2 * DAY_MS) / 1000),
        },
        ReturnValues: 'ALL_OLD',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    old = Attributes;
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's AttributeValue map.
    old = err.Item ? unmarshall(err.Item as any) : undefined;
  }
  return slots.some((slot) => {
    const signup = old?.[slot] as { rid?: unknown; at?: unknown } | null | undefined;
    return (
      typeof signup?.at === 'number' &&
      signup.rid !== input.referredUserId &&
      signup.at <= input.createdMs &&
      input.createdMs - signup.at < DAY_MS
    );
  });
}

/**
 * The referrer's signups in the hour before this one (up to `perHour`, all the signal needs): a
 * COUNT Query of the referrer's list in GSI3 (`referredUserListKeys`), which every signup with a
 * referrer writes already, from an hour before this signup's list position to just before it.
 * No counter to keep: the index is the count. Bounded by the signup's own position, so a replay
 * counts the same signups (the index copy of the signups just before may lag by a moment).
 */
async function referrerSignupsBefore(input: SignupSignalsInput): Promise<number> {
  const index = REFERRED_USER_LIST_INDEX.referrer;
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
        ExpressionAttributeValues: {
          ':pk': referredUserListPartition(input.tenant, input.campaignId, {
            kind: 'referrer',
            referrerId: input.referrerId as string,
          }),
          ':from': linkOrder(Math.max(0, input.createdMs - HOUR_MS), 0),
          ':to': linkOrder(input.createdMs, input.id - 1),
        },
        Select: 'COUNT',
        Limit: input.perHour - count,
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start && count < input.perHour);
  return count;
}

async function rewardConversion(conversion: ConversionItem, campaigns: CampaignReads): Promise<void> {
  const campaign = await campaigns.get(conversion.tenant, conversion.campaign_id);
  if (!campaign) return;
  const rules = rulesInForce(ruleSetsOfItem(campaign), conversion.created_ms).filter(
    (r) => r.on === 'conversion',
  );
  if (rules.length === 0) return;
  const [prior, reasons] = await Promise.all([
    rules.some((r) => r.first_conversions !== undefined) ? conversionsBefore(conversion) : 0,
    storedSignupReasons(conversion),
  ]);
  const rewards = rewardsForConversion(
    rewardCampaign(conversion.campaign_id, conversion.currency, rules),
    {
      id: conversion.id,
      referred_user_id: conversion.referred_user_id,
      referrer_id: conversion.referrer_id,
      amount: conversion.amount,
      refunded_amount: 0,
      created_ms: conversion.created_ms,
    },
    prior,
    reasons,
  );
  if (rewards.length === 0) return;
  await createRewards(conversion.tenant, conversion.campaign_id, rewards, [
    {
      // The refunds of the conversion find its rewards here: the rules that made them may be
      // gone from the campaign's history by then.
      Update: {
        TableName: tableName,
        Key: { PK: conversion.PK, SK: conversion.SK },
        UpdateExpression: 'SET reward_ids = :ids',
        ConditionExpression: 'attribute_exists(PK)',
        ExpressionAttributeValues: { ':ids': rewards.map((r) => r.id) },
      },
    },
  ]);
}

/**
 * How many conversions the referred user had before this one (refunded ones included): a COUNT
 * Query of the referred user's conversion pointers (written in each conversion's transaction,
 * `<ms, 15>#<n, 16>` after their prefix, the layout of `linkOrder`) up to just before this one's. Two conversions of one user committed out of their time order (the
 * same instant, two requests) could each count the other or not: `first_conversions` may then be
 * off by one for them; ids never repeat, so nothing is created twice either way.
 */
async function conversionsBefore(conversion: ConversionItem): Promise<number> {
  const prefix = conversionListPrefix({ referredUserId: conversion.referred_user_id });
  const before = `${prefix}${linkOrder(conversion.created_ms, conversion.n - 1)}`;
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk AND SK BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': conversion.PK, ':from': prefix, ':to': before },
        Select: 'COUNT',
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

/** The review reasons its signup stored (a sale of a signup under review waits in review too). */
async function storedSignupReasons(conversion: ConversionItem): Promise<ReviewReason[]> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: referredUserKey(conversion.tenant, conversion.campaign_id, conversion.referred_user_id),
      ConsistentRead: true,
      ProjectionExpression: 'review_reasons',
    }),
  );
  const reasons = Item?.review_reasons;
  return Array.isArray(reasons) ? (reasons as ReviewReason[]) : [];
}

/**
 * A refund: the conversion as it is now (its latest `refunded_amount`: a replayed or late record
 * of an earlier refund then finds nothing left to do) and its rewards, by the ids stored with
 * them. A conversion whose rewards are not made yet has none to change: its refund is applied by
 * the record of the `reward_ids` write, which follows in the stream.
 */
async function refundConversion(record: ConversionItem): Promise<void> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: { PK: record.PK, SK: record.SK }, ConsistentRead: true }),
  );
  if (!Item) return;
  const ids = Item.reward_ids;
  if (!Array.isArray(ids) || ids.length === 0) return;
  const conversion = conversionFromItem(Item);
  await applyRefund(
    conversion.tenant,
    ids as string[],
    { amount: conversion.amount, refunded_amount: conversion.refunded_amount },
    Date.now(),
  );
}
