import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';

/**
 * The key of an item no writer ever makes: reading it proves the table answers (a consistent read,
 * so the partition's leader answers) and reads no account's data.
 */
export const PROBE_KEY = { PK: 'HEALTH#PROBE', SK: 'HEALTH#PROBE' } as const;

/** One GetItem of `PROBE_KEY`; its latency in milliseconds. A failure throws (a 503 for the API). */
export async function probeTable(): Promise<number> {
  const started = performance.now();
  await db.send(new GetCommand({ TableName: tableName, Key: PROBE_KEY, ConsistentRead: true }));
  return Math.round((performance.now() - started) * 10) / 10;
}
