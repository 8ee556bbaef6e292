/**
 * The exact DynamoDB actions of the functions that are not route rows (those are in
 * `lib/routes.ts`). Plain data without CDK imports: `infra/grants.ts` grants them, and
 * `test/integration/round-trips.test.ts` runs the code they are for and checks every request it
 * sends against them.
 */
import type { DynamoAction } from '../lib/routes.ts';
import type { IndexName } from '../lib/table-definition.ts';

/** What one function may do to the table: actions on the table, and `Query` on some indexes. */
export interface TableGrant {
  /** Actions on the table's ARN (`Query` here reads a partition of the table itself). */
  readonly actions: readonly DynamoAction[];
  /** Indexes read with `Query`, each on its own index ARN (never `index/*`). */
  readonly queryIndexes?: readonly IndexName[];
}

/**
 * The authorizer looks an api key up by its hash: one GetItem (`ApiKeyStore.tenantOf`), never a
 * Query, a Scan or a write.
 */
export const AUTHORIZER_GRANT: TableGrant = { actions: ['GetItem'] };

/**
 * A webhook delivery lane reads the campaign's URL and secret (GetItem), sets or clears its
 * slow-lane flag and failure clock and disables it (conditional UpdateItems;
 * `lib/db/webhook-targets.ts`), and logs each attempt (one BatchWriteItem of two puts;
 * `lib/db/webhook-attempts.ts`).
 */
export const DELIVERY_LANE_GRANT: TableGrant = { actions: ['GetItem', 'UpdateItem', 'BatchWriteItem'] };

/**
 * The webhook stream consumer writes the action item of an action committed on its link: a
 * conditional Put beside the campaign's GetItem, taken back (DeleteItem) if the campaign is gone,
 * or, for a keyed action, one transaction of the Put, the stored answer's Put and a ConditionCheck
 * of the campaign; then it takes the action and any expired held keys off the link (conditional
 * UpdateItems; `materializeLinkAction` in `lib/db/actions.ts`). The webhook queue takes only events
 * of campaigns that send them (`recordsToSend`: BatchGetItem of the campaigns).
 */
export const WEBHOOK_STREAM_GRANT: TableGrant = {
  actions: ['PutItem', 'DeleteItem', 'ConditionCheckItem', 'UpdateItem', 'GetItem', 'BatchGetItem'],
};

/**
 * The stream's second reader (`functions/stream/feed-and-rollups.ts`). The counting
 * (`lib/analytics/`) reads its campaigns (GetItem or BatchGetItem), its links for the boards
 * (BatchGetItem), the type registries, boards and window marks (GetItem), raises the counts
 * (conditional UpdateItems, `lib/db/counted-update.ts`), names types (UpdateItem), and puts
 * boards, window marks and parked work (PutItem; `lib/db/counting.ts`, `parked-work.ts`). The
 * feed (`recordFeedEvents` in `lib/db/webhook-events.ts`) reads its counter (GetItem), puts a
 * referred user's event lookup before its transaction (BatchWriteItem) and writes in transactions
 * of Puts and a ConditionCheck. The same function puts purge jobs on the purge queue (SQS, granted
 * apart).
 */
export const ROLLUP_STREAM_GRANT: TableGrant = {
  actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem', 'BatchWriteItem'],
};

/**
 * The purge (`lib/db/purge.ts`): GetItem (is the campaign really gone?), Query of the campaign's
 * partition and of its links in GSI2, the links' code reservations as conditional Puts in
 * transactions of 100 (authorized as PutItem per item), BatchWriteItem for the other deletes
 * (BatchWriteItem cannot be limited to deletes; the purge sends no put requests in it).
 */
export const PURGE_GRANT: TableGrant = {
  actions: ['GetItem', 'Query', 'PutItem', 'BatchWriteItem'],
  queryIndexes: ['GSI2'],
};

/**
 * The rewards' scheduled release (`releaseDueRewards` in `lib/db/rewards.ts`): one Query of the
 * due index (GSI1's `REWARDS_DUE` partition), each due reward read by key (GetItem) with its
 * adjustments (BatchGetItem), and written back in a transaction of conditional Puts.
 */
export const REWARD_RELEASE_GRANT: TableGrant = {
  actions: ['GetItem', 'BatchGetItem', 'PutItem'],
  queryIndexes: ['GSI1'],
};

/**
 * The rewards' stream consumer (`lib/db/reward-sources.ts`): the campaign and a conversion read by
 * key (GetItem), COUNT Queries of a referrer's signups (GSI3) and of a referred user's conversion
 * pointers (the table), the signup's review reasons (UpdateItem), the rewards put in transactions
 * beside the campaign's check and the conversion's `reward_ids` (PutItem, ConditionCheckItem,
 * UpdateItem), and a refund's reads of each reward's family (GetItem, BatchGetItem).
 */
export const REWARD_STREAM_GRANT: TableGrant = {
  actions: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem', 'PutItem', 'ConditionCheckItem'],
  queryIndexes: ['GSI3'],
};
