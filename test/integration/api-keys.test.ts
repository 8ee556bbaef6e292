/**
 * Api keys on the run's DynamoDB Local table: the store the CLI uses and the authorizer that reads
 * it, in process. A revoked key must stop working within 60 s when deployed; API Gateway's cache
 * (at most 60 s, asserted in test/infra/http-api.test.ts) is the whole of that bound only if the
 * authorizer itself answers from the table on every call, which is what this checks.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyStore } from '../../lib/db/api-keys.ts';
import { apiKeyItemKey } from '../../lib/db/entities/api-key.ts';
import { generateApiKey, hashApiKey } from '../../lib/domain/api-key-rules.ts';
import { configureInProcessHandlers, table } from '../support/table.ts';

configureInProcessHandlers();
const { handler: authorize } = await import('../../functions/auth/authorizer.ts');

const tenantFor = async (key: string) => {
  const event = {
    headers: { 'api-key': key },
    identitySource: [key],
  } as unknown as APIGatewayRequestAuthorizerEventV2;
  const answer = await authorize(event);
  expect(answer.isAuthorized).toBe(true); // the handler answers the contract's 401, not API Gateway
  return answer.context.tenant;
};

let store: ApiKeyStore;
beforeAll(() => {
  store = new ApiKeyStore(table().db, table().name);
});

describe('api keys', () => {
  it('a revoked key is refused by the very next authorizer call, and revoking twice keeps the first time', async () => {
    const { key, record } = await store.create('keys-tenant');
    expect(await tenantFor(key)).toBe('keys-tenant');
    expect(await store.revoke(key)).toBe('revoked');
    expect(await tenantFor(key)).toBe('');
    const listed = (await store.list()).find((k) => k.id === record.id);
    expect(listed?.revoked_at).toMatch(/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}$/);
    expect(await store.revoke(record.id)).toBe('already_revoked');
    expect((await store.list()).find((k) => k.id === record.id)?.revoked_at).toBe(listed?.revoked_at);
    expect(await store.status(key)).toEqual({ state: 'revoked', tenant: 'keys-tenant' });
  });

  it('a key stored with revoked_at NULL (as older versions wrote it) is live, and revoke works on it', async () => {
    const key = generateApiKey();
    const hash = hashApiKey(key);
    // Written straight into the table: only older versions wrote this item, no current writer can.
    await table().db.send(
      new PutCommand({
        TableName: table().name,
        Item: {
          ...apiKeyItemKey(hash),
          type: 'api_key',
          GSI1PK: 'APIKEYS',
          GSI1SK: `legacy#2026-01-01_00-00-00#${hash}`,
          tenant: 'legacy',
          key_hash: hash,
          created_at: '2026-01-01_00-00-00',
          revoked_at: null,
        },
      }),
    );
    expect(await tenantFor(key)).toBe('legacy');
    expect((await store.list()).find((k) => k.hash === hash)?.revoked_at).toBeNull();
    expect(await store.revoke(key)).toBe('revoked');
    expect(await tenantFor(key)).toBe('');
    expect((await store.list()).find((k) => k.hash === hash)?.revoked_at).not.toBeNull();
  });

  it('an unknown key or id is not_found; an existing key is never overwritten by create', async () => {
    expect(await store.revoke(generateApiKey())).toBe('not_found');
    expect(await store.revoke('0123456789abcdef')).toBe('not_found');
    const { key } = await store.create('keys-owner');
    await expect(store.create('keys-thief', key)).rejects.toThrow(/exists already/);
    expect(await tenantFor(key)).toBe('keys-owner');
  });
});
