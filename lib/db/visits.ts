/**
 * Visits (`GET /r/{code}`), written as items only: the request never writes its link, so a link
 * that gets thousands of visits a second is not one hot item. The rollup consumer of the table
 * stream adds each visit to the link's `total_clicks` and to the analytics, in batches, exactly
 * once (`lib/analytics/rollups.ts`); a visit shows there within a second or two.
 *
 * Two round trips: the link read beside the visitor marker's update (which answers "unique"), then
 * the visit's Put beside the campaign's existence check. A visit of a campaign deleted meanwhile
 * is taken back (its item deleted) and answered 404; should that delete not happen (a crash), the
 * consumer still counts nothing for a campaign that is gone.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newAction } from './actions.ts';
import { putForLiveCampaign } from './campaigns.ts';
import { db, tableName } from './client.ts';
import type { LinkItem } from './entities/link.ts';
import {
  newBotVisitItem,
  newVisitItem,
  newVisitorKeyItem,
  UNIQUE_WINDOW_MS,
  VISITOR_MARKER_TTL_SECONDS,
  visitorHash,
  visitorKeyKey,
  visitorMarkerKey,
} from './entities/visit.ts';

/** The day's visitor key, per process: read (or created) once a day, by the day's first visit. */
const dayKeys = new Map<string, Promise<string>>();

function visitorKeyOf(day: string): Promise<string> {
  let key = dayKeys.get(day);
  if (!key) {
    key = loadVisitorKey(day);
    dayKeys.clear();
    dayKeys.set(day, key);
    key.catch(() => dayKeys.delete(day));
  }
  return key;
}

async function loadVisitorKey(day: string): Promise<string> {
  const read = async () => {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: visitorKeyKey(day), ConsistentRead: true }),
    );
    return typeof Item?.key === 'string' ? Item.key : undefined;
  };
  const found = await read();
  if (found) return found;
  const fresh = newVisitorKeyItem(day);
  try {
    await db.send(
      new PutCommand({ TableName: tableName, Item: fresh, ConditionExpression: 'attribute_not_exists(PK)' }),
    );
    return fresh.key;
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const other = await read(); // another container created it first
    if (!other) throw new Error(`visitor key of ${day} vanished`);
    return other;
  }
}

/**
 * Note this visitor's visit of `code` and tell whether it is unique (none in the previous hour).
 * One UpdateItem that returns the previous visit time; IP and user agent never leave this process.
 */
export async function markVisitor(code: string, ip: string, userAgent: string, now: Date): Promise<boolean> {
  const visitor = visitorHash(await visitorKeyOf(now.toISOString().slice(0, 10)), ip, userAgent);
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: visitorMarkerKey(code, visitor),
      UpdateExpression: 'SET seen = :now, expires_at = :exp',
      ExpressionAttributeValues: {
        ':now': now.getTime(),
        ':exp': Math.floor(now.getTime() / 1000) + VISITOR_MARKER_TTL_SECONDS,
      },
      ReturnValues: 'UPDATED_OLD',
    }),
  );
  const seen = Attributes?.seen;
  return typeof seen !== 'number' || now.getTime() - seen >= UNIQUE_WINDOW_MS;
}

/** A human visit of `link`: its action item (and event). False when the campaign is gone. */
export async function recordVisit(
  link: LinkItem,
  metadata: Record<string, string>,
  unique: boolean,
): Promise<boolean> {
  const action = await newAction('visit', metadata, null);
  // The event's link shows the counter as read plus this visit, like every write's response.
  const { item } = newVisitItem({ ...link, total_clicks: link.total_clicks + 1 }, action, unique);
  return (await putForLiveCampaign(link.tenant, link.campaign_id, item)) !== 'campaign_gone';
}

/** A bot's visit (or a HEAD): counted apart, no action and no event. False when the campaign is gone. */
export async function recordBotVisit(link: LinkItem, now: Date): Promise<boolean> {
  const item = newBotVisitItem(link, now);
  return (await putForLiveCampaign(link.tenant, link.campaign_id, item)) !== 'campaign_gone';
}
