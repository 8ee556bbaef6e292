/**
 * Which name an action's type is counted under: its own for a campaign's first `NAMED_TYPES_MAX`
 * distinct types, `OTHER_TYPE` for every later one, so that no input can grow a rollup item
 * without bound (one tenant posting thousands of distinct types would otherwise pass DynamoDB's
 * limits and stop the counting for everyone).
 *
 * The campaign's registry item holds the named types (a string set). A type is named once, by a
 * conditional ADD that succeeds only while the set has room or already holds it, so two consumers
 * racing for the last place cannot both take it, and the answer for a type never changes
 * afterwards: a batch handed over again counts each of its actions under the same name.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { db, tableName } from '../db/client.ts';
import {
  NAMED_TYPES_MAX,
  OTHER_TYPE,
  TYPE_REGISTRY_NAMES,
  typeRegistryKey,
} from '../db/entities/analytics.ts';

interface Known {
  names: Set<string>;
  /** The set is full: a type not in it is `OTHER_TYPE`. */
  full: boolean;
}

/** Per container, per campaign; bounded (forgetting costs one read). */
const known = new Map<string, Known>();
const KNOWN_MAX = 5_000;

export function forgetTypeRegistry(): void {
  known.clear();
}

const namesOf = (item: Record<string, unknown> | undefined): Set<string> => {
  const value = item?.[TYPE_REGISTRY_NAMES];
  return value instanceof Set ? new Set([...value].map(String)) : new Set();
};

async function load(tenant: string, campaignId: string): Promise<Known> {
  const id = `${tenant}\u0000${campaignId}`;
  const cached = known.get(id);
  if (cached) return cached;
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: typeRegistryKey(tenant, campaignId), ConsistentRead: true }),
  );
  const names = namesOf(Item);
  const entry = { names, full: names.size >= NAMED_TYPES_MAX };
  if (known.size >= KNOWN_MAX) known.clear();
  known.set(id, entry);
  return entry;
}

async function register(tenant: string, campaignId: string, type: string, entry: Known): Promise<void> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: typeRegistryKey(tenant, campaignId),
        UpdateExpression: 'SET #type = :type ADD #names :one',
        ConditionExpression: 'attribute_not_exists(#names) OR size(#names) < :max OR contains(#names, :name)',
        ExpressionAttributeNames: { '#names': TYPE_REGISTRY_NAMES, '#type': 'type' },
        ExpressionAttributeValues: {
          ':one': new Set([type]),
          ':max': NAMED_TYPES_MAX,
          ':name': type,
          ':type': 'analytics_types',
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    entry.names = namesOf(Attributes);
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    // biome-ignore lint/suspicious/noExplicitAny: the SDK's marshalled image.
    entry.names = namesOf(err.Item ? unmarshall(err.Item as any) : undefined);
  }
  entry.full = entry.names.size >= NAMED_TYPES_MAX;
}

/**
 * The names `types` are counted under in the campaign: each type itself, or `OTHER_TYPE`. At most
 * one read of the registry per campaign and container, and one write per type it names.
 */
export async function countedTypeNames(
  tenant: string,
  campaignId: string,
  types: Iterable<string>,
): Promise<Map<string, string>> {
  const entry = await load(tenant, campaignId);
  const out = new Map<string, string>();
  for (const type of types) {
    if (out.has(type)) continue;
    if (!entry.names.has(type) && !entry.full) await register(tenant, campaignId, type, entry);
    out.set(type, entry.names.has(type) ? type : OTHER_TYPE);
  }
  return out;
}
