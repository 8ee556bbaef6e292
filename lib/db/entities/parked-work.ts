/**
 * Parked work: counting work DynamoDB refused, set aside by the stream's counting consumer
 * (`lib/stream/parked.ts`) until an operator runs it again (`npm run parked`). Keyed by what it
 * is (its job and an id: its lane and first record), so the same work parks once.
 *
 *   PK `PARKED`   SK `<job>#<hash of what it is>`   (one partition: parking is rare)
 */
import { createHash } from 'node:crypto';

export const PARKED_PARTITION = 'PARKED';
export const PARKED_TYPE = 'parked_work';

export const parkedWorkKey = (job: string, id: string) => ({
  PK: PARKED_PARTITION,
  SK: `${job}#${createHash('sha256').update(id).digest('base64url').slice(0, 22)}`,
});

/** `work` is the piece of work as JSON; `error` what DynamoDB said, cut to 1,000 characters. */
export function newParkedWorkItem(job: string, id: string, work: string, error: string, parkedAt: Date) {
  return {
    ...parkedWorkKey(job, id),
    type: PARKED_TYPE,
    job,
    work,
    parked_at: parkedAt.toISOString(),
    error: error.slice(0, 1000),
  };
}
