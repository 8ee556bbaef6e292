/**
 * The reward item: one reward or adjustment of the ledger (`lib/domain/rewards.ts`).
 *
 *   PK `T#<tenant>#C#<campaign>`   SK `RW#<recipient hash>#<key>`   (both 24 hex digits, from the id)
 *     GSI1  `REWARDS_DUE` / `<available ms, 13 digits>#<id>`   sparse: rewards `pending` now
 *     GSI3  `T#<tenant>#C#<campaign>#RW#S#<status>` / `<created ms, 13 digits>#<id>`   a state's rewards
 *     GSI2  `T#<tenant>#C#<campaign>#RW#R#<sha256 of recipient_id, 24 hex>#S#<status>` / the same
 *
 * In its campaign's partition, so the campaign's purge takes it, and a recipient's rewards are one
 * Query (`begins_with(SK, 'RW#<recipient hash>#')`): the balance and the payout read them strongly
 * consistent. The id says where the item is (`parseRewardId`), so a reward is reached by id with
 * one keyed call, and only with its own tenant's key.
 *
 * The due index: a reward (not an adjustment: those move with their reward) carries the GSI1 keys
 * while it is `pending`, and loses them when it leaves `pending`, so the scheduled release finds
 * every due reward with one Query of one GSI1 partition, `GSI1SK <= now`, and the index holds only
 * what is waiting. GSI1 already exists (links by id, the api-key list, in partitions of their own
 * prefix): no new index, no new projection. Its INCLUDE projection copies `tenant`, `id`,
 * `created_at` and `campaign_id` of the reward, and the table's keys, which is all the release needs
 * to reach the item.
 *
 * The lists (endpoint 27, newest first): every reward and adjustment is in GSI3's partition of its
 * state and in GSI2's of its recipient and state, both keyed by creation time, and moves between
 * partitions with its state (every change is a Put of the whole item). A list of one state is one
 * Query; a list of every state merges the five partitions' pages (`lib/db/rewards.ts`). Neither
 * index projects the reward's fields (a projection cannot change once deployed): a page reads its
 * items by key. Their partitions continue `#RW#` after the campaign, where the links' (`#R#`,
 * `#LINKS`), the referred users' (`#RU…`) and the payouts' (`#PO#`) do not.
 */
import { parseRewardId, recipientHash } from '../../domain/reward-ids.ts';
import type { RewardRecipient, RewardRuleType } from '../../domain/reward-rules.ts';
import { REWARD_STATUSES, type ReviewReason, type Reward, type RewardStatus } from '../../domain/rewards.ts';
import { formatTimestamp } from '../../domain/time.ts';
import {
  type EventAttributes,
  eventAttributesWithId,
  rewardEventId,
  rewardEventType,
} from '../../domain/webhook-events.ts';
import { GSI1, GSI2, GSI3 } from '../../table-definition.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';
import { recipientIdHash } from './payout.ts';

export const DUE_REWARDS_INDEX = GSI1;
export const DUE_REWARDS_PARTITION = 'REWARDS_DUE';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** GSI1's sort key of a pending reward: when its hold ends, then its id (unique). */
export const dueOrder = (availableMs: number, id: string) => `${pad(availableMs, 13)}#${id}`;
/** The highest due sort key at `nowMs`: `GSI1SK <= dueUpTo(now)` is every reward due by then. */
export const dueUpTo = (nowMs: number) => `${pad(nowMs, 13)}#~`;

export const REWARD_STATUS_INDEX = GSI3;
export const RECIPIENT_REWARDS_INDEX = GSI2;

/** Both lists' sort key: creation time, then the id (unique). */
export const rewardListOrder = (createdMs: number, id: string) => `${pad(createdMs, 13)}#${id}`;
export const REWARD_LIST_ORDER = /^\d{13}#rw_[A-Za-z0-9_-]{54}$/;

export const rewardStatusPartition = (tenant: string, campaignId: string, status: RewardStatus) =>
  `${campaignPartition(tenant, campaignId)}#RW#S#${status}`;

export const recipientRewardsPartition = (
  tenant: string,
  campaignId: string,
  recipientId: string,
  status: RewardStatus,
) => `${campaignPartition(tenant, campaignId)}#RW#R#${recipientIdHash(recipientId)}#S#${status}`;

export const recipientPrefix = (recipient: RewardRecipient, recipientId: string) =>
  `RW#${recipientHash(recipient, recipientId)}#`;

/** The key of the reward `id` for `tenant`, or undefined when `id` is no reward id. */
export function rewardKeyOfId(tenant: string, id: string) {
  const at = parseRewardId(id);
  if (!at) return undefined;
  return { PK: campaignPartition(tenant, at.campaignId), SK: `RW#${at.recipientHash}#${at.key}` };
}

export function rewardKey(tenant: string, id: string) {
  const key = rewardKeyOfId(tenant, id);
  if (!key) throw new Error(`not a reward id: ${id}`);
  return key;
}

export interface RewardItem {
  PK: string;
  SK: string;
  type: 'reward';
  tenant: string;
  id: string;
  campaign_id: string;
  created_at: string;
  kind: Reward['kind'];
  adjusts: string | null;
  /** A reward's adjustments, so its family is read by key (approve, void, release cascade to them). */
  adjustment_ids: string[];
  rule_id: string;
  rule_type: RewardRuleType;
  rule_amount: number;
  recipient: RewardRecipient;
  recipient_id: string;
  source_type: Reward['source_type'];
  source_id: string;
  amount: number;
  adjusted: number;
  currency: string;
  status: RewardStatus;
  created_ms: number;
  available_ms: number;
  review_reasons: ReviewReason[];
  payout_id: string | null;
  void_reason: string | null;
  GSI1PK?: string;
  GSI1SK?: string;
  GSI2PK: string;
  GSI2SK: string;
  GSI3PK: string;
  GSI3SK: string;
}

