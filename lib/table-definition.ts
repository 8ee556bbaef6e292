/**
 * The single table's shape, shared by the CDK stack and the local stack so that both create the
 * same keys, indexes, stream and TTL attribute. Plain data: no CDK or SDK imports here.
 *
 * Item layout (key builders live in `lib/db/keys.ts`):
 * - api key        PK `APIKEY#<sha256>`            SK `APIKEY`      GSI1 `APIKEYS` / `<tenant>#<created>`
 * - campaign       PK `T#<tenant>#C#<id>`          SK `CAMPAIGN`
 * - id block       PK `SEQ#<kind>`                 SK `SEQ`
 */
export const tableDefinition = {
  partitionKey: 'PK',
  sortKey: 'SK',
  /** Items with this epoch-seconds attribute are removed by DynamoDB TTL. */
  ttlAttribute: 'expires_at',
  /** Stream view type: the webhook pipeline needs the new image of inserted items. */
  streamViewType: 'NEW_IMAGE',
  globalSecondaryIndexes: [
    { indexName: 'GSI1', partitionKey: 'GSI1PK', sortKey: 'GSI1SK' },
    { indexName: 'GSI2', partitionKey: 'GSI2PK', sortKey: 'GSI2SK' },
    { indexName: 'GSI3', partitionKey: 'GSI3PK', sortKey: 'GSI3SK' },
  ],
} as const;

export type IndexName = (typeof tableDefinition.globalSecondaryIndexes)[number]['indexName'];
