/**
 * Reward ids: derived, never drawn. A reward's id is a function of its campaign, its recipient,
 * its rule and its source (the signup or conversion), and an adjustment's of its reward and the
 * refund that made it. So a retried request or a replayed stream batch computes the same id, and a
 * put conditioned on the id's absence creates each reward exactly once.
 *
 * The id also says where the reward is stored, so endpoints 28 and 29 (`/reward/{id}`, no campaign
 * in the path) reach it with one keyed write: `rw_` + base64url of 40 bytes, the campaign's UUID
 * (16), a hash of the recipient (12) and a hash of the rule and source (12). The tenant is not in
 * it: the key is built with the caller's tenant, so another tenant's id names no item.
 */
import { createHash } from 'node:crypto';
import type { RewardRecipient } from './reward-rules.ts';

const PREFIX = 'rw_';
const HASH_BYTES = 12;
const ID_BYTES = 16 + 2 * HASH_BYTES;
const uuidHex = /^[0-9a-f]{32}$/;

const digest = (parts: readonly (string | number)[]) =>
  createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, HASH_BYTES);

export interface RewardLocation {
  campaignId: string;
  /** 24 hex digits: the recipient (kind and id) hashed, so ids of any characters share one key layout. */
  recipientHash: string;
  /** 24 hex digits: the rule and source hashed. */
  key: string;
}

/** The recipient's part of its rewards' keys: a `referrer` and a `referred_user` of one id differ. */
export function recipientHash(recipient: RewardRecipient, recipientId: string): string {
  return digest([recipient, recipientId]).toString('hex');
}

function encode(campaignId: string, recipient: Buffer, key: Buffer): string {
  const campaign = campaignId.toLowerCase().replaceAll('-', '');
  if (!uuidHex.test(campaign)) throw new Error(`not a campaign id: ${campaignId}`);
  return PREFIX + Buffer.concat([Buffer.from(campaign, 'hex'), recipient, key]).toString('base64url');
}

export interface RewardSource {
  campaignId: string;
  recipient: RewardRecipient;
  recipientId: string;
  ruleId: string;
  sourceType: 'referred_user' | 'conversion';
  sourceId: string;
}

export function rewardId(s: RewardSource): string {
  return encode(
    s.campaignId,
    digest([s.recipient, s.recipientId]),
    digest(['reward', s.ruleId, s.sourceType, s.sourceId]),
  );
}

/**
 * The adjustment a refund makes to `parentId`. `marker` names the refund: the conversion's
 * `refunded_amount` after it, which only grows, so two refunds never share a marker and a replay of
 * one always does.
 */
export function adjustmentId(parentId: string, marker: number): string {
  const parent = parseRewardId(parentId);
  if (!parent) throw new Error(`not a reward id: ${parentId}`);
  return encode(
    parent.campaignId,
    Buffer.from(parent.recipientHash, 'hex'),
    digest(['adjustment', parent.key, marker]),
  );
}

/** Where an id's reward is stored; `undefined` for anything that is no reward id. */
export function parseRewardId(id: string): RewardLocation | undefined {
  if (!id.startsWith(PREFIX)) return undefined;
  const body = id.slice(PREFIX.length);
  if (!/^[A-Za-z0-9_-]{54}$/.test(body)) return undefined;
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== ID_BYTES || bytes.toString('base64url') !== body) return undefined;
  const hex = bytes.subarray(0, 16).toString('hex');
  return {
    campaignId: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`,
    recipientHash: bytes.subarray(16, 16 + HASH_BYTES).toString('hex'),
    key: bytes.subarray(16 + HASH_BYTES).toString('hex'),
  };
}
