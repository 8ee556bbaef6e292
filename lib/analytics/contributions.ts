/**
 * Which table stream records the rollups count, and as what: pure, no I/O. A record that cannot be
 * read is not counted and never throws (a throw would hold the whole shard back).
 */
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { BOT_VISIT_TYPE, VISIT_MARK } from '../db/entities/visit.ts';
import type { StreamRecordLike } from '../webhooks/stream.ts';
import { safeNumber } from '../webhooks/stream.ts';

/** One record's share of the rollups. */
export interface Contribution {
  sequence: bigint;
  tenant: string;
  campaignId: string;
  atMs: number;
  link: { id: number; code: string; url: string | null; referrerId: string | null };
  kind: 'visit' | 'bot_visit' | 'action' | 'referred_user' | 'conversion' | 'refund';
  /** Minor units: a conversion's amount, or what a refund gave back. */
  amount?: number;
  unique: boolean;
  /** The action type of an action. */
  actionType?: string;
  /** A visit recorded by `/r/{code}`: its click is not on the link yet (API writes count their own). */
  countsClick: boolean;
}

const isAmount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The contribution of one stream record, or undefined for any record that is not an interaction
 * (a feed item, a redelivery request, a MODIFY...). Never throws on content: a record this
 * consumer cannot read is not counted (and the webhook pipeline dead-letters it visibly).
 */
export function contributionOf(record: StreamRecordLike): Contribution | undefined {
  if (record.eventName !== 'INSERT' || !record.dynamodb?.NewImage || !record.dynamodb.SequenceNumber) {
    return undefined;
  }
  let item: Record<string, unknown>;
  try {
    // biome-ignore lint/suspicious/noExplicitAny: Lambda's and the SDK's AttributeValue types differ only nominally.
    item = unmarshall(record.dynamodb.NewImage as any, { wrapNumbers: safeNumber });
  } catch {
    return undefined;
  }
  const sequence = BigInt(record.dynamodb.SequenceNumber);
  const tenant = item.tenant;
  const campaignId = item.campaign_id;
  if (typeof tenant !== 'string' || typeof campaignId !== 'string') return undefined;

  if (item.type === BOT_VISIT_TYPE) {
    const at = Date.parse(String(item.at));
    if (typeof item.link_id !== 'number' || typeof item.link_code !== 'string' || Number.isNaN(at))
      return undefined;
    return {
      sequence,
      tenant,
      campaignId,
      atMs: at,
      link: {
        id: item.link_id,
        code: item.link_code,
        url: null,
        referrerId: typeof item.referrer_id === 'string' ? item.referrer_id : null,
      },
      kind: 'bot_visit',
      unique: false,
      countsClick: false,
    };
  }

  if (typeof item.event_type !== 'string' || item.redelivery !== undefined) return undefined;
  if (typeof item.event_json !== 'string') return undefined;
  let data: unknown;
  try {
    data = JSON.parse(item.event_json);
  } catch {
    return undefined;
  }
  const atMs = Date.parse(String(item.event_time));
  if (!isObject(data) || !isObject(data.referral_link) || Number.isNaN(atMs)) return undefined;
  const l = data.referral_link;
  if (typeof l.id !== 'number' || typeof l.referral_code !== 'string') return undefined;
  const link = {
    id: l.id,
    code: l.referral_code,
    url: typeof l.referral_link === 'string' ? l.referral_link : null,
    referrerId: typeof l.referrer_id === 'string' ? l.referrer_id : null,
  };
  const base = { sequence, tenant, campaignId, atMs, link };
  if (item.event_type === 'referred_user.created') {
    return { ...base, kind: 'referred_user', unique: false, countsClick: false };
  }
  if (item.event_type === 'conversion.created') {
    if (!isAmount(data.amount)) return undefined;
    return { ...base, kind: 'conversion', unique: false, countsClick: false, amount: data.amount };
  }
  if (item.event_type === 'conversion.refunded') {
    // The refund's own amount is on its item: the event's data is the conversion after it.
    if (!isAmount(item.refund_amount)) return undefined;
    return { ...base, kind: 'refund', unique: false, countsClick: false, amount: item.refund_amount };
  }
  if (item.event_type !== 'action.created' || typeof data.action_type !== 'string') return undefined;
  const visit = item[VISIT_MARK];
  if (isObject(visit)) {
    return { ...base, kind: 'visit', unique: visit.unique === true, countsClick: true };
  }
  // An action of type `visit` posted through the API: a visit, counted (with its click) by its write.
  if (data.action_type === 'visit') return { ...base, kind: 'visit', unique: false, countsClick: false };
  return { ...base, kind: 'action', unique: false, actionType: data.action_type, countsClick: false };
}
