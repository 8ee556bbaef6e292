/**
 * The table behind the API's back, for the tests and the bench alike: reads that check what the
 * writers stored, and bulk writes for data too big to make through the API. No vitest here: the
 * tests' defaults (the run's own table) are in `test/support/table.ts`.
 */
import {
  BatchGetCommand,
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  QueryCommand,
} from '@aws-sdk/lib-dynamodb';
import { campaignPartition } from '../lib/db/entities/campaign.ts';
import { visitPartitions } from '../lib/db/entities/visit.ts';
import { mapLimit } from './wait.ts';

export interface Table {
  db: DynamoDBDocumentClient;
  name: string;
}

type Key = { PK: string; SK: string };

/** Every item of the partition `pk` whose SK starts with `prefix` ('' for all), read consistently, page by page. */
export async function partitionItems(
  pk: string,
  prefix: string,
  on: Table,
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await on.db.send(
      new QueryCommand({
        TableName: on.name,
        KeyConditionExpression: prefix ? 'PK = :pk AND begins_with(SK, :prefix)' : 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk, ...(prefix ? { ':prefix': prefix } : {}) },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every item of a campaign's partition (`T#<tenant>#C#<campaign>`) whose SK starts with `prefix` ('' for all). */
export const campaignItems = (tenant: string, campaignId: string, prefix: string, on: Table) =>
  partitionItems(campaignPartition(tenant, campaignId), prefix, on);

/** Every item of a campaign's 16 visit partitions (`lib/db/entities/visit.ts`) whose SK starts with `prefix`: visits `A#`, bot visits `B#`. */
export async function visitItems(tenant: string, campaignId: string, on: Table, prefix = '') {
  const pages = await Promise.all(
    visitPartitions(tenant, campaignId).map((pk) => partitionItems(pk, prefix, on)),
  );
  return pages.flat();
}

/** The items of `keys` that exist, in the order of `keys` (undefined where none), read consistently, 100 a call. */
export async function getItems(
  keys: readonly Key[],
  on: Table,
): Promise<Array<Record<string, unknown> | undefined>> {
  const chunks = Array.from({ length: Math.ceil(keys.length / 100) }, (_, c) =>
    keys.slice(c * 100, c * 100 + 100),
  );
  const found = new Map<string, Record<string, unknown>>();
  await mapLimit(chunks, 4, async (chunk) => {
    let pending: Array<Record<string, unknown>> = [...chunk];
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw new Error('BatchGetItem kept keys unprocessed');
      const out = await on.db.send(
        new BatchGetCommand({ RequestItems: { [on.name]: { Keys: pending, ConsistentRead: true } } }),
      );
      for (const item of out.Responses?.[on.name] ?? []) found.set(`${item.PK}\u0000${item.SK}`, item);
      pending = out.UnprocessedKeys?.[on.name]?.Keys ?? [];
    }
  });
  return keys.map((k) => found.get(`${k.PK}\u0000${k.SK}`));
}

/**
 * Write items straight into the table (BatchWriteItem, 25 a call, `writers` calls in flight; in
 * order with 1): only for data too big to make through the API in time, built with lib/db's own
 * item builders so they are what the writers store. `items` may be a generator of millions;
 * `progress` is told the count written every 10 s. Resolves with the count written.
 */
export async function putItems(
  items: Iterable<object>,
  on: Table,
  options: { writers?: number; progress?: (written: number) => void } = {},
): Promise<number> {
  const source = items[Symbol.iterator]();
  const take = () => {
    const batch: object[] = [];
    for (let r = source.next(); !r.done && batch.push(r.value) < 25; r = source.next());
    return batch;
  };
  let written = 0;
  const timer = options.progress && setInterval(() => options.progress?.(written), 10_000);
  try {
    const writer = async () => {
      for (let batch = take(); batch.length > 0; batch = take()) {
        let pending = batch.map((Item) => ({ PutRequest: { Item } }));
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > 8) throw new Error('BatchWriteItem kept items unprocessed');
          const out = await on.db.send(new BatchWriteCommand({ RequestItems: { [on.name]: pending } }));
          pending = (out.UnprocessedItems?.[on.name] as typeof pending | undefined) ?? [];
        }
        written += batch.length;
      }
    };
    await Promise.all(Array.from({ length: options.writers ?? 4 }, writer));
  } finally {
    clearInterval(timer);
  }
  return written;
}
