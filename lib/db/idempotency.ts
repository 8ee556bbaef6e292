/**
 * `Idempotency-Key` (contract, "Idempotent retries"): a POST's 2xx answer is stored in the same
 * write as what the request changed, as one more item of its transaction, written only if the
 * key is new for the tenant. So no instant exists where the write is committed and the key is
 * not, and the first request costs no extra round trip. A retry's transaction then fails on that
 * item alone, and the stored answer is read (one call) and replayed.
 *
 * Why not Powertools' idempotency utility: it records the key in its own write before the
 * handler runs and the answer in another after it, i.e. two more round trips per request, and a
 * crash between the handler's write and the second one leaves a committed write whose key says
 * "in progress" until it expires. Putting the record into the write's own transaction is both
 * cheaper and atomic.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  IdempotencyKeyUsed,
  type IdempotentRequest,
  idempotencyKeyReused,
  type StoredAnswer,
} from '../domain/idempotency.ts';
import {
  idempotencyItemKey,
  newClaimItem,
  newIdempotencyItem,
  storedAnswerOf,
} from './entities/idempotency.ts';
import { db, tableName } from './table/client.ts';

export { IDEMPOTENCY_TTL_SECONDS, idempotencyItemKey, storedAnswerOf } from './entities/idempotency.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * The transaction item that stores a 2xx answer with its write: a Put that succeeds only when the
 * key is new (or its answer expired). When it fails, the write did not happen and the request is
 * a retry, answered from what is stored.
 */
export function rememberAnswer(request: IdempotentRequest, status: number, body: unknown): TransactItem {
  const now = Math.floor(Date.now() / 1000);
  return {
    Put: {
      TableName: tableName,
      Item: newIdempotencyItem(request, status, body, now),
      ConditionExpression: 'attribute_not_exists(PK) OR expires_at < :now',
      ExpressionAttributeValues: { ':now': now },
    },
  };
}

/** The answer stored for a key, read strongly consistently. One GetItem. */
export async function storedAnswer(request: IdempotentRequest): Promise<StoredAnswer | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: idempotencyItemKey(request), ConsistentRead: true }),
  );
  return storedAnswerOf(Item);
}

/**
 * Claim a key before an effect the table cannot hold in a transaction (the webhook test's POST to
 * the receiver): one conditional PutItem of a claim that expires in `CLAIM_SECONDS`. When the key
 * is taken, what holds it comes back with the failed condition (no read): a stored answer is
 * replayed (`IdempotencyKeyUsed` carrying it), another request's claim is 422, and this request's
 * own claim is a run still in progress (409, after `answerOnce`'s read finds no answer).
 * `rememberClaimedAnswer` replaces the claim with the answer.
 */
export async function claimKey(request: IdempotentRequest): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: newClaimItem(request, now),
        ConditionExpression: 'attribute_not_exists(PK) OR expires_at < :now',
        ExpressionAttributeValues: { ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const held = err.Item ? unmarshall(err.Item) : undefined;
    const stored = storedAnswerOf(held);
    if (stored) throw new IdempotencyKeyUsed(stored);
    if (held && held.request_hash !== request.requestHash) throw idempotencyKeyReused();
    throw new IdempotencyKeyUsed();
  }
}

/**
 * The transaction item that stores the answer of a claimed key (`claimKey`) with the write that
 * follows the effect: it replaces this request's claim, and fails (nothing written) if the claim
 * is no longer there, answered or taken by another request after it expired.
 */
export function rememberClaimedAnswer(
  request: IdempotentRequest,
  status: number,
  body: unknown,
): TransactItem {
  return {
    Put: {
      TableName: tableName,
      Item: newIdempotencyItem(request, status, body, Math.floor(Date.now() / 1000)),
      ConditionExpression: 'request_hash = :hash AND attribute_not_exists(answer)',
      ExpressionAttributeValues: { ':hash': request.requestHash },
    },
  };
}
