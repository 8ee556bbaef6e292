/**
 * A table whose rankings were kept as an item per entity and metric (`TOP#...`, sorted by GSI4),
 * as before the counting consumer kept boards: the migration (`npm run table:migrate`, and the
 * local stack's start, `prepareLocalTable`) adds each old count to where the consumer now keeps it
 * exactly once, also beside counts the consumer already raised from zero, offers it to its
 * campaign's board, and deletes the old entry. Run on a table of its own (`support/own-table.ts`).
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { boardEntriesOf, boardKey, referrerTotalsKey } from '../../lib/db/entities/analytics.ts';
import { campaignPartition } from '../../lib/db/entities/campaign.ts';
import { linkKey } from '../../lib/db/entities/link.ts';
import {
  migrateRankings,
  rankingsMigrated,
  topAttributes,
  topKey,
} from '../../lib/db/migrations/rankings-migration.ts';
import { preparedTableOfItsOwn } from '../support/own-table.ts';

const tenant = 'acme';
const campaignId = '7c0e9a1e-4a43-4c52-9e58-111111111111';
const link = (id: number, code: string, counts: Record<string, number> = {}) => ({
  ...linkKey(code),
  type: 'link',
  tenant,
  id,
  referral_code: code,
  campaign_id: campaignId,
  total_clicks: 0,
  total_referrals: 0,
  ...counts,
});
const oldEntry = (
  entity: Parameters<typeof topKey>[2],
  metric: Parameters<typeof topKey>[3],
  value: number,
  reach: number,
) => ({
  ...topKey(tenant, campaignId, entity, metric),
  ...topAttributes(tenant, campaignId, entity, metric, value, reach),
});
const linkEntity = (id: number, code: string) => ({
  by: 'referral_link' as const,
  linkId: id,
  code,
  url: `https://x.example/?rfa=${code}`,
});

describe('rankings kept as an item per entity, moved to the entities and their boards', () => {
  const own = preparedTableOfItsOwn('rankings-migration', [
    {
      PK: campaignPartition(tenant, campaignId),
      SK: 'CAMPAIGN',
      type: 'campaign',
      url: 'https://x.example/',
    },
    // The consumer already raised ALPHA's visits twice since the new version was deployed.
    link(1, 'ALPHA234', { an_v: 2, an_vt: 5_000 }),
    link(2, 'BETA2345', { total_referrals: 4 }),
    oldEntry(linkEntity(1, 'ALPHA234'), 'visits', 10, 1_000),
    oldEntry(linkEntity(2, 'BETA2345'), 'visits', 12, 900),
    oldEntry(linkEntity(2, 'BETA2345'), 'referred_users', 4, 800),
    oldEntry({ by: 'referrer', referrerId: 'alice' }, 'visits', 22, 1_100),
    oldEntry({ by: 'referrer', referrerId: 'alice' }, 'actions', 3, 700),
    // A link whose code was purged and re-issued since: its old entry is dropped.
    link(9, 'GAMMA234'),
    oldEntry(linkEntity(8, 'GAMMA234'), 'visits', 5, 600),
  ]);

  const get = async (key: { PK: string; SK: string }) =>
    (await own.t.db.send(new GetCommand({ TableName: own.name, Key: key, ConsistentRead: true }))).Item;

  it('adds each old count once to where the consumer keeps it, and the boards rank them', async () => {
    expect(own.steps).toContain('analytics rankings: 6 entries moved to their boards');
    expect(await rankingsMigrated(own.t.db, own.name)).toBe(true);
    expect(await get(linkKey('ALPHA234'))).toMatchObject({ an_v: 12, an_vt: 5_000 });
    expect(await get(linkKey('BETA2345'))).toMatchObject({ an_v: 12, total_referrals: 4, an_rt: 800 });
    expect(await get(linkKey('GAMMA234'))).not.toHaveProperty('an_v');
    expect(await get(referrerTotalsKey(tenant, campaignId, 'alice'))).toMatchObject({ v: 22, a: 3 });
    const visits = boardEntriesOf(await get(boardKey(tenant, campaignId, 'referral_link', 'visits')));
    // Ties broken by earliest reach: BETA reached 12 first.
    expect(visits.map((e) => [e.label, e.value])).toEqual([
      ['BETA2345', 12],
      ['ALPHA234', 12],
    ]);
    const referrers = boardEntriesOf(await get(boardKey(tenant, campaignId, 'referrer', 'actions')));
    expect(referrers.map((e) => [e.label, e.value])).toEqual([['alice', 3]]);
    const left = await own.t.db.send(
      new QueryCommand({
        TableName: own.name,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :top)',
        ExpressionAttributeValues: { ':pk': campaignPartition(tenant, campaignId), ':top': 'TOP#' },
      }),
    );
    expect(left.Items).toEqual([]);
  });

  it('run again, or twice at once, it adds nothing twice', async () => {
    expect(
      await Promise.all([migrateRankings(own.t.db, own.name), migrateRankings(own.t.db, own.name)]),
    ).toEqual([0, 0]);
    expect(await get(linkKey('ALPHA234'))).toMatchObject({ an_v: 12 });
    expect(await get(referrerTotalsKey(tenant, campaignId, 'alice'))).toMatchObject({ v: 22, a: 3 });
  });
});
