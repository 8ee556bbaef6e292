/**
 * Visits through `/r/{code}`: the items a visit writes, spread so that one hot link does not land
 * on one item or one partition.
 *
 *   visit            PK `T#<tenant>#C#<campaign>#V<n>`  SK `A#<id, 16 digits>`   TTL 366 days (n = id mod 16)
 *   lost visit       the key of a visit that was never written                   TTL 2 hours
 *   bot visit        PK `T#<tenant>#C#<campaign>#V<n>`  SK `B#<ms>#<random>`       TTL 30 days
 *   visitor marker   PK `VISITOR#<code>#<visitor>`      SK `V`                     TTL 2 hours
 *   visitor key      PK `VISITKEY#<YYYY-MM-DD>`         SK `KEY`                   TTL 2 days
 *
 * A visit is an action item (the same attributes, `action.created` event included) in one of its
 * campaign's 16 visit partitions, plus `visit: { unique }` for the rollup consumer
 * (`lib/analytics/`), which adds it to the link's `total_clicks` and the rollups, and
 * `click_secret`: the visit is the click a click id (`rfclid`) names. A bot
 * visit (a bot's GET, or any HEAD) is no action and no event: a small item only counted, apart.
 *
 * The visitor is an HMAC of IP address and user agent under a key that changes every UTC day and
 * is deleted after two: no IP address and no unkeyed hash is ever stored; once its key is gone a
 * visitor hash can no longer be linked to anyone. The marker holds the visitor's last visits of a
 * code (time and visit id), which decide "unique" (no visit of that link in the previous hour):
 * only a visit whose item was written counts (`lib/db/visits.ts`). A lost visit item (no event, no
 * `type` any stream reader counts) takes the key of a visit found missing, so that visit can never
 * be written any more.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { actionKey, newActionItem } from './action.ts';
import { campaignPartition } from './campaign.ts';
import type { LinkAction, LinkItem } from './link.ts';

/** The attribute that marks a visit item (`{ unique }`), and the type of a bot visit item. */
export const VISIT_MARK = 'visit';
export const BOT_VISIT_TYPE = 'bot_visit';

export const VISIT_PARTITIONS = 16;
export const visitPartition = (tenant: string, campaignId: string, n: number) =>
  `${campaignPartition(tenant, campaignId)}#V${n}`;
export const visitPartitions = (tenant: string, campaignId: string) =>
  Array.from({ length: VISIT_PARTITIONS }, (_, n) => visitPartition(tenant, campaignId, n));

/** A visit's key: its action's sort key, in the visit partition its id picks. */
export function visitKey(tenant: string, campaignId: string, id: number) {
  return {
    ...actionKey(tenant, campaignId, id),
    PK: visitPartition(tenant, campaignId, id % VISIT_PARTITIONS),
  };
}

/**
 * The attribute of a human visit that makes it a click: the secret its click id carries
 * (`lib/domain/click-ids.ts`). Every human visit has one, whatever its campaign's `click_ids`:
 * the visit is written beside its campaign's read, before the setting is known (22 characters,
 * within the item's write unit as a rule), and the id is given only when the setting is on.
 */
export const CLICK_SECRET = 'click_secret';

/**
 * The attribute of a click that names its visitor: the day's visitor hash (`visitorHash`, the one
 * the unique-visits marker is keyed by), so that a signup by its click id can tell whether the same
 * visitor already signed up on the link (the rewards' `repeat_visitor` signal,
 * `lib/db/reward-sources.ts`). An HMAC under a key deleted after two days: no IP address, and no
 * way back to one once the key is gone.
 */
export const CLICK_VISITOR = 'visitor';

/**
 * How long a visit item, and so its click, is kept: a day past the longest attribution window the
 * contract allows (365 days). Its campaign's own window is checked at signup (`click_expired`);
 * the visit is written beside its campaign's read, before that window is known, so the item takes
 * the longest. Nothing else needs a visit that old: its counts are in the link and the rollups,
 * its event leaves the feed after 30 days, the visitor markers after 2 hours.
 */
export const VISIT_TTL_SECONDS = 366 * 24 * 60 * 60;

/** A human visit: the action item, in a visit partition, marked for the rollups; a click when given a secret. */
export function newVisitItem(
  link: LinkItem,
  action: LinkAction,
  unique: boolean,
  clickSecret?: string,
  visitor?: string,
) {
  const { item, data } = newActionItem(link, action);
  return {
    item: {
      ...item,
      ...visitKey(link.tenant, link.campaign_id, action.id),
      [VISIT_MARK]: { unique },
      expires_at: Math.floor(Date.parse(action.at) / 1000) + VISIT_TTL_SECONDS,
      ...(clickSecret !== undefined ? { [CLICK_SECRET]: clickSecret } : {}),
      ...(clickSecret !== undefined && visitor !== undefined ? { [CLICK_VISITOR]: visitor } : {}),
    },
    data,
  };
}

/** A click as its visit item holds it: the link's code, the time, and the secret to match. */
export interface StoredClick {
  code: string;
  clickedMs: number;
  secret: string;
  /** Absent on clicks recorded before visitors were kept on them. */
  visitor?: string;
}

/**
 * The click a stored visit item is, or undefined for anything else at a visit's key: a lost visit,
 * a visit written before click ids, an action that is no visit.
 */
