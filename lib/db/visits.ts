/**
 * Visits (`GET /r/{code}`), written as items only: the request never writes its link, so a link
 * that gets thousands of visits a second is not one hot item. The rollup consumer of the table
 * stream adds each visit to the link's `total_clicks` and to the analytics, in batches, exactly
 * once (`lib/analytics/fast.ts`); a visit shows there within a second or two.
 *
 * Two round trips for a first visit: the link read beside the visitor marker's update (which
 * returns the visitor's earlier visits of the code), then the visit's Put beside the campaign's
 * existence check. A visit of a campaign deleted meanwhile is taken back (its item deleted) and
 * answered 404; should that delete not happen (a crash), the consumer still counts nothing for a
 * campaign that is gone. A repeat visit within the hour reads one more item: the earlier visit's
 * (see `isUniqueVisit`).
 *
 * Unique without a transaction (which would bill both writes twice): the marker and the visit item
 * are two writes, and a request can die between them. So the marker names its visits by id, and a
 * visit counts as "seen before" only once its item is found written; one still missing after it
 * could have been written is made lost for good (a conditional Put at its key), so the answer is
 * exact whatever the timing, and only costs anything after such a crash.
 */

import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { DeadlineExceededError, remainingMs } from '../aws/deadline.ts';
import { config } from '../config.ts';
import { parseTimestamp } from '../domain/time.ts';
import { campaignClickSettings, putBesideCampaign } from './campaigns.ts';
import type { ClickSettings } from './entities/campaign.ts';
import type { LinkAction, LinkItem } from './entities/link.ts';
import {
  LOST_VISIT_TYPE,
  type MarkedVisit,
  type MarkerBefore,
  markerBeforeOf,
  newBotVisitItem,
  newLostVisitItem,
  newVisitItem,
  newVisitorKeyItem,
  UNIQUE_WINDOW_MS,
  visitKey,
  visitorHash,
  visitorKeyKey,
  visitorMarkerKey,
  visitorMarkerUpdate,
} from './entities/visit.ts';
import { db, tableName } from './table/client.ts';

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

/** The day's visitor: an HMAC of IP address and user agent under the day's key, in this process only. */
async function visitorOf(ip: string, userAgent: string, now: Date): Promise<string> {
  return visitorHash(await visitorKeyOf(now.toISOString().slice(0, 10)), ip, userAgent);
}

let markersWritten = 0;

/**
 * Note this visitor's visit of `code` and return what the marker held before: the visitor's
 * earlier visits of the code (any link that had it). One UpdateItem; IP and user agent never leave
 * this process. Written beside the link read: a marker of an unknown code is harmless.
 */
export async function markVisitor(
  code: string,
  ip: string,
  userAgent: string,
  visit: MarkedVisit,
  now: Date,
): Promise<MarkerBefore & { visitor: string }> {
  const visitor = await visitorOf(ip, userAgent, now);
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: visitorMarkerKey(code, visitor),
      ...visitorMarkerUpdate(visit, now),
      ReturnValues: 'ALL_OLD',
    }),
  );
  const killAt = config.faultKillAfterVisitorMarker;
  if (killAt !== undefined && ++markersWritten === killAt) process.kill(process.pid, 'SIGKILL');
  return { ...markerBeforeOf(Attributes), visitor };
}

/**
 * How long after its marker a visit may still be written: its request's whole budget for
 * dependency calls (`REQUEST_BUDGET_MS`, 5 s, of `lib/http/handler.ts`; its Put never starts after
 * it, `lib/aws/clients.ts`) and a second for a write on its way and for the clocks of two
 * containers. Only how long a later visit waits before it makes a missing one lost: the answer is
 * exact either way.
 */
export const VISIT_WRITABLE_MS = 6_000;
/** Of its own deadline, what a waiting visit keeps for its lost-visit Puts and its own Put. */
const OWN_WRITES_RESERVE_MS = 1_500;
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 200;

type VisitState = 'written' | 'lost' | 'missing';

/**
 * A visit's item as a later visit of the same link finds it. Read at the key the visit would have
 * in this link's campaign: a visit of an older link of the code (issued again after its campaign's
 * purge) is never there, as a code's links are all in different campaigns; its code is checked
 * all the same.
 */
function stateOf(link: LinkItem, item: Record<string, unknown> | undefined): VisitState {
  if (!item) return 'missing';
  return item.type === LOST_VISIT_TYPE || item.link_code !== link.referral_code ? 'lost' : 'written';
}

const VISIT_STATE_READ = {
  ProjectionExpression: '#type, link_code',
  ExpressionAttributeNames: { '#type': 'type' },
};

async function readVisit(link: LinkItem, visit: MarkedVisit): Promise<VisitState> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: visitKey(link.tenant, link.campaign_id, visit.vid),
      ConsistentRead: true,
      ...VISIT_STATE_READ,
    }),
  );
  return stateOf(link, Item);
}

