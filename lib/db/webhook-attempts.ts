/** The delivery log: reads and writes (items in `entities/webhook-attempt.ts`). */
import { BatchWriteCommand, QueryCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import { campaignExists } from './campaigns.ts';
import {
  ATTEMPT_SORT_KEY,
  type AttemptStatus,
  attemptFromItem,
  attemptLogPartition,
  type DeliveryAttempt,
  newAttemptItems,
} from './entities/webhook-attempt.ts';
import { db, tableName } from './table/client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor, type Page } from './table/cursor.ts';
import { transactWrite } from './table/transactions.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

export type { AttemptStatus, DeliveryAttempt };

/**
 * Log one attempt: one BatchWriteItem of its two items. Items DynamoDB leaves unprocessed are
 * reported as an error: the caller logs it and goes on (a log write never fails a delivery).
 * With `answer` (the webhook test's, for a claimed `Idempotency-Key`), one transaction of the two
 * items and the answer instead, so the answer is stored with the log of what it answers.
 */
export async function recordAttempt(
  tenant: string,
  campaignId: string,
  attempt: DeliveryAttempt,
  answer?: TransactItem,
): Promise<void> {
  const items = newAttemptItems(tenant, campaignId, attempt);
  if (answer) {
    await transactWrite(
      items.map((Item) => ({ Put: { TableName: tableName, Item } })),
      answer,
    );
    return;
  }
  const result = await db.send(
    new BatchWriteCommand({
      RequestItems: { [tableName]: items.map((Item) => ({ PutRequest: { Item } })) },
    }),
  );
  const left = result.UnprocessedItems?.[tableName]?.length ?? 0;
  if (left > 0) throw new Error(`${left} delivery log item(s) left unprocessed`);
}

/** One page of a campaign's attempts, newest first, optionally of one status: one Query beside the campaign check. */
export async function listAttempts(
  tenant: string,
  campaignId: string,
  options: { limit: number; cursor?: string; status?: AttemptStatus },
): Promise<Page<DeliveryAttempt>> {
  const scope = { kind: 'deliveries' as const, tenant, campaignId, filter: options.status };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, ATTEMPT_SORT_KEY) : undefined;
  const pk = attemptLogPartition(tenant, campaignId, options.status);
  const [page, exists] = await Promise.all([
    db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ScanIndexForward: false,
        Limit: options.limit + 1,
        ExclusiveStartKey: after ? { PK: pk, SK: after } : undefined,
      }),
    ),
    campaignExists(tenant, campaignId),
  ]);
  if (!exists) throw campaignNotFound(campaignId);
  const items = page.Items ?? [];
  const shown = items.slice(0, options.limit);
  const last = shown.at(-1);
  const more = items.length > options.limit || page.LastEvaluatedKey !== undefined;
  return {
    items: shown.map(attemptFromItem),
    nextCursor: more && last ? encodeSortKeyCursor(scope, String(last.SK)) : undefined,
  };
}
