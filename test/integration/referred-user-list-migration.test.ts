/**
 * A local table whose referred users were written before their list existed (a `DATA_DIR` kept
 * from an earlier version): no list keys, no `referral_code`. The local stack's start
 * (`prepareLocalTable`) gives them both, so the campaign's list, its link's and its referrer's
 * hold them, newest first. Run on a table of its own in the run's DynamoDB Local, never the run's
 * table; the items are written directly because the old version that wrote them is gone.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { newCampaignItem } from '../../lib/db/entities/campaign.ts';
import { type LinkItem, newLinkItem } from '../../lib/db/entities/link.ts';
import {
  newReferredUserItem,
  REFERRED_USER_LIST_INDEX,
  type ReferredUserFilter,
  referredUserFromItem,
  referredUserListPartition,
} from '../../lib/db/entities/referred-user.ts';
import { backfillReferredUserListKeys } from '../../lib/db/migrations/referred-user-list-keys.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { WEBHOOK_EVENT_TYPES } from '../../lib/domain/webhook-events.ts';
import { createTableInput } from '../../lib/local/dynamodb.ts';
import { prepareLocalTable } from '../../lib/local/stack.ts';
import { runStack } from '../support/run-stack.ts';
import { type Table, table } from '../support/table.ts';

const endpoint = () => runStack().dynamodbEndpoint;
const tableName = `referred-list-migration-${randomUUID().slice(0, 8)}`;

/** A referred user item as the versions before the list wrote it: no list keys, no `referral_code`. */
function oldReferredUserItem(link: LinkItem, id: number, referredUserId: string, now: Date) {
  const item: Record<string, unknown> = { ...newReferredUserItem(link, { id, referredUserId, now }) };
  for (const name of ['GSI1PK', 'GSI1SK', 'GSI2PK', 'GSI2SK', 'GSI3PK', 'GSI3SK', 'referral_code']) {
    delete item[name];
  }
  return item;
}

describe('referred users written before their list, on the local stack’s start', () => {
  const client = new DynamoDBClient(dynamoClientConfig(endpoint(), undefined, 30_000));
  let old: Table;
  const steps: string[] = [];
  const day = Date.UTC(2026, 0, 10, 9, 0, 0);
  const campaignId = randomUUID();
  const campaign = newCampaignItem(
    'acme',
    {
      id: campaignId,
      created_at: formatTimestamp(new Date(day)),
      url: 'https://example.com/old',
      name: 'old',
      webhook_url: null,
      webhook_secret: null,
      webhook_events: [...WEBHOOK_EVENT_TYPES],
      webhook_status: 'enabled',
      webhook_disabled_reason: null,
    },
    new Date(day),
  );
  const linkOf = (id: number, referrerId: string | null) =>
    ({
      ...newLinkItem({
        tenant: 'acme',
        campaignId,
        campaignUrl: 'https://example.com/old',
        id,
        code: `MIG-${randomUUID().slice(0, 8)}`,
        referrerId,
        now: new Date(day),
      }),
    }) as LinkItem;
  const withReferrer = linkOf(9_200_000_001, 'alice');
  const anonymous = linkOf(9_200_000_002, null);
  // A second apart: whole seconds are all the old items kept.
  const users = [
    oldReferredUserItem(withReferrer, 9_300_000_001, 'first', new Date(day + 1_000)),
    oldReferredUserItem(anonymous, 9_300_000_002, 'second', new Date(day + 2_000)),
    oldReferredUserItem(withReferrer, 9_300_000_003, 'third', new Date(day + 3_000)),
  ];

  beforeAll(async () => {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    old = table({ dynamodbEndpoint: endpoint(), tableName });
    for (const Item of [campaign, withReferrer, anonymous, ...users]) {
      await old.db.send(new PutCommand({ TableName: tableName, Item }));
    }
    await prepareLocalTable(endpoint(), tableName, (s) => steps.push(s));
  }, 120_000);

  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
    client.destroy();
  });

  const listed = async (filter: ReferredUserFilter) => {
    const index = REFERRED_USER_LIST_INDEX[filter.kind];
    const { Items = [] } = await old.db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: index.indexName,
        KeyConditionExpression: `${index.partitionKey} = :pk`,
        ExpressionAttributeValues: { ':pk': referredUserListPartition('acme', campaignId, filter) },
        ScanIndexForward: false,
      }),
    );
    return Items.map((i) => [i.SK, i.referral_code]);
  };

  it('gives every old referred user its list keys on start, once', async () => {
    expect(steps).toContain('referred-user list: 3 of 3 referred users given their list keys');
    // Marked done: a second run finds nothing to do.
    expect(await backfillReferredUserListKeys(old.db, tableName)).toEqual({ found: 0, updated: 0 });
  });

  it('lists them newest first in the campaign’s, the link’s and the referrer’s list', async () => {
    const a = withReferrer.referral_code;
    const b = anonymous.referral_code;
    expect(await listed({ kind: 'campaign' })).toEqual([
      ['RU#third', a],
      ['RU#second', b],
      ['RU#first', a],
    ]);
    expect(await listed({ kind: 'link', linkId: withReferrer.id })).toEqual([
      ['RU#third', a],
      ['RU#first', a],
    ]);
    expect(await listed({ kind: 'link', linkId: anonymous.id })).toEqual([['RU#second', b]]);
    expect(await listed({ kind: 'referrer', referrerId: 'alice' })).toEqual([
      ['RU#third', a],
      ['RU#first', a],
    ]);
  });

  it('decodes an old item and a migrated one alike', () => {
    expect(referredUserFromItem(users[0]!).referral_code).toBe(withReferrer.referral_code);
  });
});
