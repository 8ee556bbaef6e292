/**
 * Gives series items written before they kept their day's totals (`Dv`, `Du`, ..., and the `Dt`
 * map of actions by type: `entities/analytics.ts`) those totals, from their hours.
 *
 * Safe beside a running rollup consumer: every update it makes adds to a metric's hour and to its
 * day total at once, so a total that did not change since this read means the hours of that
 * metric did not either. Each total is set to its hours' sum on the condition that it still holds
 * what was read; when a consumer got there first, the item is read again and the difference
 * computed again. An item already right is not written, so running it again (cut short, or twice
 * at once) changes nothing. It must run after `migrateSeriesItems`, which adds hours alone.
 *
 * Like that migration, it is a Scan (`table-migration.ts`): the local stack's start until the table
 * holds its marker, and `npm run table:migrate` for a deployed stage.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  DAY_TYPES_ATTRIBUTE,
  dayPointFromItem,
  dayTotalAttribute,
  dayTypeKey,
  SERIES_METRICS,
  SERIES_SK_PREFIX,
  seriesPointsFromItem,
  typeCountOf,
} from '../entities/analytics.ts';
import type { StoredItem } from '../entities/decode.ts';
import { countInParallel, markMigrated, migrated, scanPages } from './table-migration.ts';

/** The item that says a table's series items all keep their day totals. */
export const SERIES_DAY_TOTALS_MARKER = { PK: 'MIGRATION#series-day-totals', SK: 'DONE' } as const;

const MAX_ATTEMPTS = 20;

/**
 * The update that brings `item`'s day totals to its hours' sums, conditioned on the totals it read;
 * undefined when they are right already.
 */
export function dayTotalsUpdate(item: StoredItem):
  | {
      UpdateExpression: string;
      ConditionExpression: string;
      ExpressionAttributeNames: Record<string, string>;
      ExpressionAttributeValues: Record<string, unknown>;
    }
  | undefined {
  const hours = seriesPointsFromItem(item, 'day')[0];
  const stored = dayPointFromItem(item);
  if (!hours) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  const conditions: string[] = [];
  const setTo = (path: string, stored: unknown, sum: number, i: number) => {
    values[`:s${i}`] = sum;
    sets.push(`${path} = :s${i}`);
    if (stored === undefined) conditions.push(`attribute_not_exists(${path})`);
    else {
      values[`:o${i}`] = stored;
      conditions.push(`${path} = :o${i}`);
    }
  };
  let i = 0;
  for (const metric of SERIES_METRICS) {
    if (hours[metric] === stored[metric]) continue;
    names[`#m${i}`] = dayTotalAttribute(metric);
    setTo(`#m${i}`, item[dayTotalAttribute(metric)], hours[metric], i);
    i++;
  }
  const typesWrong = Object.entries(hours.actions_by_type).filter(
    ([type, n]) => typeCountOf(stored.actions_by_type, type) !== n,
  );
  if (typesWrong.length > 0) {
    names['#dt'] = DAY_TYPES_ATTRIBUTE;
    if (item[DAY_TYPES_ATTRIBUTE] === undefined) {
      values[':dt'] = Object.fromEntries(
        Object.entries(hours.actions_by_type).map(([type, n]) => [dayTypeKey(type), n]),
      );
      sets.push('#dt = :dt');
      conditions.push('attribute_not_exists(#dt)');
    } else {
      for (const [type, n] of typesWrong) {
        names[`#t${i}`] = dayTypeKey(type);
        setTo(`#dt.#t${i}`, typeCountOf(stored.actions_by_type, type), n, i);
        i++;
      }
    }
  }
  if (sets.length === 0) return undefined;
  return {
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
  };
}

/** One item's totals; true when it was written. */
async function backfillItem(db: DynamoDBDocumentClient, tableName: string, first: StoredItem) {
  let item: StoredItem | undefined = first;
  for (let attempt = 0; item !== undefined; attempt++) {
    const update = dayTotalsUpdate(item);
    if (!update) return false;
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { PK: item.PK, SK: item.SK },
          ...update,
          // Never recreate an item deleted meanwhile (a purged campaign's).
          ConditionExpression: `attribute_exists(PK) AND ${update.ConditionExpression}`,
        }),
      );
      return true;
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException) || attempt >= MAX_ATTEMPTS) throw err;
      // A consumer raised a total meanwhile (or the item is gone): read it again.
      ({ Item: item } = await db.send(
        new GetCommand({ TableName: tableName, Key: { PK: item.PK, SK: item.SK }, ConsistentRead: true }),
      ));
    }
  }
  return false;
}

/** Every series item's day totals; returns how many items were written. */
export async function backfillSeriesDayTotals(
  db: DynamoDBDocumentClient,
  tableName: string,
): Promise<number> {
  let written = 0;
  for await (const items of scanPages(db, tableName, {
    FilterExpression: 'begins_with(SK, :series)',
    ExpressionAttributeValues: { ':series': SERIES_SK_PREFIX },
    ConsistentRead: true,
  }))
    written += await countInParallel(items, (item) => backfillItem(db, tableName, item));
  await markMigrated(db, tableName, SERIES_DAY_TOTALS_MARKER);
  return written;
}

/** Whether the table's series items are known to keep their day totals (the backfill ran to its end). */
export const seriesDayTotalsKept = (db: DynamoDBDocumentClient, tableName: string) =>
  migrated(db, tableName, SERIES_DAY_TOTALS_MARKER);