export function clickOfVisitItem(item: Record<string, unknown> | undefined): StoredClick | undefined {
  if (item?.type !== 'action' || typeof item[VISIT_MARK] !== 'object') return undefined;
  const { link_code: code, event_time: at } = item;
  const secret = item[CLICK_SECRET];
  if (typeof code !== 'string' || typeof at !== 'string' || typeof secret !== 'string') return undefined;
  const clickedMs = Date.parse(at);
  const visitor = item[CLICK_VISITOR];
  if (Number.isNaN(clickedMs)) return undefined;
  return { code, clickedMs, secret, ...(typeof visitor === 'string' ? { visitor } : {}) };
}

export const BOT_VISIT_TTL_SECONDS = 30 * 24 * 60 * 60;

export function newBotVisitItem(link: LinkItem, now: Date) {
  const n = Math.floor(Math.random() * VISIT_PARTITIONS);
  return {
    PK: visitPartition(link.tenant, link.campaign_id, n),
    SK: `B#${String(now.getTime()).padStart(15, '0')}#${randomBytes(6).toString('base64url')}`,
    type: BOT_VISIT_TYPE,
    tenant: link.tenant,
    campaign_id: link.campaign_id,
    link_id: link.id,
    link_code: link.referral_code,
    referrer_id: link.referrer_id,
    at: now.toISOString(),
    expires_at: Math.floor(now.getTime() / 1000) + BOT_VISIT_TTL_SECONDS,
  };
}

/** A visit is unique when the same visitor has not visited the same link in this long. */
export const UNIQUE_WINDOW_MS = 60 * 60 * 1000;

export function visitorMarkerKey(code: string, visitor: string) {
  return { PK: `VISITOR#${code}#${visitor}`, SK: 'V' } as const;
}
/** Markers outlive the window by an hour; expiry is only storage hygiene (the logic reads the times). */
export const VISITOR_MARKER_TTL_SECONDS = 2 * 60 * 60;

/** A visit as its visitor's marker keeps it: when (epoch ms) and its id (its item's key, with its link's campaign). */
export interface MarkedVisit {
  at: number;
  vid: number;
}

/**
 * Visits a marker keeps, newest first, in attributes `v0`, `v1`, `v2`. More than one, so that when
 * the newest turns out lost (its request died between the marker and the visit item) the ones
 * before it still answer; three, so that a burst of identical requests (a double click, a browser's
 * retries) resolves in a third of the waits (`lib/db/visits.ts`). Each is about 30 bytes: the
 * marker stays one write unit.
 */
export const MARKED_VISITS = 3;
const slot = (n: number) => `v${n}`;

/**
 * The marker's update for a new visit: it becomes `v0`, the others move one slot down (the right
 * side of a SET reads the item as it was). `seen`, the single time of the older form, goes.
 */
export function visitorMarkerUpdate(visit: MarkedVisit, now: Date) {
  const shifts = Array.from(
    { length: MARKED_VISITS - 1 },
    (_, n) => `${slot(n + 1)} = if_not_exists(${slot(n)}, :none)`,
  );
  return {
    UpdateExpression: `SET ${slot(0)} = :visit, ${shifts.join(', ')}, expires_at = :exp REMOVE seen`,
    ExpressionAttributeValues: {
      ':visit': { at: visit.at, vid: visit.vid },
      ':none': null,
      ':exp': Math.floor(now.getTime() / 1000) + VISITOR_MARKER_TTL_SECONDS,
    },
  };
}

/** What a marker said before a visit's update: its visits, or the one time of the older form. */
export type MarkerBefore = { visits: MarkedVisit[] } | { legacySeen: number };

export function markerBeforeOf(item: Record<string, unknown> | undefined): MarkerBefore {
  // A marker of the form before visit ids (at most two hours old at deployment): its time is all there is.
  if (item && typeof item.seen === 'number' && item[slot(0)] === undefined) return { legacySeen: item.seen };
  const visits: MarkedVisit[] = [];
  for (let n = 0; n < MARKED_VISITS; n++) {
    const v = item?.[slot(n)] as { at?: unknown; vid?: unknown } | null | undefined;
    if (v && typeof v.at === 'number' && typeof v.vid === 'number') visits.push({ at: v.at, vid: v.vid });
  }
  return { visits };
}

/** The `type` of a lost visit item. */
export const LOST_VISIT_TYPE = 'lost_visit';

/**
 * Put at the key of a visit found missing, on the condition that nothing is there: the visit's own
 * Put is conditional too, so exactly one of them is written, and a visit that was not written by
 * then never will be. Kept as long as a marker could still name the visit.
 */
export function newLostVisitItem(tenant: string, campaignId: string, vid: number, now: Date) {
  return {
    ...visitKey(tenant, campaignId, vid),
    type: LOST_VISIT_TYPE,
    expires_at: Math.floor(now.getTime() / 1000) + VISITOR_MARKER_TTL_SECONDS,
  };
}

/** The day's visitor key item; `day` is `YYYY-MM-DD` (UTC). */
export function visitorKeyKey(day: string) {
  return { PK: `VISITKEY#${day}`, SK: 'KEY' } as const;
}
export const VISITOR_KEY_TTL_SECONDS = 2 * 24 * 60 * 60;

export function newVisitorKeyItem(day: string) {
  const dayEnd = Date.parse(`${day}T00:00:00Z`) / 1000 + 24 * 60 * 60;
  return {
    ...visitorKeyKey(day),
    key: randomBytes(32).toString('base64'),
    expires_at: dayEnd + VISITOR_KEY_TTL_SECONDS,
  };
}

/** The visitor: 128 bits of HMAC-SHA256 over IP address and user agent, under the day's key. */
export function visitorHash(key: string, ip: string, userAgent: string): string {
  return createHmac('sha256', Buffer.from(key, 'base64'))
    .update(`${ip}\n${userAgent}`, 'utf8')
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}
