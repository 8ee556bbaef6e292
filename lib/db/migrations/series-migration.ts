/**
 * Moves analytics series written in the layout before one item per day (an item per hour,
 * `AN#H#<scope>#<YYYY-MM-DDTHH>`, and per day, `AN#D#<scope>#<YYYY-MM-DD>`, the counts under their
 * metric names) into the day items endpoint 16 reads (`entities/analytics.ts`): each hour item's
 * counts are added to its day item's attributes for that hour, in one transaction with the hour
 * item's delete (on the condition that it still exists), so an hour is moved exactly once however
 * often the migration runs or is cut short. The old day items repeat their hours' sums and are
 * deleted.
 *
 * The old items sit in their campaigns' partitions, so nothing but a Scan finds them all: an
 * operator's one-off over the whole table (`npm run table:migrate` for a deployed stage, with the
 * operator's credentials; no function is granted `Scan`), and the local stack's start until its
 * table holds the marker that says it ran (`lib/local/stack.ts`). It takes the client and table it
 * is given and reads no configuration.
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import {
  ACTION_TYPE_PREFIX,
  SERIES_METRICS,
  SERIES_SK_PREFIX,
  type SeriesCount,
  seriesAttribute,
  seriesUpdate,
} from '../entities/analytics.ts';
import { decoder } from '../entities/decode.ts';
import { WRITE_BATCH, writeBatchOn } from '../table/batch-write.ts';
import { countInParallel, markMigrated, migrated, scanPages } from './table-migration.ts';

const field = decoder('analytics series (old layout)');
const OLD_HOUR = 'AN#H#';
const OLD_DAY = 'AN#D#';

/** The item that says a table's series are in the day layout: the local stack looks for it. */
export const SERIES_LAYOUT_MARKER = { PK: 'MIGRATION#series-by-day', SK: 'DONE' } as const;

export interface SeriesMigrationResult {
  /** Old hour items moved into their day items now. */
  hours: number;
  /** Old day items deleted. */
  days: number;
}

/** The day item an old hour item's counts go to, and the attributes they become. */
export function movedHour(item: Record<string, unknown>): {
  key: { PK: string; SK: string };
  adds: Record<string, number>;
} {
  const sk = field.string(item, 'SK');
  const match = /^AN#H#(.+)#(\d{4}-\d{2}-\d{2})T(\d{2})$/.exec(sk);
  if (!match) field.fail(item, 'SK', 'an hour series key');
  const [, scope, day, hh] = match!;
  const hour = Number(hh);
  const adds: Record<string, number> = {};
  const add = (count: SeriesCount, value: unknown, name: string) => {
    if (value === undefined) return;
    if (typeof value !== 'number') field.fail(item, name, 'a number');
    if ((value as number) !== 0) adds[seriesAttribute(hour, count)] = value as number;
  };
  for (const metric of SERIES_METRICS) add(metric, item[metric], metric);
  for (const [name, value] of Object.entries(item))
    if (name.startsWith(ACTION_TYPE_PREFIX))
      add({ actionType: name.slice(ACTION_TYPE_PREFIX.length) }, value, name);
  return { key: { PK: field.string(item, 'PK'), SK: `${SERIES_SK_PREFIX}${scope}#${day}` }, adds };
}

export async function migrateSeriesItems(
  db: DynamoDBDocumentClient,
  tableName: string,
): Promise<SeriesMigrationResult> {
  const result: SeriesMigrationResult = { hours: 0, days: 0 };
  for await (const items of scanPages(db, tableName, {
    FilterExpression: 'begins_with(SK, :hour) OR begins_with(SK, :day)',
    ExpressionAttributeValues: { ':hour': OLD_HOUR, ':day': OLD_DAY },
  })) {
    const hours = items.filter((i) => String(i.SK).startsWith(OLD_HOUR));
    const days = items.filter((i) => String(i.SK).startsWith(OLD_DAY));
    result.hours += await countInParallel(hours, (h) => moveHour(db, tableName, h));
    for (let i = 0; i < days.length; i += WRITE_BATCH) {
      const batch = days.slice(i, i + WRITE_BATCH);
      result.days += await writeBatchOn(
        { db, tableName },
        batch.map((d) => ({ DeleteRequest: { Key: { PK: String(d.PK), SK: String(d.SK) } } })),
      );
    }
  }
  await markMigrated(db, tableName, SERIES_LAYOUT_MARKER);
  return result;
}

/** What a migration did, in one line (the local stack's start and `npm run table:migrate` print it). */
export const describeSeriesMigration = (r: SeriesMigrationResult) =>
  `analytics series: ${r.hours} hour items moved into their day items, ${r.days} old day items deleted`;

/** Whether the table's series are known to be in the day layout (the migration ran to its end). */
export const seriesLayoutMigrated = (db: DynamoDBDocumentClient, tableName: string) =>
  migrated(db, tableName, SERIES_LAYOUT_MARKER);

/** One hour item into its day item; false when another run moved it first. */
async function moveHour(db: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>) {
  const { key, adds } = movedHour(item);
  for (let attempt = 0; ; attempt++) {
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: { TableName: tableName, Key: key, ...seriesUpdate(Object.entries(adds)) },
            },
            {
              Delete: {
                TableName: tableName,
                Key: { PK: item.PK, SK: item.SK },
                ConditionExpression: 'attribute_exists(PK)',
              },
            },
          ],
        }),
      );
      return true;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      // The hour item is gone: another run moved it.
      if (err.CancellationReasons?.[1]?.Code === 'ConditionalCheckFailed') return false;
      // A conflict with the rollup consumer writing the same day item: again, a little later.
      if (attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 20 * 2 ** attempt));
    }
  }
}
