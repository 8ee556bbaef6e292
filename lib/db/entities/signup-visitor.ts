/**
 * The signup visitor marker: the last signups (referred user id and time, `s0`–`s2`, newest first)
 * whose click came from one visitor on one link, by the day's visitor hash of the click (the
 * unique-visits marker's key, `visit.ts`). What the rewards' `repeat_visitor` signal reads
 * (`lib/db/reward-sources.ts`); kept two days (TTL `expires_at`), the signal looks back 24 hours.
 *
 *   PK `SIGNUPVISITOR#<tenant>#<campaign>#<link id>#<visitor>`   SK `S`
 */
export function signupVisitorKey(tenant: string, campaignId: string, linkId: number, visitor: string) {
  return { PK: `SIGNUPVISITOR#${tenant}#${campaignId.toLowerCase()}#${linkId}#${visitor}`, SK: 'S' };
}

/** Signups a marker keeps, newest first, in `s0`, `s1`, `s2` (as the visitor marker keeps visits). */
export const MARKED_SIGNUPS = 3;
