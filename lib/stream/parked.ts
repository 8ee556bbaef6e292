/**
 * Work of the stream's counting consumer that can never succeed as it is (DynamoDB refuses it:
 * an item past a limit, an attribute of the wrong type written by hand), set aside so that it
 * holds nothing else back: the consumer isolates it (one rollup item's counts, one event of the
 * feed), parks it here, counts it (`CountingWorkParked`, alarmed) and goes on. Nothing is retried
 * forever. An operator looks at it (`npm run parked`) and, once the cause is fixed, runs it again
 * (`npm run parked -- retry`).
 *
 * What is only passing (DynamoDB throttling, timing out, down) is not parked: the consumer fails
 * the batch and Lambda hands it over again; every job counts each record once whatever it sees
 * twice.
 *
 * A piece of work is keyed by what it is (its job, lane and first record), so a batch handed over
 * again parks it once; run again, it counts under a lane of its own (`P<sort key>`), so it counts
 * once whatever the shard's lane has applied since.
 *
 *   parked work   PK `PARKED`  SK `<job>#<what it is>`   (one partition: parking is rare)
 */
import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../db/table/client.ts';
import { logger } from '../observability/logger.ts';
import { BusinessMetric, countEvent } from '../observability/metrics.ts';

export const PARKED_PARTITION = 'PARKED';
export const PARKED_TYPE = 'parked_work';
/** A parked item holds one piece of work well under DynamoDB's 400 KB. */
export const MAX_PARKED_BYTES = 300_000;

/** Work that cannot succeed as it is: park it, do not retry it. */
export class PoisonError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PoisonError';
  }
}

/**
 * Whether `err` says the request itself is wrong (DynamoDB's client faults other than throttling
 * and conditions, or `PoisonError`), so trying it again cannot help. Anything else (throttling,
 * server faults, timeouts, a refused connection) is passing, or unknown: the batch is failed and
 * handed over again rather than anything being dropped.
 */
export function isPoison(err: unknown): boolean {
  if (err instanceof PoisonError) return true;
  const e = err as { name?: string; $fault?: string; $retryable?: unknown; $metadata?: unknown };
  if (!e || typeof e !== 'object' || e.$metadata === undefined) return false;
  if (e.$fault !== 'client' || e.$retryable) return false;
  return !/Throttl|LimitExceeded|ProvisionedThroughput|RequestLimit|TransactionConflict|TransactionInProgress|ConditionalCheckFailed|TransactionCanceled|ResourceNotFound|UnrecognizedClient|ExpiredToken|AccessDenied/.test(
    e.name ?? '',
  );
}

const messageOf = (error: unknown) =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error);

/**
 * Set `work` (JSON) aside for `job`, under `id` (what the work is: the same work parks once).
 * Throws when it cannot be written: the caller fails the batch.
 */
export async function park(job: string, id: string, work: unknown, error: unknown): Promise<void> {
  const body = JSON.stringify(work);
  if (Buffer.byteLength(body) > MAX_PARKED_BYTES)
    throw new Error(`parked ${job} work of ${Buffer.byteLength(body)} bytes: park it in smaller pieces`);
  const sk = `${job}#${createHash('sha256').update(id).digest('base64url').slice(0, 22)}`;
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: {
          PK: PARKED_PARTITION,
          SK: sk,
          type: PARKED_TYPE,
          job,
          work: body,
          parked_at: new Date().toISOString(),
          error: messageOf(error).slice(0, 1000),
        },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return; // parked before (a batch handed over again)
    throw err;
  }
  countEvent(BusinessMetric.CountingWorkParked);
  logger.error('counting work parked: DynamoDB refuses it, and nothing waits for it', {
    job,
    parked: sk,
    error: messageOf(error),
  });
}

/** The lane a parked piece of work counts under when run again. */
export const parkedLane = (sk: string) => `P${sk}`;

export type ParkedRunner = (work: unknown, lane: string) => Promise<void>;

/** Every parked piece of work (the partition holds only what DynamoDB refused). */
export async function listParked(): Promise<Array<Record<string, unknown>>> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': PARKED_PARTITION },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/**
 * Run the parked work again, each piece once: what succeeds is deleted, what fails stays with its
 * new error. For an operator, once the cause is fixed.
 */
export async function retryParked(
  runners: Record<string, ParkedRunner>,
): Promise<{ succeeded: number; failed: number }> {
  let succeeded = 0;
  let failed = 0;
  for (const item of await listParked()) {
    const sk = String(item.SK);
    const runner = runners[String(item.job)];
    if (!runner) continue;
    try {
      await runner(JSON.parse(String(item.work)), parkedLane(sk));
      await db.send(new DeleteCommand({ TableName: tableName, Key: { PK: PARKED_PARTITION, SK: sk } }));
      succeeded++;
    } catch (err) {
      failed++;
      await db.send(
        new PutCommand({ TableName: tableName, Item: { ...item, error: messageOf(err).slice(0, 1000) } }),
      );
    }
  }
  return { succeeded, failed };
}
