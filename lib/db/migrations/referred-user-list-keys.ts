/**
 * Puts referred users written before their list existed (`GET /api/v1/referred_users/{campaign_id}`)
 * into it: every referred user item without list keys gets them (`referredUserListKeys`: GSI2 for
 * the campaign's list, GSI1 for its link's, GSI3 for its referrer's) and `referral_code`, the name
 * under which the indexes project its link's code. The creation time comes from `created_at`
 * (whole seconds: all such an item kept), the referrer from its link, read by key (a link's
 * referrer never changes). A referred user whose link is gone (its campaign was deleted; the purge
 * removes it too) is left as it is.
 *
 * Idempotent: an item that has its keys is not touched, so a second run, or a run cut short and
 * started again, changes nothing more. A Scan of the whole table, as the other migrations: an
 * operator's one-off (`npm run table:migrate`) and the local stack's start until its marker is
 * written. It takes the client and table it is given and reads no configuration.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { parseTimestamp } from '../../domain/time.ts';
import { GSI2 } from '../../table-definition.ts';
import { decoder } from '../entities/decode.ts';
import { isLinkItem, linkKey } from '../entities/link.ts';
import { referredUserListKeys } from '../entities/referred-user.ts';
import { countInParallel, markMigrated, migrated, scanPages } from './table-migration.ts';

const field = decoder('referred user');

export const REFERRED_USER_LIST_MARKER = { PK: 'MIGRATION#referred-user-list', SK: 'DONE' } as const;

export interface ReferredUserListResult {
  /** Referred user items found without list keys. */
  found: number;
  /** Of those, given their keys now (the others' links or items were gone, or keys given meanwhile). */
  updated: number;
}

export async function backfillReferredUserListKeys(
  db: DynamoDBDocumentClient,
  tableName: string,
): Promise<ReferredUserListResult> {
  const result: ReferredUserListResult = { found: 0, updated: 0 };
  for await (const items of scanPages(db, tableName, {
    FilterExpression: '#type = :type AND attribute_not_exists(#listPk)',
    ProjectionExpression: 'PK, SK, tenant, campaign_id, id, created_at, link_code, link_id',
    ExpressionAttributeNames: { '#type': 'type', '#listPk': GSI2.partitionKey },
    ExpressionAttributeValues: { ':type': 'referred_user' },
  })) {
    result.found += items.length;
    result.updated += await countInParallel(items, (item) => addKeys(db, tableName, item));
  }
  await markMigrated(db, tableName, REFERRED_USER_LIST_MARKER);
  return result;
}

export const referredUserListMigrated = (db: DynamoDBDocumentClient, tableName: string) =>
  migrated(db, tableName, REFERRED_USER_LIST_MARKER);

async function addKeys(db: DynamoDBDocumentClient, tableName: string, item: Record<string, unknown>) {
  const code = field.string(item, 'link_code');
  const { Item: link } = await db.send(new GetCommand({ TableName: tableName, Key: linkKey(code) }));
  if (!isLinkItem(link) || link.id !== field.number(item, 'link_id')) return false;
  const created =
    parseTimestamp(field.string(item, 'created_at')) ??
    field.fail(item, 'created_at', 'a contract timestamp');
  const keys = referredUserListKeys(field.string(item, 'tenant'), field.string(item, 'campaign_id'), {
    id: field.number(item, 'id'),
    createdMs: created.getTime(),
    linkId: field.number(item, 'link_id'),
    referrerId: typeof link.referrer_id === 'string' ? link.referrer_id : null,
  });
  const values = { ...keys, referral_code: code };
  const names = Object.keys(values);
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { PK: field.string(item, 'PK'), SK: field.string(item, 'SK') },
        UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(PK) AND attribute_not_exists(#a0)',
        ExpressionAttributeNames: Object.fromEntries(names.map((name, i) => [`#a${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(
          names.map((name, i) => [`:v${i}`, values[name as keyof typeof values]]),
        ),
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
