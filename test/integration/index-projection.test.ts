/**
 * The indexes of the local table hold only the keys and the projected attributes of a link, as
 * the CDK table does (one definition, `lib/table-definition.ts`): an attribute that is not
 * projected (such as `last_action`, an action stored on the link for a moment) stays out of every
 * index copy, and every list and fetch still answers the whole link object. The same for a
 * campaign's copy in GSI2 (the campaign list): the delivery state its item also holds stays out,
 * and the list answers the whole campaign object.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { CAMPAIGN_LIST_INDEX } from '../../lib/db/entities/campaign.ts';
import { type TableIndex, tableDefinition } from '../../lib/table-definition.ts';
import { type ApiResponse, api, TENANT_A } from '../support/api.ts';
import {
  type CampaignBody,
  createCampaign,
  createLink,
  createReferredUser,
  fetchLink,
  type LinkBody,
} from '../support/records.ts';
import { campaignItem, linkItem, table } from '../support/table.ts';

/** Names an index copy may hold: the table's keys, the index's keys and its projected attributes. */
const allowedIn = (index: TableIndex) =>
  new Set<string>([
    tableDefinition.partitionKey,
    tableDefinition.sortKey,
    index.partitionKey,
    index.sortKey,
    ...index.projectedAttributes,
  ]);

/**
 * The copy of `item` in `index`, found by the item's own index keys: exactly one, holding nothing
 * but the keys and the projected attributes, each equal to the item's.
 */
async function indexCopyOf(
  index: TableIndex,
  item: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { Items = [] } = await table().db.send(
    new QueryCommand({
      TableName: table().name,
      IndexName: index.indexName,
      KeyConditionExpression: '#pk = :pk AND #sk = :sk',
      ExpressionAttributeNames: { '#pk': index.partitionKey, '#sk': index.sortKey },
      ExpressionAttributeValues: { ':pk': item[index.partitionKey], ':sk': item[index.sortKey] },
    }),
  );
  expect(Items).toHaveLength(1);
  const copy = Items[0]!;
  const allowed = allowedIn(index);
  expect(Object.keys(copy).filter((k) => !allowed.has(k))).toEqual([]);
  for (const attribute of index.projectedAttributes) {
    if (attribute in item) expect(copy[attribute], attribute).toEqual(item[attribute]);
  }
  return copy;
}

describe('index copies of a link', () => {
  let link: LinkBody;
  let stored: Record<string, unknown>;

  beforeAll(async () => {
    const campaign = await createCampaign({ name: 'projection' });
    link = await createLink(campaign.id, { referrer_id: 'projected' });
    await createReferredUser(link.referral_code, 'projection-user');
    const action = await api('POST', '/api/v1/action/referred_user', {
      body: {
        campaign_id: campaign.id,
        referred_user_id: 'projection-user',
        action_type: 'purchase',
        metadata: { note: 'x'.repeat(4000) },
      },
    });
    expect(action.status).toBe(201);
    // `last_action` leaves the link as soon as the stream consumer has written the action item, so
    // the probe is another attribute no index projects, as large as that action was.
    await table().db.send(
      new UpdateCommand({
        TableName: table().name,
        Key: { PK: `LINK#${link.referral_code}`, SK: 'LINK' },
        UpdateExpression: 'SET unprojected_probe = :big',
        ExpressionAttributeValues: { ':big': 'x'.repeat(4000) },
      }),
    );
    stored = (await linkItem(link.referral_code))!;
  });

  it.each(tableDefinition.globalSecondaryIndexes.map((g) => [g.indexName, g] as const))(
    '%s holds the keys and its projected attributes only',
    async (_name, index) => {
      expect(stored).toHaveProperty('unprojected_probe');
      await indexCopyOf(index, stored);
    },
  );

  it('the API still answers the whole link from every index and by code', async () => {
    const expected = { ...link, total_clicks: 1, total_referrals: 1 };
    expect(await fetchLink(link.id)).toEqual(expected);
    const byCode = await api('GET', `/api/v1/referral_link?referral_code=${link.referral_code}`);
    expect(byCode.body).toEqual(expected);
    const list = await api('GET', `/api/v1/campaign_referral_links/${link.campaign_id}`);
    expect(list.body).toEqual([expected]);
    const referrer = await api('GET', `/api/v1/referral_link/${link.campaign_id}/projected`);
    expect(referrer.body).toEqual([expected]);
  });
});

describe('the index copy of a campaign (GSI2, the campaign list)', () => {
  let campaign: CampaignBody;
  let stored: Record<string, unknown>;

  beforeAll(async () => {
    const created = await createCampaign({ name: 'projection campaign' });
    const patched = await api('PATCH', `/api/v1/campaign?id=${created.id}`, {
      body: { webhook_url: 'http://127.0.0.1:9/projection', webhook_events: ['action.created'] },
    });
    expect(patched.status).toBe(200);
    campaign = patched.body;
    // What a delivery writes on the campaign item (the slow-lane flag), and a large probe: neither
    // is projected.
    await table().db.send(
      new UpdateCommand({
        TableName: table().name,
        Key: { PK: `T#${TENANT_A.tenant}#C#${campaign.id}`, SK: 'CAMPAIGN' },
        UpdateExpression: 'SET webhook_slow_lane_url = :url, unprojected_probe = :big',
        ExpressionAttributeValues: { ':url': 'http://127.0.0.1:9/projection', ':big': 'x'.repeat(4000) },
      }),
    );
    stored = (await campaignItem(TENANT_A.tenant, campaign.id))!;
  });

  it('holds the keys and the projected attributes only, equal to the item', async () => {
    expect(stored).toHaveProperty('webhook_slow_lane_url');
    const copy = await indexCopyOf(CAMPAIGN_LIST_INDEX, stored);
    expect(copy).not.toHaveProperty('webhook_slow_lane_url');
  });

  it('the list answers the whole campaign, as GET /api/v1/campaign does', async () => {
    const one = await api('GET', `/api/v1/campaign?id=${campaign.id}`);
    expect(one.body).toEqual(campaign);
    // Other files create tenant A's campaigns all along: find this one in the first pages.
    let path: string | undefined = '/api/v1/campaigns?limit=1000';
    let found: unknown;
    for (let i = 0; path && !found && i < 20; i++) {
      const page: ApiResponse<CampaignBody[]> = await api<CampaignBody[]>('GET', path);
      expect(page.status).toBe(200);
      found = page.body.find((c: CampaignBody) => c.id === campaign.id);
      path = /^<([^>]+)>/.exec(page.headers.get('link') ?? '')?.[1];
    }
    expect(found).toEqual(campaign);
  });
});
