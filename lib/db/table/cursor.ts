import { createHash } from 'node:crypto';
import { validationError } from '../../domain/errors.ts';

/** One page of a list: its items, and the cursor of the next page when there may be one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/**
 * List cursors: opaque to clients, base64url of the position of the last item returned and a tag
 * of the list it came from. Decoding validates the shape strictly, so a tampered cursor is a 400,
 * never a 5xx; the Query's partition key always comes from the request, never from the cursor, so
 * no cursor can reach into another list. The tag makes a cursor of another list (another
 * campaign, referrer or tenant) a 400 too, rather than a silent jump to an unrelated position.
 */
export interface Position {
  sortKey: string;
  code: string;
}

/** What names a list of links: the tenant, the campaign and, for a referrer's list, the referrer. */
export interface ListScope {
  tenant: string;
  campaignId: string;
  referrerId?: string;
}

const VERSION = 2;
const SORT_KEY = /^\d{15}#\d{16}$/;
const CODE = /^[A-Za-z0-9_-]{4,32}$/;
/** 72 bits of SHA-256: a cursor of another list passes by chance once in 4.7 × 10^21. */
const TAG = /^[A-Za-z0-9_-]{12}$/;

/**
 * Not a secret: a client can only ever read its own lists, so the tag need not be unforgeable,
 * only different for every list. JSON keeps the parts apart whatever characters they hold.
 */
function tagOf(scope: ListScope): string {
  const kind = scope.referrerId === undefined ? 'campaign' : 'referrer';
  const identity = JSON.stringify([
    kind,
    scope.tenant,
    scope.campaignId.toLowerCase(),
    scope.referrerId ?? null,
  ]);
  return createHash('sha256').update(identity, 'utf8').digest('base64url').slice(0, 12);
}

export function encodeCursor(scope: ListScope, position: Position): string {
  const body = [VERSION, position.sortKey, position.code, tagOf(scope)];
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

const invalid = () => validationError([{ field: 'cursor', message: 'is not a valid cursor for this list' }]);

/** A cursor's fields after its version, if it is the JSON array of `length` with that `version`. */
function cursorFields(cursor: string, version: number, length: number): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== length || parsed[0] !== version) throw invalid();
  return parsed.slice(1);
}

export function decodeCursor(scope: ListScope, cursor: string): Position {
  const [sortKey, code, tag] = cursorFields(cursor, VERSION, 4);
  if (
    typeof sortKey !== 'string' ||
    typeof code !== 'string' ||
    typeof tag !== 'string' ||
    !SORT_KEY.test(sortKey) ||
    !CODE.test(code) ||
    !TAG.test(tag) ||
    tag !== tagOf(scope)
  ) {
    throw invalid();
  }
  return { sortKey, code };
}

/**
 * Cursors of the lists whose position is one sort key (the events feed, the delivery log, the
 * tenant's campaigns): the same opaque shape, with the list's kind in its tag, so that a cursor of
 * another list (the feed's on the log, another status's log, another campaign or tenant) is a 400
 * before anything is read.
 */
export type SortKeyScope =
  | {
      kind: 'events' | 'deliveries' | 'conversions' | 'rewards' | 'payouts';
      tenant: string;
      campaignId: string;
      /** A list's filter (the delivery log's status, ...); part of the list's identity. */
      filter?: string;
    }
  | { kind: 'campaigns'; tenant: string };

const SORT_KEY_VERSION = 3;

function sortKeyTag(scope: SortKeyScope): string {
  const identity = JSON.stringify(
    scope.kind === 'campaigns'
      ? [scope.kind, scope.tenant, null, null]
      : [scope.kind, scope.tenant, scope.campaignId.toLowerCase(), scope.filter ?? null],
  );
  return createHash('sha256').update(identity, 'utf8').digest('base64url').slice(0, 12);
}

export function encodeSortKeyCursor(scope: SortKeyScope, sortKey: string): string {
  return Buffer.from(JSON.stringify([SORT_KEY_VERSION, sortKey, sortKeyTag(scope)]), 'utf8').toString(
    'base64url',
  );
}

/** The sort key a cursor holds, if `valid` accepts it and the cursor is this list's. */
export function decodeSortKeyCursor(scope: SortKeyScope, cursor: string, valid: RegExp): string {
  const [sortKey, tag] = cursorFields(cursor, SORT_KEY_VERSION, 3);
  if (
    typeof sortKey !== 'string' ||
    typeof tag !== 'string' ||
    !valid.test(sortKey) ||
    tag !== sortKeyTag(scope)
  ) {
    throw invalid();
  }
  return sortKey;
}

/**
 * Cursors of a campaign's referred users (endpoint 33), whole or filtered by a link or a referrer:
 * the index position (creation time and id) and the `referred_user_id` (the table key every index
 * start key also needs), tagged with the list, the filter included, so that a cursor of the whole
 * list is a 400 on a link's and the other way round.
 */
export interface ReferredUserScope {
  tenant: string;
  campaignId: string;
  /** `campaign`, `link:<id>` or `referrer:<id>`. */
  filter: string;
}

export interface ReferredUserPosition {
  sortKey: string;
  referredUserId: string;
}

const REFERRED_USER_VERSION = 4;

function referredUserTag(scope: ReferredUserScope): string {
  const identity = JSON.stringify([
    'referred_users',
    scope.tenant,
    scope.campaignId.toLowerCase(),
    scope.filter,
  ]);
  return createHash('sha256').update(identity, 'utf8').digest('base64url').slice(0, 12);
}

export function encodeReferredUserCursor(scope: ReferredUserScope, position: ReferredUserPosition): string {
  const body = [REFERRED_USER_VERSION, position.sortKey, position.referredUserId, referredUserTag(scope)];
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

export function decodeReferredUserCursor(scope: ReferredUserScope, cursor: string): ReferredUserPosition {
  const [sortKey, referredUserId, tag] = cursorFields(cursor, REFERRED_USER_VERSION, 4);
  if (
    typeof sortKey !== 'string' ||
    typeof referredUserId !== 'string' ||
    typeof tag !== 'string' ||
    !SORT_KEY.test(sortKey) ||
    referredUserId.length === 0 ||
    referredUserId.length > 1024 ||
    tag !== referredUserTag(scope)
  ) {
    throw invalid();
  }
  return { sortKey, referredUserId };
}
