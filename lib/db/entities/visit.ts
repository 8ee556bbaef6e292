/**
 * Visits through `/r/{code}`: the items a visit writes, spread so that one hot link does not land
 * on one item or one partition.
 *
 *   visit            PK `T#<tenant>#C#<campaign>#V<n>`  SK `A#<id, 16 digits>`   (n = id mod 16)
 *   bot visit        PK `T#<tenant>#C#<campaign>#V<n>`  SK `B#<ms>#<random>`       TTL 30 days
 *   visitor marker   PK `VISITOR#<code>#<visitor>`      SK `V`                     TTL 2 hours
 *   visitor key      PK `VISITKEY#<YYYY-MM-DD>`         SK `KEY`                   TTL 2 days
 *
 * A visit is an action item (the same attributes, `action.created` event included) in one of its
 * campaign's 16 visit partitions, plus `visit: { unique }` for the rollup consumer
 * (`lib/analytics/rollups.ts`), which adds it to the link's `total_clicks` and the rollups. A bot
 * visit (a bot's GET, or any HEAD) is no action and no event: a small item only counted, apart.
 *
 * The visitor is an HMAC of IP address and user agent under a key that changes every UTC day and
 * is deleted after two: no IP address and no unkeyed hash is ever stored; once its key is gone a
 * visitor hash can no longer be linked to anyone. The marker holds the visitor's last visit of a
 * link, which decides "unique" (no visit of that link in the previous hour).
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

/** A human visit: the action item, in a visit partition, marked for the rollups. */
export function newVisitItem(link: LinkItem, action: LinkAction, unique: boolean) {
  const { item, data } = newActionItem(link, action);
  return {
    item: { ...item, ...visitKey(link.tenant, link.campaign_id, action.id), [VISIT_MARK]: { unique } },
    data,
  };
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
/** Markers outlive the window by an hour; expiry is only storage hygiene (the logic reads `seen`). */
export const VISITOR_MARKER_TTL_SECONDS = 2 * 60 * 60;

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
