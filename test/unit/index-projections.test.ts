import { describe, expect, it } from 'vitest';
import { tableDefinition } from '../../lib/table-definition.ts';

/**
 * The attributes each index projects, as deployed. DynamoDB cannot change an index's projection in
 * place, and CloudFormation cannot delete and re-create an index of the same name in one update:
 * a deploy that changes one fails on every existing stage. An attribute added to an item kind
 * after its index was deployed is read from the items (`CAMPAIGN_ITEM_ATTRIBUTES`), or goes in a
 * new index with its own migration (see docs/data-model.md).
 */
const DEPLOYED = {
  GSI1: [
    'tenant',
    'id',
    'created_at',
    'referral_code',
    'campaign_id',
    'campaign_url',
    'referrer_id',
    'key_hash',
    'revoked_at',
  ],
  GSI2: [
    'tenant',
    'id',
    'created_at',
    'referral_code',
    'campaign_id',
    'campaign_url',
    'referrer_id',
    'url',
    'name',
    'webhook_url',
    'webhook_secret',
    'webhook_events',
    'webhook_status',
    'webhook_disabled_reason',
  ],
  GSI3: ['tenant', 'id', 'created_at', 'referral_code', 'campaign_id', 'campaign_url', 'referrer_id'],
};

describe('index projections', () => {
  it('are the ones deployed: a projection cannot change in place', () => {
    const actual = Object.fromEntries(
      tableDefinition.globalSecondaryIndexes.map((g) => [g.indexName, [...g.projectedAttributes]]),
    );
    expect(actual).toEqual(DEPLOYED);
  });
});