/** Whether a reward in this state waits in the due index. */
const isDue = (r: Reward) => r.kind === 'reward' && r.status === 'pending';

/**
 * The item of `reward` as it is now (a Put of it replaces the stored one whole). `enteredAt`: this
 * write puts the reward in a new state (its creation, or a change of `status`), at that time; the
 * item then carries that state's event (`reward.created`, `reward.approved`, ...: see
 * `rewardEventType`), whose stream record (INSERT, or MODIFY: `isRewardEventRecord`) the webhook
 * and feed consumers send like any event. A write that changes no state (a refund raising
 * `adjusted`) carries none, so its record is no event and passes no consumer's filter.
 */
export function rewardItem(
  tenant: string,
  reward: Reward,
  adjustmentIds: readonly string[] = [],
  enteredAt?: Date,
): RewardItem & Partial<EventAttributes> {
  return {
    ...(enteredAt
      ? eventAttributesWithId(
          rewardEventType(reward.status),
          rewardEventId(reward.id, reward.status),
          tenant,
          reward.campaign_id.toLowerCase(),
          toRewardObject(reward),
          enteredAt,
        )
      : {}),
    ...rewardKey(tenant, reward.id),
    type: 'reward',
    tenant,
    id: reward.id,
    campaign_id: reward.campaign_id.toLowerCase(),
    created_at: formatTimestamp(new Date(reward.created_ms)),
    kind: reward.kind,
    adjusts: reward.adjusts,
    adjustment_ids: [...adjustmentIds],
    rule_id: reward.rule_id,
    rule_type: reward.terms.type,
    rule_amount: reward.terms.amount,
    recipient: reward.recipient,
    recipient_id: reward.recipient_id,
    source_type: reward.source_type,
    source_id: reward.source_id,
    amount: reward.amount,
    adjusted: reward.adjusted,
    currency: reward.currency,
    status: reward.status,
    created_ms: reward.created_ms,
    available_ms: reward.available_ms,
    review_reasons: [...reward.review_reasons],
    payout_id: reward.payout_id,
    void_reason: reward.void_reason,
    GSI2PK: recipientRewardsPartition(tenant, reward.campaign_id, reward.recipient_id, reward.status),
    GSI2SK: rewardListOrder(reward.created_ms, reward.id),
    GSI3PK: rewardStatusPartition(tenant, reward.campaign_id, reward.status),
    GSI3SK: rewardListOrder(reward.created_ms, reward.id),
    ...(isDue(reward)
      ? { GSI1PK: DUE_REWARDS_PARTITION, GSI1SK: dueOrder(reward.available_ms, reward.id) }
      : {}),
  };
}

const field = decoder('reward');

function oneOf<T extends string>(item: StoredItem, attribute: string, values: readonly T[]): T {
  const value = field.string(item, attribute);
  return (values as readonly string[]).includes(value)
    ? (value as T)
    : field.fail(item, attribute, values.join('|'));
}

function strings(item: StoredItem, attribute: string): string[] {
  const value = item[attribute];
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    return field.fail(item, attribute, 'a list of strings');
  }
  return value as string[];
}

/** The stored reward as the domain sees it, and its adjustments' ids. */
export function rewardFromItem(item: StoredItem): { reward: Reward; adjustmentIds: string[] } {
  const kind = oneOf(item, 'kind', ['reward', 'adjustment'] as const);
  return {
    reward: {
      id: field.string(item, 'id'),
      campaign_id: field.string(item, 'campaign_id'),
      kind,
      adjusts: field.nullableString(item, 'adjusts'),
      rule_id: field.string(item, 'rule_id'),
      terms: {
        type: oneOf(item, 'rule_type', ['flat', 'percent'] as const),
        amount: field.number(item, 'rule_amount'),
      },
      recipient: oneOf(item, 'recipient', ['referrer', 'referred_user'] as const),
      recipient_id: field.string(item, 'recipient_id'),
      source_type: oneOf(item, 'source_type', ['referred_user', 'conversion'] as const),
      source_id: field.string(item, 'source_id'),
      amount: field.number(item, 'amount'),
      adjusted: field.number(item, 'adjusted'),
      currency: field.string(item, 'currency'),
      status: oneOf(item, 'status', REWARD_STATUSES),
      created_ms: field.number(item, 'created_ms'),
      available_ms: field.number(item, 'available_ms'),
      review_reasons: strings(item, 'review_reasons') as ReviewReason[],
      payout_id: field.nullableString(item, 'payout_id'),
      void_reason: field.nullableString(item, 'void_reason'),
    },
    adjustmentIds: strings(item, 'adjustment_ids'),
  };
}

/** The contract's reward object (plus `type` and `adjusts`, additive). */
export function toRewardObject(reward: Reward) {
  return {
    id: reward.id,
    created_at: formatTimestamp(new Date(reward.created_ms)),
    campaign_id: reward.campaign_id,
    rule_id: reward.rule_id,
    recipient: reward.recipient,
    recipient_id: reward.recipient_id,
    source_type: reward.source_type,
    source_id: reward.source_id,
    type: reward.kind,
    adjusts: reward.adjusts,
    amount: reward.amount,
    currency: reward.currency,
    status: reward.status,
    available_at: formatTimestamp(new Date(reward.available_ms)),
    review_reasons: reward.review_reasons,
    payout_id: reward.payout_id,
    void_reason: reward.void_reason,
  };
}
