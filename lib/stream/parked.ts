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
 * The items are `lib/db/entities/parked-work.ts`, what tells refused work from passing trouble
 * `lib/db/table/poison.ts`.
 */
import { newParkedWorkItem } from '../db/entities/parked-work.ts';
import { deleteParkedWork, listParkedWork, putParkedWork, reparkWork } from '../db/parked-work.ts';
import { logger } from '../observability/logger.ts';
import { BusinessMetric, countEvent } from '../observability/metrics.ts';

/** A parked item holds one piece of work well under DynamoDB's 400 KB. */
export const MAX_PARKED_BYTES = 300_000;

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
  const item = newParkedWorkItem(job, id, body, messageOf(error), new Date());
  if (!(await putParkedWork(item))) return; // parked before (a batch handed over again)
  countEvent(BusinessMetric.CountingWorkParked);
  logger.error('counting work parked: DynamoDB refuses it, and nothing waits for it', {
    job,
    parked: item.SK,
    error: messageOf(error),
  });
}

/** The lane a parked piece of work counts under when run again. */
export const parkedLane = (sk: string) => `P${sk}`;

export type ParkedRunner = (work: unknown, lane: string) => Promise<void>;

/**
 * Run the parked work again, each piece once: what succeeds is deleted, what fails stays with its
 * new error. For an operator, once the cause is fixed.
 */
export async function retryParked(
  runners: Record<string, ParkedRunner>,
): Promise<{ succeeded: number; failed: number }> {
  let succeeded = 0;
  let failed = 0;
  for (const item of await listParkedWork()) {
    const sk = String(item.SK);
    const runner = runners[String(item.job)];
    if (!runner) continue;
    try {
      await runner(JSON.parse(String(item.work)), parkedLane(sk));
      await deleteParkedWork(sk);
      succeeded++;
    } catch (err) {
      failed++;
      await reparkWork(item, messageOf(err));
    }
  }
  return { succeeded, failed };
}
