/**
 * What the one-off migrations of an older table share (`campaign-list-backfill.ts`,
 * `series-migration.ts`, `series-day-totals.ts`): a Scan read page by page, the items of a page
 * handled a few at a time, and the marker item that says a migration ran to its end. They take
 * the client and table they are given and read no configuration (operators' scripts and the local
 * stack's start use them).
 */
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  ScanCommand,
  type ScanCommandInput,
} from '@aws-sdk/lib-dynamodb';

type Item = Record<string, unknown>;

/** The items a Scan finds, one page at a time (`input` without its table and start key). */
export async function* scanPages(
  db: DynamoDBDocumentClient,
  tableName: string,
  input: Omit<ScanCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): AsyncGenerator<Item[]> {
  let start: Item | undefined;
  do {
    const page = await db.send(new ScanCommand({ ...input, TableName: tableName, ExclusiveStartKey: start }));
    yield page.Items ?? [];
    start = page.LastEvaluatedKey;
  } while (start);
}

/** How many conditional writes a migration keeps in flight. */
export const MIGRATION_PARALLEL = 8;

/** `each` of `items`, `MIGRATION_PARALLEL` at a time; how many answered true. */
export async function countInParallel(
  items: readonly Item[],
  each: (item: Item) => Promise<boolean>,
): Promise<number> {
  let count = 0;
  for (let i = 0; i < items.length; i += MIGRATION_PARALLEL) {
    const done = await Promise.all(items.slice(i, i + MIGRATION_PARALLEL).map(each));
    count += done.filter(Boolean).length;
  }
  return count;
}

export type MigrationMarker = { readonly PK: string; readonly SK: 'DONE' };

/** Writes the marker that says the migration ran to its end. */
export async function markMigrated(
  db: DynamoDBDocumentClient,
  tableName: string,
  marker: MigrationMarker,
): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { ...marker, at: new Date().toISOString() } }));
}

/** Whether the table holds the marker (the migration ran to its end). */
export async function migrated(
  db: DynamoDBDocumentClient,
  tableName: string,
  marker: MigrationMarker,
): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: marker, ConsistentRead: true }));
  return Item !== undefined;
}
