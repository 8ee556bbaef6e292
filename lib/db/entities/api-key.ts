/**
 * The api-key item (`lib/db/api-keys.ts`): a key is stored only as its SHA-256.
 *
 *   PK `APIKEY#<sha256>`   SK `APIKEY`
 *     GSI1  `APIKEYS` / `<tenant>#<created>#<sha256>`   every key, for the CLI's list
 *
 * `revoked_at` is absent until the key is revoked (older items may hold NULL: also live).
 */
import { GSI1 } from '../../table-definition.ts';
import { decoder, type StoredItem } from './decode.ts';

const PREFIX = 'APIKEY#';

export function apiKeyItemKey(hash: string) {
  return { PK: `${PREFIX}${hash}`, SK: 'APIKEY' } as const;
}

/** Every key, through GSI1, under one partition key. */
export const API_KEY_LIST_INDEX = GSI1;
export const API_KEY_LIST_PARTITION = 'APIKEYS';

export function newApiKeyItem(tenant: string, hash: string, createdAt: string) {
  return {
    ...apiKeyItemKey(hash),
    type: 'api_key',
    GSI1PK: API_KEY_LIST_PARTITION,
    GSI1SK: `${tenant}#${createdAt}#${hash}`,
    tenant,
    key_hash: hash,
    created_at: createdAt,
  };
}

export interface ApiKeyItem {
  hash: string;
  tenant: string;
  created_at: string;
  /** The first revocation's time; null while the key is live. */
  revoked_at: string | null;
}

const field = decoder('api key');

/** A stored key, read by key or through the list's index. */
export function apiKeyFromItem(item: StoredItem): ApiKeyItem {
  const pk = field.string(item, 'PK');
  if (!pk.startsWith(PREFIX)) field.fail(item, 'PK', `"${PREFIX}<sha256>"`);
  const revoked = field.nullableString(item, 'revoked_at');
  return {
    hash: pk.slice(PREFIX.length),
    tenant: field.string(item, 'tenant'),
    created_at: field.string(item, 'created_at'),
    revoked_at: revoked === '' ? null : revoked,
  };
}

/**
 * What the authorizer needs of a stored key: its tenant and whether it is revoked. An item
 * without a tenant is no key (unknown), as it always was: the hot path never fails on one.
 */
export function apiKeyStateOf(
  item: StoredItem | undefined,
): { tenant: string; revoked: boolean } | undefined {
  if (!item || typeof item.tenant !== 'string') return undefined;
  return { tenant: item.tenant, revoked: typeof item.revoked_at === 'string' && item.revoked_at.length > 0 };
}
