import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';

/**
 * Every item a Query of the functions' table matches, page after page (a page stops at 1 MB), in
 * the Query's order. For ranges known to be small (a series' days, a feed page's items): a list
 * endpoint pages with a cursor instead.
 */
export async function queryAll(
  input: Omit<QueryCommandInput, 'TableName' | 'ExclusiveStartKey'>,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({ ...input, TableName: tableName, ExclusiveStartKey: start }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** An index as its readers name it: the index and its key attributes. */
export interface QueriedIndex {
  indexName: string;
  partitionKey: string;
  sortKey: string;
}

const TABLE_KEYS = { partitionKey: 'PK', sortKey: 'SK' } as const;

export interface PageQuery {
  /** The index read; the table itself when omitted. */
  index?: QueriedIndex;
  partition: string;
  /** Only sort keys that begin with this. */
  sortKeyPrefix?: string;
  /**
   * Where the previous page ended (a cursor's position): that item's sort key in what is read and,
   * for an index, the item's table key, which DynamoDB needs to resume an index Query.
   */
  after?: { sortKey: string; tableKey?: Record<string, unknown> };
  limit: number;
  /** Read backwards: newest first for the sort keys that start with a time. */
  newestFirst?: boolean;
}

/** One page: at most `limit` items, and whether another page may follow. */
export interface QueriedPage {
  items: Record<string, unknown>[];
  /** The last item shown, whose position a cursor keeps; absent on an empty page. */
  last?: Record<string, unknown>;
  more: boolean;
}

/**
 * One page of a list: one Query of limit + 1 items (the extra one only tells whether another page
 * exists), so a page costs the same whatever the list's length. A Query also stops at 1 MB, so a
 * page of large items can end before `limit`: its LastEvaluatedKey then says more may follow, and
 * the page says `more`, or the rest of the list would be unreachable.
 */
export async function queryPage(query: PageQuery): Promise<QueriedPage> {
  const keys = query.index ?? TABLE_KEYS;
  const names: Record<string, string> = { '#pk': keys.partitionKey };
  const values: Record<string, unknown> = { ':pk': query.partition };
  let condition = '#pk = :pk';
  // Only when used: DynamoDB refuses a name or a value the expression does not use.
  if (query.sortKeyPrefix !== undefined) {
    names['#sk'] = keys.sortKey;
    values[':prefix'] = query.sortKeyPrefix;
    condition += ' AND begins_with(#sk, :prefix)';
  }
  const page = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: query.index?.indexName,
      KeyConditionExpression: condition,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: query.newestFirst ? false : undefined,
      Limit: query.limit + 1,
      ExclusiveStartKey: query.after
        ? {
            ...query.after.tableKey,
            [keys.partitionKey]: query.partition,
            [keys.sortKey]: query.after.sortKey,
          }
        : undefined,
    }),
  );
  const read = page.Items ?? [];
  const items = read.slice(0, query.limit);
  return {
    items,
    last: items.at(-1),
    more: read.length > query.limit || page.LastEvaluatedKey !== undefined,
  };
}
