/**
 * Puts campaigns written before the campaign list existed into it: every campaign item without
 * GSI2 keys gets its `campaignListKeys`, its creation time taken from `created_at` (whole seconds:
 * that is all such an item kept). Idempotent: a campaign that has its keys is not touched, so a
 * second run, or a run cut short and started again, changes nothing more.
 *
 * A campaign item lives in a partition of its own, so nothing but a Scan finds them all: this is
 * an operator's one-off over the whole table (`npm run campaigns:backfill` for a deployed stage,
 * with the operator's credentials; no function is granted `Scan`), and the local stack's start when
 * its table predates the list (`lib/local/dynamodb.ts`). It takes the client and table it is given
 * and reads no configuration.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseTimestamp } from '../../domain/time.ts';
import { CAMPAIGN_LIST_INDEX, CAMPAIGN_SK, campaignListKeys } from '../entities/campaign.ts';
import { decoder } from '../entities/decode.ts';
import { countInParallel, scanPages } from './table-migration.ts';

const field = decoder('campaign');

export interface BackfillResult {
  /** Campaign items found without list keys. */
  found: number;
  /** Of those, given their keys now (the others were deleted or given keys meanwhile). */
  updated: number;
}

export async function backfillCampaignListKeys(
  db: DynamoDBDocumentClient,
  tableName: string,
): Promise<BackfillResult> {
  const result: BackfillResult = { found: 0, updated: 0 };
  for await (const items of scanPages(db, tableName, {
    FilterExpression: 'SK = :sk AND #type = :campaign AND attribute_not_exists(#gsiPk)',
    ProjectionExpression: 'PK, SK, tenant, id, created_at',
    ExpressionAttributeNames: { '#type': 'type', '#gsiPk': CAMPAIGN_LIST_INDEX.partitionKey },
    ExpressionAttributeValues: { ':sk': CAMPAIGN_SK, ':campaign': 'campaign' },
  })) {
    result.found += items.length;
    result.updated += await countInParallel(items, (item) => addKeys(db, tableName, item));
  }
  return result;
}

/** One campaign's keys; false when it is gone or already has them (never recreates a deleted one). */
async function addKeys(db: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>) {
  const createdAt = field.string(item, 'created_at');
  const created = parseTimestamp(createdAt) ?? field.fail(item, 'created_at', 'a contract timestamp');
  const keys = campaignListKeys(field.string(item, 'tenant'), field.string(item, 'id'), created.getTime());
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { PK: field.string(item, 'PK'), SK: CAMPAIGN_SK },
        UpdateExpression: 'SET #pk = :pk, #sk = :sk',
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#pk)',
        ExpressionAttributeNames: {
          '#pk': CAMPAIGN_LIST_INDEX.partitionKey,
          '#sk': CAMPAIGN_LIST_INDEX.sortKey,
        },
        ExpressionAttributeValues: { ':pk': keys.GSI2PK, ':sk': keys.GSI2SK },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
