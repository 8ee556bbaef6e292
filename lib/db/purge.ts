import { BatchWriteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { campaignExists } from './campaigns.ts';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';

/** `T#<tenant>#C#<campaign>`: what a campaign's stream REMOVE record carries as its PK. */
export function parseCampaignPartition(pk: string): { tenant: string; campaignId: string } | undefined {
  const m = /^T#([A-Za-z0-9_.-]{1,64})#C#([0-9a-f-]{36})$/.exec(pk);
  return m ? { tenant: m[1]!, campaignId: m[2]! } : undefined;
}

type Key = { PK: string; SK: string };

const PAGE = 500;
const BATCH = 25; // BatchWriteItem's maximum
const PARALLEL_BATCHES = 4;

async function deleteKeys(keyList: Key[]): Promise<void> {
  const chunks: Key[][] = [];
  for (let i = 0; i < keyList.length; i += BATCH) chunks.push(keyList.slice(i, i + BATCH));
  for (let i = 0; i < chunks.length; i += PARALLEL_BATCHES) {
    await Promise.all(chunks.slice(i, i + PARALLEL_BATCHES).map(deleteBatch));
  }
}

async function deleteBatch(batch: Key[]): Promise<void> {
  let pending = batch.map((Key) => ({ DeleteRequest: { Key } }));
  for (let attempt = 0; pending.length > 0; attempt++) {
    const { UnprocessedItems } = await db.send(
      new BatchWriteCommand({ RequestItems: { [tableName]: pending } }),
    );
    pending = (UnprocessedItems?.[tableName] as typeof pending | undefined) ?? [];
    if (pending.length > 0) {
      if (attempt >= 8) throw new Error('BatchWriteItem kept items unprocessed');
      await new Promise((r) => setTimeout(r, 25 * 2 ** attempt));
    }
  }
}

/**
 * Remove what a deleted campaign left: its links (found through the campaign's GSI2 list) and
 * its referred users and actions (its own partition). Works in pages until `deadline` (epoch ms)
 * and reports whether it ran out of items. Refuses to touch a campaign that still exists, so a
 * stray or replayed message can do no harm. Deleting is idempotent: a repeated pass is safe.
 */
export async function purgeCampaign(
  tenant: string,
  campaignId: string,
  deadline: number,
): Promise<{ deleted: number; done: boolean }> {
  if (await campaignExists(tenant, campaignId)) return { deleted: 0, done: true };

  let deleted = 0;
  const sources: Array<{ index?: string; pkName: string; pk: string }> = [
    { index: 'GSI2', pkName: 'GSI2PK', pk: keys.campaignLinks(tenant, campaignId) },
    { pkName: 'PK', pk: keys.campaign(tenant, campaignId).PK },
  ];
  for (const source of sources) {
    for (;;) {
      if (Date.now() > deadline) return { deleted, done: false };
      // Always the first page: what was deleted is gone from it, so no cursor needs keeping.
      const { Items = [] } = await db.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: source.index,
          KeyConditionExpression: `${source.pkName} = :pk`,
          ExpressionAttributeValues: { ':pk': source.pk },
          ProjectionExpression: 'PK, SK',
          Limit: PAGE,
        }),
      );
      if (Items.length === 0) break;
      await deleteKeys(Items.map((i) => ({ PK: String(i.PK), SK: String(i.SK) })));
      deleted += Items.length;
    }
  }
  return { deleted, done: true };
}
