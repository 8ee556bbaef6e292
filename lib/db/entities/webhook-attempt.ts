/**
 * The delivery log (endpoint 18): one record per delivery attempt, written twice in one
 * BatchWriteItem so that both the whole log and each status's log are one Query, newest first,
 * with the status a key condition (a filter could return empty pages while matches remain):
 *
 *   PK `T#<tenant>#C#<campaign>#WD`            SK `<attempted ms, 13 digits>#<event id>#<attempt, 2 digits>`
 *   PK `T#<tenant>#C#<campaign>#WD#<status>`   SK the same
 *
 * TTL `expires_at`, 30 days. Outside the campaign's partition (the purge never reads them); every
 * reader checks the campaign first, and TTL reclaims them.
 */
import { type AnyWebhookEventType, WEBHOOK_HISTORY_SECONDS } from '../../domain/webhook-events.ts';
import { campaignPartition } from './campaign.ts';
import { decoder, type StoredItem } from './decode.ts';

/**
 * `succeeded`: a 2xx. `pending`: failed, and another attempt is scheduled (`next_attempt_at`).
 * `failed`: failed with no attempt after it (the last one, a 410, or a refused destination).
 */
export const ATTEMPT_STATUSES = ['succeeded', 'failed', 'pending'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

export interface DeliveryAttempt {
  id: string;
  event_id: string;
  event_type: AnyWebhookEventType;
  attempt: number;
  status: AttemptStatus;
  attempted_at: string;
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  next_attempt_at: string | null;
}

export function attemptLogPartition(tenant: string, campaignId: string, status?: AttemptStatus): string {
  return `${campaignPartition(tenant, campaignId)}#WD${status ? `#${status}` : ''}`;
}

export const ATTEMPT_SORT_KEY = /^\d{13}#[\x21-\x7e]{1,128}#\d{2}$/;

export function attemptSortKey(attemptedMs: number, eventId: string, attempt: number): string {
  return `${String(attemptedMs).padStart(13, '0')}#${eventId}#${String(Math.min(attempt, 99)).padStart(2, '0')}`;
}

/** The two items of one attempt: in the whole log and in its status's log. */
export function newAttemptItems(
  tenant: string,
  campaignId: string,
  attempt: DeliveryAttempt,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  const sk = attemptSortKey(Date.parse(attempt.attempted_at), attempt.event_id, attempt.attempt);
  // `event_type` is stored as `evt_type`: an INSERT carrying `event_type` is a webhook event to
  // the stream consumer's filter, and an attempt must never be sent as one.
  const { event_type, ...rest } = attempt;
  const fields = {
    type: 'webhook_attempt',
    tenant,
    ...rest,
    evt_type: event_type,
    expires_at: nowSeconds + WEBHOOK_HISTORY_SECONDS,
  };
  return [
    { PK: attemptLogPartition(tenant, campaignId), SK: sk, ...fields },
    { PK: attemptLogPartition(tenant, campaignId, attempt.status), SK: sk, ...fields },
  ];
}

/** The attempt's id: its time, event and number, readable and unique per campaign. */
export function attemptId(attemptedMs: number, eventId: string, attempt: number): string {
  return `att_${attemptedMs}_${eventId}_${attempt}`;
}

const field = decoder('webhook attempt');

const nullableNumber = (item: StoredItem, name: string): number | null => {
  const v = item[name];
  return v === undefined || v === null ? null : field.number(item, name);
};

export function attemptFromItem(item: StoredItem): DeliveryAttempt {
  const status = field.string(item, 'status');
  if (!(ATTEMPT_STATUSES as readonly string[]).includes(status))
    field.fail(item, 'status', 'an attempt status');
  return {
    id: field.string(item, 'id'),
    event_id: field.string(item, 'event_id'),
    event_type: field.string(item, 'evt_type') as AnyWebhookEventType,
    attempt: field.number(item, 'attempt'),
    status: status as AttemptStatus,
    attempted_at: field.string(item, 'attempted_at'),
    url: field.string(item, 'url'),
    status_code: nullableNumber(item, 'status_code'),
    error: field.nullableString(item, 'error'),
    duration_ms: field.number(item, 'duration_ms'),
    next_attempt_at: field.nullableString(item, 'next_attempt_at'),
  };
}