/** Make a missing visit lost for good, unless it was written meanwhile: then it is 'written'. */
async function markLost(link: LinkItem, visit: MarkedVisit): Promise<VisitState> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: newLostVisitItem(link.tenant, link.campaign_id, visit.vid, new Date()),
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return 'lost';
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    // Written meanwhile, or made lost by another visit: what is at the key decides.
    return stateOf(link, err.Item && unmarshall(err.Item));
  }
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The marker is keyed by code, since it is written beside the link's read, before the link is
 * known; a code issued again after its campaign's purge is another link under the same key. What
 * is unique per link life is its creation: a visit marked before the link's creation second is a
 * visit of an earlier link of the code (or a 404 of a code then unissued), never of this one, so
 * it is left out without a read. Markers written before this rule hold times too: they need
 * nothing.
 */
function visitsOfLinkSince(link: LinkItem): number {
  return parseTimestamp(link.created_at)?.getTime() ?? 0;
}

/**
 * Whether `own`, a visit of `link`, is unique: no written visit of the same visitor and link in
 * the previous hour. The marker's earlier visits of the code since the link was created are
 * candidates; each counts only once its item is found.
 *
 * The newest is read first (one GetItem: most repeat visits end there). One still missing was
 * either lost (its request died after the marker) or is on its way (a double click): it is read
 * again, with growing pauses, while it could still be written and this request has time; then it
 * is made lost (a conditional Put at its key, which its own conditional Put can no longer pass),
 * unless that Put finds it written after all. A visit so made lost answers 503 (`putVisit`).
 */
export async function isUniqueVisit(
  link: LinkItem,
  before: MarkerBefore,
  own: MarkedVisit,
): Promise<boolean> {
  const since = visitsOfLinkSince(link);
  if ('legacySeen' in before) {
    return before.legacySeen < since || own.at - before.legacySeen >= UNIQUE_WINDOW_MS;
  }
  // Its own id too: a marker update retried after a lost answer returns the visit's own first write.
  let pending = before.visits.filter(
    (v) => v.vid !== own.vid && v.at >= since && own.at - v.at < UNIQUE_WINDOW_MS,
  );
  const read = new Set<MarkedVisit>();
  let pauseMs = FIRST_POLL_MS;
  for (;;) {
    if (pending.length === 0) return true;
    if (pending.every((v) => read.has(v))) {
      // Each one still missing has been read: wait for it, while it may still come.
      const now = Date.now();
      const mayStillBeWritten = pending.some((v) => now - v.at < VISIT_WRITABLE_MS);
      const left = remainingMs() ?? Number.POSITIVE_INFINITY;
      if (!mayStillBeWritten || left - pauseMs < OWN_WRITES_RESERVE_MS) break;
      await pause(pauseMs);
      pauseMs = Math.min(2 * pauseMs, MAX_POLL_MS);
    }
    // The newest alone at first; after that every one still missing, side by side.
    const batch = read.size === 0 ? pending.slice(0, 1) : pending;
    const states = await Promise.all(batch.map((v) => readVisit(link, v)));
    if (states.includes('written')) return false;
    for (const v of batch) read.add(v);
    pending = pending.filter((v) => states[batch.indexOf(v)] !== 'lost');
  }
  const states = await Promise.all(pending.map((v) => markLost(link, v)));
  return !states.includes('written');
}

/**
 * Put a visit's item. Conditional like every new item: should a later visit of the same visitor
 * have found this one missing and made it lost (this request was slower than any visit may be),
 * the Put fails on that lost item and the visit is not recorded: 503, as for a dependency that did
 * not answer in time. A Put retried after a lost answer finds its own item: written.
 */
async function putVisit(item: { PK: string; SK: string }): Promise<void> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_not_exists(PK)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    if (err.Item?.type?.S === LOST_VISIT_TYPE) throw new DeadlineExceededError();
  }
}

/**
 * A human visit of `link`: its action item (and event), a click with `clickSecret`. Answers its
 * campaign's click settings, or undefined when the campaign is gone. `known`: the campaign was
 * seen a moment ago (a hot link, `hot-links.ts`) with these settings, so it is not read again.
 */
export async function recordVisit(
  link: LinkItem,
  action: LinkAction,
  unique: boolean,
  known?: ClickSettings,
  clickSecret?: string,
  visitor?: string,
): Promise<ClickSettings | undefined> {
  // The event's link shows the counter as read plus this visit, like every write's response.
  const { item } = newVisitItem(
    { ...link, total_clicks: link.total_clicks + 1 },
    action,
    unique,
    clickSecret,
    visitor,
  );
  if (known) {
    await putVisit(item);
    return known;
  }
  const [campaign] = await Promise.all([
    campaignClickSettings(link.tenant, link.campaign_id),
    putVisit(item),
  ]);
  if (campaign) return campaign;
  await db.send(new DeleteCommand({ TableName: tableName, Key: { PK: item.PK, SK: item.SK } }));
  return undefined;
}

/**
 * A bot's visit (or a HEAD): counted apart, no action and no event. Answers its campaign's click
 * settings (for the hot-link cache), or undefined when the campaign is gone.
 */
export async function recordBotVisit(
  link: LinkItem,
  now: Date,
  known?: ClickSettings,
): Promise<ClickSettings | undefined> {
  const item = newBotVisitItem(link, now);
  if (known) {
    await db.send(new PutCommand({ TableName: tableName, Item: item }));
    return known;
  }
  return (await putBesideCampaign(link.tenant, link.campaign_id, item)).campaign;
}
