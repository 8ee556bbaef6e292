/**
 * The counting consumer's (`lib/analytics/`) own items besides the counts it raises
 * (`counted-update.ts`): a campaign's type registry, the rankings' boards and the shards' window
 * marks (items in `entities/analytics.ts`). Each write is conditional, and tells the caller when
 * its condition did not hold, with what the item holds where the caller needs it.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import {
  type BoardEntry,
  boardEntriesOf,
  NAMED_TYPES_MAX,
  newBoardItem,
  newWindowMarkItem,
  padSequence,
  registeredTypes,
  TYPE_REGISTRY_NAMES,
  TYPE_REGISTRY_TYPE,
  typeRegistryKey,
  windowMarkKey,
} from './entities/analytics.ts';
import { db, tableName } from './table/client.ts';

type Key = { PK: string; SK: string };

/** The types the campaign's registry names now (strongly consistent). One GetItem. */
export async function readTypeRegistry(tenant: string, campaignId: string): Promise<Set<string>> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: typeRegistryKey(tenant, campaignId), ConsistentRead: true }),
  );
  return registeredTypes(Item);
}

/**
 * Name `wanted` in the campaign's registry, all of them or none: one UpdateItem that holds only
 * while the set has room for all it adds. The names the registry holds after it, or, when it had
 * no room, as it was (a racing consumer took the room).
 */
export async function addToTypeRegistry(
  tenant: string,
  campaignId: string,
  wanted: readonly string[],
): Promise<Set<string>> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: typeRegistryKey(tenant, campaignId),
        UpdateExpression: 'SET #type = :type ADD #names :wanted',
        ConditionExpression: 'attribute_not_exists(#names) OR size(#names) <= :limit',
        ExpressionAttributeNames: { '#names': TYPE_REGISTRY_NAMES, '#type': 'type' },
        ExpressionAttributeValues: {
          ':wanted': new Set(wanted),
          ':limit': NAMED_TYPES_MAX - wanted.length,
          ':type': TYPE_REGISTRY_TYPE,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return registeredTypes(Attributes);
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's marshalled image.
    return registeredTypes(err.Item ? unmarshall(err.Item as any) : undefined);
  }
}

/** A board as it is now (strongly consistent): version 0 and no entries when it has no item. */
export async function readBoard(key: Key): Promise<{ version: number; entries: BoardEntry[] }> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  return {
    version: typeof Item?.version === 'number' ? Item.version : 0,
    entries: boardEntriesOf(Item),
  };
}

/**
 * Write the board read at `version` as `version + 1` with `entries`: false when another write got
 * there since (the board is no longer at `version`), and nothing is written.
 */
export async function writeBoard(
  key: Key,
  version: number,
  entries: readonly BoardEntry[],
): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: newBoardItem(key, version + 1, entries),
        ConditionExpression: version === 0 ? 'attribute_not_exists(PK)' : '#v = :v',
        ...(version === 0
          ? {}
          : { ExpressionAttributeNames: { '#v': 'version' }, ExpressionAttributeValues: { ':v': version } }),
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** The last record `lane`'s ended windows wrote, if any (strongly consistent). One GetItem. */
export async function readWindowMark(lane: string): Promise<string | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: windowMarkKey(lane), ConsistentRead: true }),
  );
  return typeof Item?.last === 'string' ? Item.last : undefined;
}

/** Move `lane`'s window mark to `last`, unless a later window's mark is there already. One PutItem. */
export async function writeWindowMark(lane: string, last: string): Promise<void> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: newWindowMarkItem(lane, last, Date.now()),
        ConditionExpression: 'attribute_not_exists(PK) OR #pos < :pos',
        ExpressionAttributeNames: { '#pos': 'position' },
        ExpressionAttributeValues: { ':pos': padSequence(last) },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
