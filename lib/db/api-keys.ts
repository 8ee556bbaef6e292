/**
 * The api keys' store (items in `entities/api-key.ts`; what a key is, `lib/domain/api-key-rules.ts`),
 * on the client and table it is given: the authorizer's, or an operator's (`npm run api-key`).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { generateApiKey, hashApiKey, TENANT_PATTERN } from '../domain/api-key-rules.ts';
import { formatTimestamp } from '../domain/time.ts';
import {
  API_KEY_LIST_INDEX,
  API_KEY_LIST_PARTITION,
  apiKeyFromItem,
  apiKeyItemKey,
  apiKeyStateOf,
  newApiKeyItem,
} from './entities/api-key.ts';

export type RevokeOutcome = 'revoked' | 'already_revoked' | 'not_found';

export interface ApiKeyRecord {
  /** The first 16 hex characters of the hash: enough to name a key in `list` and `revoke`. */
  id: string;
  tenant: string;
  created_at: string;
  revoked_at: string | null;
}

export class ApiKeyStore {
  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  /** Store a key (given, or generated) for a tenant; returns the key in clear, once. */
  async create(tenant: string, key = generateApiKey()): Promise<{ key: string; record: ApiKeyRecord }> {
    if (!TENANT_PATTERN.test(tenant)) {
      throw new Error('A tenant name is 1-64 characters of letters, digits, ".", "_" and "-".');
    }
    if (key.length < 16) throw new Error('An api key must be at least 16 characters long.');
    const hash = hashApiKey(key);
    const created_at = formatTimestamp(new Date());
    try {
      await this.db.send(
        new PutCommand({
          TableName: this.tableName,
          // `revoked_at` is absent until the key is revoked: a live key has no such attribute.
          Item: newApiKeyItem(tenant, hash, created_at),
          // Never over a stored key: re-creating a revoked key would bring it back to life.
          ConditionExpression: 'attribute_not_exists(PK)',
        }),
      );
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) throw new Error('That api key exists already.');
      throw err;
    }
    return { key, record: { id: hash.slice(0, 16), tenant, created_at, revoked_at: null } };
  }

  /** What the table says of a key: live (with its tenant), revoked, or unknown. One GetItem. */
  async status(key: string): Promise<{ state: 'live' | 'revoked'; tenant: string } | { state: 'unknown' }> {
    const { Item } = await this.db.send(
      new GetCommand({
        TableName: this.tableName,
        Key: apiKeyItemKey(hashApiKey(key)),
        ConsistentRead: true,
      }),
    );
    const stored = apiKeyStateOf(Item);
    if (!stored) return { state: 'unknown' };
    return { state: stored.revoked ? 'revoked' : 'live', tenant: stored.tenant };
  }

  /** The tenant of a live key, or undefined for an unknown or revoked one. One GetItem. */
  async tenantOf(key: string): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetCommand({ TableName: this.tableName, Key: apiKeyItemKey(hashApiKey(key)) }),
    );
    const stored = apiKeyStateOf(Item);
    return stored && !stored.revoked ? stored.tenant : undefined;
  }

  async list(): Promise<Array<ApiKeyRecord & { hash: string }>> {
    const out: Array<ApiKeyRecord & { hash: string }> = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await this.db.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: API_KEY_LIST_INDEX.indexName,
          KeyConditionExpression: `${API_KEY_LIST_INDEX.partitionKey} = :pk`,
          ExpressionAttributeValues: { ':pk': API_KEY_LIST_PARTITION },
          ExclusiveStartKey,
        }),
      );
      for (const item of page.Items ?? []) {
        const { hash, tenant, created_at, revoked_at } = apiKeyFromItem(item);
        out.push({ id: hash.slice(0, 16), hash, tenant, created_at, revoked_at });
      }
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    return out;
  }

  /**
   * Revoke by the key itself or by its id from `list`. The first revocation's time is kept; a key
   * stored by an older version with `revoked_at: null` (NULL, which `if_not_exists` counts as
   * present) is revoked like one without the attribute.
   */
  async revoke(keyOrId: string): Promise<RevokeOutcome> {
    let hash: string | undefined;
    if (/^[0-9a-f]{16}$/.test(keyOrId)) {
      const matches = (await this.list()).filter((k) => k.id === keyOrId);
      if (matches.length > 1) throw new Error('That id is ambiguous; pass the key itself.');
      hash = matches[0]?.hash;
    }
    // Not an id of any key: it may be a key that happens to look like one.
    hash ??= hashApiKey(keyOrId);
    try {
      await this.db.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: apiKeyItemKey(hash),
          UpdateExpression: 'SET revoked_at = :now',
          ConditionExpression:
            'attribute_exists(PK) AND (attribute_not_exists(revoked_at) OR attribute_type(revoked_at, :null))',
          ExpressionAttributeValues: { ':now': formatTimestamp(new Date()), ':null': 'NULL' },
        }),
      );
      return 'revoked';
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
      const { Item } = await this.db.send(
        new GetCommand({ TableName: this.tableName, Key: apiKeyItemKey(hash), ConsistentRead: true }),
      );
      return Item ? 'already_revoked' : 'not_found';
    }
  }
}
