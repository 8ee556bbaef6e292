/**
 * The stored answer of an `Idempotency-Key` (see `lib/db/idempotency.ts`).
 *
 *   PK `IDEM#<tenant>#<sha256 of the key>`   SK `IDEM`   no index keys; TTL `expires_at`
 *
 * By tenant and the key's hash, since keys are client text.
 */
import type { IdempotentRequest, StoredAnswer } from '../../domain/idempotency.ts';
import { stringifyJson } from '../../domain/json.ts';
import { decoder, type StoredItem } from './decode.ts';

export function idempotencyKey(tenant: string, keyHash: string) {
  return { PK: `IDEM#${tenant}#${keyHash}`, SK: 'IDEM' } as const;
}

export const idempotencyItemKey = (request: Pick<IdempotentRequest, 'tenant' | 'keyHash'>) =>
  idempotencyKey(request.tenant, request.keyHash);

/** Kept at least 24 h as the contract asks; DynamoDB's TTL deletes some time after expiry. */
export const IDEMPOTENCY_TTL_SECONDS = 25 * 60 * 60;

/** The item of a 2xx answer to `request`, stored at `nowSeconds` (epoch). */
export function newIdempotencyItem(
  request: Pick<IdempotentRequest, 'tenant' | 'keyHash' | 'requestHash'>,
  status: number,
  body: unknown,
  nowSeconds: number,
) {
  return {
    ...keyedItem(request, nowSeconds + IDEMPOTENCY_TTL_SECONDS),
    status,
    answer: stringifyJson(body),
  };
}

/** What a stored answer and a claim share: the key's item, its request, its expiry. */
function keyedItem(
  request: Pick<IdempotentRequest, 'tenant' | 'keyHash' | 'requestHash'>,
  expiresAt: number,
) {
  return {
    ...idempotencyItemKey(request),
    type: 'idempotency',
    tenant: request.tenant,
    request_hash: request.requestHash,
    created_at: new Date().toISOString(),
    expires_at: expiresAt,
  };
}

/**
 * Seconds a claim (`newClaimItem`) holds its key: past the longest run of a route that claims
 * (the webhook test's function times out at 25 s), so a run that crashed between its claim and its
 * answer frees the key soon, while a retry during a live run is told it is in progress.
 */
export const CLAIM_SECONDS = 60;

/**
 * The item that holds a key while its request runs, for a route whose effect is outside the table
 * (the webhook test's POST), so it cannot store its answer in the write that makes the effect: the
 * key is claimed first, the answer replaces the claim. No `answer`: not a stored answer.
 */
export function newClaimItem(
  request: Pick<IdempotentRequest, 'tenant' | 'keyHash' | 'requestHash'>,
  nowSeconds: number,
) {
  return { ...keyedItem(request, nowSeconds + CLAIM_SECONDS), in_progress: true };
}

const field = decoder('idempotency answer');

/** A stored item as an answer, unless it expired (TTL deletes late) or is a claim (no answer yet). */
export function storedAnswerOf(item: StoredItem | undefined): StoredAnswer | undefined {
  if (!item || item.answer === undefined || field.number(item, 'expires_at') < Date.now() / 1000)
    return undefined;
  return {
    status: field.number(item, 'status'),
    body: field.string(item, 'answer'),
    requestHash: field.string(item, 'request_hash'),
  };
}
