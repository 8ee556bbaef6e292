/**
 * Key builders: the only place that knows how items are keyed (see `lib/table-definition.ts`).
 *
 * - campaign        PK `T#<tenant>#C#<campaign>`  SK `CAMPAIGN`
 * - referred user   PK `T#<tenant>#C#<campaign>`  SK `RU#<referred_user_id>`  (unique per campaign)
 * - action          PK `T#<tenant>#C#<campaign>`  SK `A#<id>`
 * - referral link   PK `LINK#<code>`              SK `LINK`  (codes unique across the deployment)
 *     GSI1 `LINKID#<id>` / `LINK`                                      fetch by id
 *     GSI2 `T#<tenant>#C#<campaign>#LINKS` / `<created ms>#<id>`       campaign list, oldest first
 *     GSI3 `T#<tenant>#C#<campaign>#R#<referrer>` / `<created ms>#<id>` referrer list (sparse)
 * - code reservation PK `LINK#<code>`           SK `LINK`  no index keys: what the purge leaves of
 *     a deleted campaign's link, so the code stays its tenant's (see `lib/db/link-item.ts`)
 * - id block        PK `SEQ#<kind>`               SK `SEQ`
 * - idempotency     PK `IDEM#<tenant>#<sha256 of the key>`  SK `IDEM`  (expires after 25 h, TTL)
 * - api key         PK `APIKEY#<sha256>`          SK `APIKEY`  GSI1 `APIKEYS` (see lib/auth/api-keys.ts)
 *
 * A campaign's referred users and actions share its partition, so purging a deleted campaign is
 * one paged Query of that partition plus one of its links' GSI2 list (each link becoming its
 * code's reservation).
 */
export function campaignPartition(tenant: string, campaignId: string): string {
  return `T#${tenant}#C#${campaignId.toLowerCase()}`;
}

export const keys = {
  campaign: (tenant: string, campaignId: string) => ({
    PK: campaignPartition(tenant, campaignId),
    SK: 'CAMPAIGN' as const,
  }),
  referredUser: (tenant: string, campaignId: string, referredUserId: string) => ({
    PK: campaignPartition(tenant, campaignId),
    SK: `RU#${referredUserId}`,
  }),
  action: (tenant: string, campaignId: string, id: number) => ({
    PK: campaignPartition(tenant, campaignId),
    SK: `A#${pad(id, 16)}`,
  }),
  link: (code: string) => ({ PK: `LINK#${code}`, SK: 'LINK' as const }),
  linkById: (id: number) => `LINKID#${id}`,
  campaignLinks: (tenant: string, campaignId: string) => `${campaignPartition(tenant, campaignId)}#LINKS`,
  referrerLinks: (tenant: string, campaignId: string, referrerId: string) =>
    `${campaignPartition(tenant, campaignId)}#R#${referrerId}`,
  /** Sort key of both link lists: creation time, then id, so "oldest first" is the index order. */
  linkOrder: (createdMs: number, id: number) => `${pad(createdMs, 15)}#${pad(id, 16)}`,
  sequence: (kind: string) => ({ PK: `SEQ#${kind}`, SK: 'SEQ' }),
  /** An `Idempotency-Key`'s stored answer, by tenant and the key's SHA-256 (keys are client text). */
  idempotency: (tenant: string, keyHash: string) => ({
    PK: `IDEM#${tenant}#${keyHash}`,
    SK: 'IDEM' as const,
  }),
};

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}
