/**
 * A local table made before the campaign list (a `DATA_DIR` kept from an earlier version): its GSI2
 * projects the links' attributes only and its campaigns have no GSI2 keys. The local stack's start
 * (`prepareLocalTable`) gives those campaigns their list keys and rebuilds GSI2 with the campaign
 * attributes, so the list shows every campaign, whole. Run on a table of its own in the run's
 * DynamoDB Local, never the run's table.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { backfillCampaignListKeys } from '../../lib/db/campaign-list-backfill.ts';
import {
  CAMPAIGN_LIST_INDEX,
  campaignFromItem,
  campaignListPartition,
  newCampaignItem,
} from '../../lib/db/entities/campaign.ts';
import { CAMPAIGN_LINKS_INDEX, campaignLinksPartition, newLinkItem } from '../../lib/db/entities/link.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { WEBHOOK_EVENT_TYPES } from '../../lib/domain/webhook-events.ts';
import { createTableInput, staleIndexes } from '../../lib/local/dynamodb.ts';
import { prepareLocalTable } from '../../lib/local/stack.ts';
import { GSI2, LINK_INDEX_ATTRIBUTES } from '../../lib/table-definition.ts';
import { runStack } from '../support/run-stack.ts';
import { type Table, table } from '../support/table.ts';

const endpoint = () => runStack().dynamodbEndpoint;
const tableName = `campaign-list-migration-${randomUUID().slice(0, 8)}`;

/** A campaign item as the versions before the list wrote it: no GSI2 keys. */
function oldCampaignItem(tenant: string, name: string, created: Date) {
  const {
    GSI2PK: _pk,
    GSI2SK: _sk,
    ...item
  } = newCampaignItem(
    tenant,
    {
      id: randomUUID(),
      created_at: formatTimestamp(created),
      url: `https://example.com/${name}`,
      name,
      webhook_url: null,
      webhook_secret: null,
      webhook_events: [...WEBHOOK_EVENT_TYPES],
      webhook_status: 'enabled',
      webhook_disabled_reason: null,
    },
    created,
  );
  return item;
}

describe('a table made before the campaign list, on the local stack’s start', () => {
  const client = new DynamoDBClient(dynamoClientConfig(endpoint(), undefined, 30_000));
  let old: Table;
  const steps: string[] = [];
  // Three campaigns of one account a second apart (what the old items kept is whole seconds), one
  // of another account, one with a webhook, and a link of the first campaign.
  const day = Date.UTC(2026, 0, 10, 9, 0, 0);
  const acme = [
    oldCampaignItem('acme', 'first', new Date(day)),
    { ...oldCampaignItem('acme', 'second', new Date(day + 1_000)), webhook_url: 'https://h.example/x' },
    oldCampaignItem('acme', 'third', new Date(day + 2_000)),
  ];
  const other = oldCampaignItem('other', 'theirs', new Date(day + 500));
  const link = newLinkItem({
    tenant: 'acme',
    campaignId: acme[0]!.id,
    campaignUrl: acme[0]!.url,
    id: 9_100_000_000 + Math.floor(Math.random() * 1_000_000),
    code: `MIG-${randomUUID().slice(0, 8)}`,
    referrerId: 'r',
    now: new Date(day + 3_000),
  });

  beforeAll(async () => {
    const input = createTableInput(tableName);
    // GSI2 as it was: the links' attributes only.
    const gsi2 = input.GlobalSecondaryIndexes!.find((g) => g.IndexName === GSI2.indexName)!;
    gsi2.Projection = { ProjectionType: 'INCLUDE', NonKeyAttributes: [...LINK_INDEX_ATTRIBUTES] };
    await client.send(new CreateTableCommand(input));
    old = table({ dynamodbEndpoint: endpoint(), tableName });
    for (const Item of [...acme, other, link]) {
      await old.db.send(new PutCommand({ TableName: tableName, Item }));
    }
    const { Table: before } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(staleIndexes(before!)).toEqual(['GSI2']);
    await prepareLocalTable(endpoint(), tableName, (s) => steps.push(s));
  }, 120_000);

  afterAll(async () => {
    await client.send(new DeleteTableCommand({ TableName: tableName }));
    client.destroy();
  });

  const campaignList = async (tenant: string) =>
    (
      await old.db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: CAMPAIGN_LIST_INDEX.indexName,
          KeyConditionExpression: `${CAMPAIGN_LIST_INDEX.partitionKey} = :pk`,
          ExpressionAttributeValues: { ':pk': campaignListPartition(tenant) },
          ScanIndexForward: false,
        }),
      )
    ).Items ?? [];

  it('gives the old campaigns their list keys, then rebuilds GSI2 as the definition says', async () => {
    expect(steps).toEqual([
      'campaign list: 4 of 4 campaigns written before it got their list keys',
      `rebuilding the index GSI2 of ${tableName}: its definition changed`,
    ]);
    const { Table: after } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(staleIndexes(after!)).toEqual([]);
    expect(after!.GlobalSecondaryIndexes?.every((g) => g.IndexStatus === 'ACTIVE')).toBe(true);
  });

  it('lists every old campaign, newest first, whole, and only in its own account', async () => {
    const listed = await campaignList('acme');
    expect(listed.map((i) => i.id)).toEqual([acme[2]!.id, acme[1]!.id, acme[0]!.id]);
    expect(listed.map(campaignFromItem)).toEqual([...acme].reverse().map(campaignFromItem));
    expect((await campaignList('other')).map((i) => i.id)).toEqual([other.id]);
  });

  it('keeps the links in their own GSI2 partitions', async () => {
    const { Items = [] } = await old.db.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: CAMPAIGN_LINKS_INDEX.indexName,
        KeyConditionExpression: `${CAMPAIGN_LINKS_INDEX.partitionKey} = :pk`,
        ExpressionAttributeValues: { ':pk': campaignLinksPartition('acme', acme[0]!.id) },
      }),
    );
    expect(Items.map((i) => i.referral_code)).toEqual([link.referral_code]);
  });

  it('is idempotent: a second start and a second backfill change nothing', async () => {
    const again: string[] = [];
    await prepareLocalTable(endpoint(), tableName, (s) => again.push(s));
    expect(again).toEqual([]);
    expect(await backfillCampaignListKeys(old.db, tableName)).toEqual({ found: 0, updated: 0 });
  });

  it('a start cut short after GSI2 was deleted creates it again, with every campaign in it', async () => {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: GSI2.indexName } }],
      }),
    );
    const again: string[] = [];
    await prepareLocalTable(endpoint(), tableName, (s) => again.push(s));
    expect(again).toContain(`rebuilding the index GSI2 of ${tableName}: its definition changed`);
    expect((await campaignList('acme')).map((i) => i.id)).toEqual([acme[2]!.id, acme[1]!.id, acme[0]!.id]);
  }, 60_000);
});
