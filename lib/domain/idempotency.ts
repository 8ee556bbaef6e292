/**
 * `Idempotency-Key` (contract, "Idempotent retries"), the rules without I/O: which requests carry
 * one, what makes two requests the same, and the errors. Storage is `lib/db/idempotency.ts`.
 */
import { createHash } from 'node:crypto';
import { ApiError, validationError } from './errors.ts';
import { canonicalJson } from './json.ts';

/** A keyed request: where its answer is kept, and what must match for a replay. */
export interface IdempotentRequest {
  tenant: string;
  keyHash: string;
  /** SHA-256 of method, path, query and the body as parsed JSON (key order does not matter). */
  requestHash: string;
}

export interface StoredAnswer {
  status: number;
  /** The answer's body as JSON text, exactly as first sent. */
  body: string;
  requestHash: string;
}

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The keyed request of a POST, or undefined without a key. The key is 1–255 printable ASCII
 * characters (400 otherwise); it is scoped to the tenant.
 */
export function idempotentRequest(input: {
  key: string | undefined;
  tenant: string;
  method: string;
  path: string;
  query: string;
  body: unknown;
}): IdempotentRequest | undefined {
  if (input.key === undefined) return undefined;
  if (!KEY_PATTERN.test(input.key)) {
    throw validationError([
      { field: 'Idempotency-Key', message: 'must be 1–255 printable ASCII characters' },
    ]);
  }
  const body = input.body === undefined ? '' : canonicalJson(input.body);
  return {
    tenant: input.tenant,
    keyHash: sha256(input.key),
    requestHash: sha256(`${input.method} ${input.path}?${input.query}\n${body}`),
  };
}

/**
 * Thrown where a write finds its key used already: the transaction's `rememberAnswer` item failed,
 * or a read saw the stored answer (then carried here, saving the handler a read).
 */
export class IdempotencyKeyUsed extends Error {
  constructor(readonly stored?: StoredAnswer) {
    super('Idempotency-Key used before');
    this.name = 'IdempotencyKeyUsed';
  }
}

export const idempotencyKeyReused = () =>
  new ApiError(
    'idempotency_key_reused',
    'This Idempotency-Key was used with another request (method, path or body); use a new key for a new request.',
  );

export const idempotencyKeyInProgress = () =>
  new ApiError(
    'idempotency_key_in_progress',
    'A request with this Idempotency-Key is still being processed; retry later.',
  );
