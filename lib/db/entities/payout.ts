/**
 * The payout item: what a business paid one recipient elsewhere, and the rewards it paid.
 *
 *   PK `T#<tenant>#C#<campaign>`   SK `PO#<created ms, 13 digits>#<id>`   a campaign's payouts, newest first read backwards
 *     GSI3  `T#<tenant>#C#<campaign>#PO#<sha256 of recipient_id, 24 hex>` / `<created ms, 13 digits>#<id>`   one recipient's (sparse)
 *
 * Written in the same transaction as the rewards it flips to `paid` (`lib/db/rewards.ts`). In its
 * campaign's partition, so the purge takes it. GSI3 holds links by referrer in partitions
 * `…#C#<campaign>#R#<referrer>`; a payout's partition continues `#PO#` after the campaign, so the
 * two never meet. GSI3 projects no payout field but the keys, `tenant`, `id`, `created_at` and
 * `campaign_id`: a recipient's page reads its items by key, as the link lists do.
 */
import { createHash } from 'node:crypto';
import type { RewardRecipient } from '../../domain/reward-rules.ts';
import { formatTimestamp } from '../../domain/time.ts';
import { GSI3 } from '../../table-definition.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

export const RECIPIENT_PAYOUTS_INDEX = GSI3;

const pad = (n: number, width: number) => String(n).padStart(width, '0');
export const payoutOrder = (createdMs: number, id: string) => `${pad(createdMs, 13)}#${id}`;

export function payoutKey(tenant: string, campaignId: string, createdMs: number, id: string) {
  return { PK: campaignPartition(tenant, campaignId), SK: `${PAYOUT_PREFIX}${payoutOrder(createdMs, id)}` };
}

/** A `recipient_id` in an index partition: any characters, one length. */
export const recipientIdHash = (recipientId: string) =>
  createHash('sha256').update(recipientId).digest('hex').slice(0, 24);

/** A recipient's payouts (by `recipient_id`, of either kind, as endpoint 32 filters): GSI3's partition. */
export const recipientPayoutsPartition = (tenant: string, campaignId: string, recipientId: string) =>
  `${campaignPartition(tenant, campaignId)}#PO#${recipientIdHash(recipientId)}`;

/** The position of a payout in both its lists: creation time, then id. */
export const PAYOUT_ORDER = /^\d{13}#po_[A-Za-z0-9_-]{22}$/;
export const PAYOUT_PREFIX = 'PO#';

export interface Payout {
  id: string;
  campaign_id: string;
  recipient: RewardRecipient;
  recipient_id: string;
  amount: number;
  currency: string;
  reward_ids: string[];
  reference: string | null;
  created_ms: number;
}

export interface PayoutItem extends Payout {
  PK: string;
  SK: string;
  type: 'payout';
  tenant: string;
  created_at: string;
  GSI3PK: string;
  GSI3SK: string;
}

export function payoutItem(tenant: string, payout: Payout): PayoutItem {
  const campaignId = payout.campaign_id.toLowerCase();
  return {
    ...payoutKey(tenant, campaignId, payout.created_ms, payout.id),
    type: 'payout',
    tenant,
    ...payout,
    campaign_id: campaignId,
    created_at: formatTimestamp(new Date(payout.created_ms)),
    GSI3PK: recipientPayoutsPartition(tenant, campaignId, payout.recipient_id),
    GSI3SK: payoutOrder(payout.created_ms, payout.id),
  };
}

const field = decoder('payout');

export function payoutFromItem(item: StoredItem): Payout {
  const recipient = field.string(item, 'recipient');
  const ids = item.reward_ids;
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string'))
    field.fail(item, 'reward_ids', 'a list of strings');
  return {
    id: field.string(item, 'id'),
    campaign_id: field.string(item, 'campaign_id'),
    recipient:
      recipient === 'referred_user'
        ? recipient
        : recipient === 'referrer'
          ? recipient
          : field.fail(item, 'recipient', 'referrer|referred_user'),
    recipient_id: field.string(item, 'recipient_id'),
    amount: field.number(item, 'amount'),
    currency: field.string(item, 'currency'),
    reward_ids: ids as string[],
    reference: field.nullableString(item, 'reference'),
    created_ms: field.number(item, 'created_ms'),
  };
}

/** The contract's payout object (plus `recipient`, `recipient_id`, additive). */
export function toPayoutObject(payout: Payout) {
  return {
    id: payout.id,
    created_at: formatTimestamp(new Date(payout.created_ms)),
    campaign_id: payout.campaign_id,
    recipient: payout.recipient,
    recipient_id: payout.recipient_id,
    amount: payout.amount,
    currency: payout.currency,
    reward_ids: payout.reward_ids,
    reference: payout.reference,
  };
}
