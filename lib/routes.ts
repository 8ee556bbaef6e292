/**
 * The route table: the single source of truth for the HTTP surface.
 *
 * The CDK stack makes one Lambda function and one HTTP API route per row, the local gateway
 * dispatches by the same rows, and later the OpenAPI document is built from them. Adding an
 * endpoint is one row here plus one handler file under `functions/`.
 */
import type { IndexName } from './table-definition.ts';

export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * A DynamoDB IAM action on the table's items, without the `dynamodb:` prefix. A transaction needs
 * no action of its own: IAM authorizes each of its items by the action it stands for (a Put as
 * `PutItem`, an Update as `UpdateItem`, a ConditionCheck as `ConditionCheckItem`), so a route that
 * sends `TransactWriteItems` declares those. `Scan` is not in the list on purpose: no route may
 * read the whole table.
 */
export type DynamoAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'ConditionCheckItem'
  | 'BatchWriteItem';

/**
 * Whether a function reads, writes or never touches the table, derived from its `dynamo` actions
 * (`tableAccessOf`). Only a summary for readers that need no more (the OpenAPI document's 503);
 * the grants come from the exact actions.
 */
export type TableAccess = 'none' | 'read' | 'write' | 'read-write';

const READ_ACTIONS: ReadonlySet<DynamoAction> = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'ConditionCheckItem',
]);

/** The summary of a list of actions: `none` for none, else read, write or both. */
export function tableAccessOf(
  dynamo: readonly DynamoAction[],
  queryIndexes: readonly string[] = [],
): TableAccess {
  const reads = queryIndexes.length > 0 || dynamo.some((a) => READ_ACTIONS.has(a));
  const writes = dynamo.some((a) => !READ_ACTIONS.has(a));
  if (reads && writes) return 'read-write';
  if (reads) return 'read';
  return writes ? 'write' : 'none';
}

/**
 * Which request-rate budget a route draws on (figures in `lib/throttling.ts`): `redirect` for the
 * public hot path visitors follow, `api` for the key-protected endpoints, `docs` for the public
 * document and its reference page. Named on each row, not guessed from its path, so a new row
 * decides its budget the moment it is written.
 */
export type ThrottleClass = 'redirect' | 'api' | 'docs';

export interface RouteDefinition {
  /** Stable identifier, used for the function's construct id and logical name. */
  readonly name: string;
  readonly method: HttpMethod;
  /** Path in API Gateway syntax, e.g. `/r/{referral_code}`. */
  readonly path: string;
  /** Handler module under `functions/`, without extension; it must export `handler`. */
  readonly handler: string;
  /** Whether the route sits behind the api-key authorizer. */
  readonly auth: boolean;
  /** Derived from `dynamo` for the rows of this table (see `TableAccess`). */
  readonly table: TableAccess;
  /** Memory in MB; small JSON handlers are I/O bound, so 256 MB buys enough CPU for cold starts. */
  readonly memoryMb?: number;
  /**
   * `false`: no START, END and REPORT line per invocation (JSON log format, system logs at WARN),
   * for a route whose volume makes them a real share of its cost (the public redirect: about 340
   * bytes of log ingestion a visit). Lambda's Duration, Errors and Throttles metrics stay.
   */
  readonly platformLogs?: false;
  /**
   * The function's timeout in seconds, when not the HTTP functions' 10 s: a route that waits on
   * something slower than the table (the webhook test's POST, up to 15 s plus 3 s of DNS).
   * API Gateway's integration timeout (30 s) bounds it.
   */
  readonly timeoutSeconds?: number;
  /**
   * DynamoDB calls one request may make once warm, id-block reservations and the authorizer's key
   * lookup excepted (a list's, for a page of the default size, 100: its batch reads take 100
   * keys each, so a larger `limit` takes more): 1 for the campaign endpoints, at most 2 for the
   * others, 0 for routes that never touch the table. Reads and transactions count alike.
   * test/integration/round-trips.test.ts enforces it per route and `npm run bench` reports
   * against it.
   */
  readonly dynamoCalls: number;
  /** Its request-rate budget; each of its route keys (a GET and its HEAD twin) gets its own bucket. */
  readonly throttle: ThrottleClass;
  readonly summary: string;
}

/**
 * A row of the route table: a route with the exact DynamoDB actions its handler may send, which
 * the CDK stack grants and nothing more (`infra/grants.ts`). What the handler really sends is
 * checked against this list by `test/integration/round-trips.test.ts`, every request of every
 * case, and the synthesized policies by `test/infra/least-privilege.test.ts`.
 */
export interface RouteRow extends RouteDefinition {
  /**
   * Actions on the table itself (its ARN; a `Query` there reads a partition of the table, not an
   * index), id-block reservations (`UpdateItem` of a sequence item) and an `Idempotency-Key`
   * replay's read of the stored answer (`GetItem`) included. Empty for a function that only
   * Queries indexes (`queryIndexes`), or that never touches the table: with neither it gets no
   * grant and no `TABLE_NAME`.
   */
  readonly dynamo: readonly DynamoAction[];
  /** Indexes the handler reads with `Query` (on those index ARNs only); none when omitted. */
  readonly queryIndexes?: readonly IndexName[];
}

/** A row as written below: its `table` summary is derived from its actions. */
type RowInput = Omit<RouteRow, 'table'>;

const row = (input: RowInput): RouteRow => ({
  ...input,
  table: tableAccessOf(input.dynamo, input.queryIndexes),
});

const rows: readonly RowInput[] = [
  {
    name: 'CreateReferralLink',
    method: 'POST',
    path: '/api/v1/referral_link',
    handler: 'http/post-referral-link',
    auth: true,
    // The campaign (GetItem), an id block (UpdateItem of its sequence item), one transaction of the
    // link's Put, the campaign's ConditionCheck and, with a key, the answer's Put; a replay reads it.
    dynamo: ['GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Create a referral link',
  },
  {
    name: 'GetReferralLink',
    method: 'GET',
    path: '/api/v1/referral_link',
    handler: 'http/get-referral-link',
    auth: true,
    // By code: the link (GetItem), then the campaign's existence. By id: the link's code (Query of
    // GSI1, which has no counters), then the link and the campaign in one BatchGetItem.
    dynamo: ['GetItem', 'BatchGetItem'],
    queryIndexes: ['GSI1'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Fetch one referral link by id or code',
  },
  {
    name: 'ListCampaignLinks',
    method: 'GET',
    path: '/api/v1/campaign_referral_links/{campaign_id}',
    handler: 'http/list-campaign-links',
    auth: true,
    // A page of the campaign's links (Query of GSI2) beside the campaign's existence, then the
    // page's counters, which no index copies (BatchGetItem of the items, one per 100 links).
    dynamo: ['GetItem', 'BatchGetItem'],
    queryIndexes: ['GSI2'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: "List a campaign's referral links, oldest first",
  },
  {
    name: 'ListReferrerLinks',
    method: 'GET',
    path: '/api/v1/referral_link/{campaign_id}/{referrer_id}',
    handler: 'http/list-referrer-links',
    auth: true,
    // A page of the referrer's links (Query of GSI3) beside the campaign's existence, then the
    // page's counters, which no index copies (BatchGetItem of the items, one per 100 links).
    dynamo: ['GetItem', 'BatchGetItem'],
    queryIndexes: ['GSI3'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: "List one referrer's links in a campaign, oldest first",
  },
  {
    name: 'CreateReferredUserAction',
    method: 'POST',
    path: '/api/v1/action/referred_user',
    handler: 'http/post-referred-user-action',
    auth: true,
    // Referred user, campaign and stored answer in one BatchGetItem, then the link's UpdateItem and
    // an id block; a key still held on the link reads the stored answer (GetItem).
    dynamo: ['BatchGetItem', 'GetItem', 'UpdateItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Record an action of a referred user',
  },
  {
    name: 'CreateCampaign',
    method: 'POST',
    path: '/api/v1/campaign',
    handler: 'http/post-campaign',
    auth: true,
    // One Put (with a key, a transaction of it and the answer's Put); a replay reads the answer.
    dynamo: ['PutItem', 'GetItem'],
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Create a campaign',
  },
  {
    name: 'GetCampaign',
    method: 'GET',
    path: '/api/v1/campaign',
    handler: 'http/get-campaign',
    auth: true,
    dynamo: ['GetItem'],
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Fetch a campaign',
  },
  {
    name: 'UpdateCampaign',
    method: 'PATCH',
    path: '/api/v1/campaign',
    handler: 'http/patch-campaign',
    auth: true,
    // One UpdateItem; a PATCH that changes nothing is a GetItem. New `reward_rules` are appended
    // to the rule history in that UpdateItem; the one PATCH of rules that finds versions to drop
    // (superseded over 2 days ago) writes once more (`pruneRuleSets` in lib/db/campaigns.ts).
    dynamo: ['UpdateItem', 'GetItem'],
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Update a campaign',
  },
  {
    name: 'DeleteCampaign',
    method: 'DELETE',
    path: '/api/v1/campaign',
    handler: 'http/delete-campaign',
    auth: true,
    dynamo: ['DeleteItem'],
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Delete a campaign',
  },
  {
    name: 'ListCampaigns',
    method: 'GET',
    path: '/api/v1/campaigns',
    handler: 'http/list-campaigns',
    auth: true,
    // One Query of GSI2 (the tenant's campaign partition), which projects the campaign object as
    // first deployed, then the page's attributes added since (`CAMPAIGN_ITEM_ATTRIBUTES`) in one
    // BatchGetItem per 100 campaigns.
    dynamo: ['BatchGetItem'],
    queryIndexes: ['GSI2'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List the account's campaigns, newest first",
  },
  {
    name: 'CreateReferredUser',
    method: 'POST',
    path: '/api/v1/referred_user',
    handler: 'http/post-referred-user',
    auth: true,
    // The link by code (GetItem) or id (Query of GSI1 for its code, then GetItem for its counters),
    // or by click id the click's visit, its campaign and its link in one BatchGetItem; an id
    // block, one transaction of the referred user's Put, the link's Update and the campaign's
    // ConditionCheck (and the answer's Put).
    dynamo: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    queryIndexes: ['GSI1'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: 'Create a referred user (a signup through a link)',
  },
  {
    name: 'GetReferredUser',
    method: 'GET',
    path: '/api/v1/referred_user',
    handler: 'http/get-referred-user',
    auth: true,
    // Referred user and campaign in one BatchGetItem, then the link (GetItem).
    dynamo: ['BatchGetItem', 'GetItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Fetch a referred user of a campaign',
  },
  {
    name: 'ListReferredUsers',
    method: 'GET',
    path: '/api/v1/referred_users/{campaign_id}',
    handler: 'http/list-referred-users',
    auth: true,
    // A page of the list read backwards (one Query: GSI2 for the campaign's, GSI1 for a link's,
    // GSI3 for a referrer's) beside the campaign's existence (GetItem), then in one round trip
    // the page's distinct links (their counters are in no index) and its users' own items (their
    // click_id and clicked_at, which no index projects), 100 keys per BatchGetItem. A full page
    // of the default 100 users has 100 user keys and 1 to 100 link keys: 2 BatchGetItems, 4
    // calls. Past the default it grows as every list's batch reads do: 2 + ceil((users + distinct
    // links) / 100), up to 22 at limit=1000 (docs/data-model.md says why the index cannot carry
    // the clicks without a rebuild).
    dynamo: ['GetItem', 'BatchGetItem'],
    queryIndexes: ['GSI1', 'GSI2', 'GSI3'],
    dynamoCalls: 4,
    throttle: 'api',
    summary: "List a campaign's referred users, newest first",
  },
  {
    name: 'CreateLinkAction',
    method: 'POST',
    path: '/api/v1/action/referral_link',
    handler: 'http/post-link-action',
    auth: true,
    // The link by code (GetItem) or id (Query of GSI1) and an id block, then the link's UpdateItem
    // (the action committed on it) beside the campaign's GetItem: two round trips. A keyed request
    // reads the link's counters too (by id, a GetItem after the index), then makes one
    // transaction of the action's Put, the link's Update, the campaign's ConditionCheck and the
    // answer's Put.
    dynamo: ['GetItem', 'UpdateItem', 'PutItem', 'ConditionCheckItem'],
    queryIndexes: ['GSI1'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: 'Record an action on a referral link',
  },
  {
    name: 'Visit',
    method: 'GET',
    path: '/r/{referral_code}',
    handler: 'http/visit',
    auth: false,
    // Two round trips of two calls: the link by code (GetItem) beside the visitor marker's UpdateItem
    // (people only), then the visit's PutItem beside the campaign's read (GetItem: it exists, and
    // its `click_ids`; a visit item is also the click an `rfclid` names, so no call more). A repeat
    // visit of the same visitor within the hour reads the earlier visit's item in between (GetItem:
    // it counts only if it was written), hence 5; should that one be missing (a double click in
    // flight, or a request that died after its marker), it is read again until it may no longer be
    // written, then made lost (PutItem), all within the request's deadline. A hot link (lib/db/
    // hot-links.ts) skips the link and campaign reads. A person's visit takes an id block now and
    // then (UpdateItem), the day's first visit reads or creates the visitor key (GetItem, PutItem),
    // and a visit of a campaign deleted meanwhile is taken back (DeleteItem). No link write: the
    // stream's rollups count the visit.
    dynamo: ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'],
    dynamoCalls: 5,
    platformLogs: false,
    throttle: 'redirect',
    summary: 'Redirect a visitor to the link and record a visit',
  },
  {
    name: 'GetAnalytics',
    method: 'GET',
    path: '/api/v1/analytics/{campaign_id}',
    handler: 'http/get-analytics',
    auth: true,
    // The campaign check (GetItem) beside one Query of its series items in its own partition.
    dynamo: ['GetItem', 'Query'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: "A campaign's metrics per hour or per day",
  },
  {
    name: 'GetAnalyticsTop',
    method: 'GET',
    path: '/api/v1/analytics/{campaign_id}/top',
    handler: 'http/get-analytics-top',
    auth: true,
    // The campaign (its URL makes the links' referral_link) beside the ranking's board: two GetItems.
    dynamo: ['GetItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: "A campaign's leaderboard of referrers or links",
  },
  {
    name: 'ListWebhookDeliveries',
    method: 'GET',
    path: '/api/v1/webhook_deliveries/{campaign_id}',
    handler: 'http/list-webhook-deliveries',
    auth: true,
    // The campaign check (GetItem) beside one Query of the log's partition in the table itself.
    dynamo: ['GetItem', 'Query'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: "List a campaign's webhook delivery attempts, newest first",
  },
  {
    name: 'ListEvents',
    method: 'GET',
    path: '/api/v1/events/{campaign_id}',
    handler: 'http/list-events',
    auth: true,
    // The campaign check (GetItem) beside two Queries of the campaign's partition: the feed items
    // of the next events, and the first item past them (a feed item holds the events of one feed
    // transaction). From the start (no cursor), one more Query before: the first item.
    dynamo: ['GetItem', 'Query'],
    dynamoCalls: 4,
    throttle: 'api',
    summary: "List a campaign's events (the webhook bodies), oldest first",
  },
  {
    name: 'RedeliverEvent',
    method: 'POST',
    path: '/api/v1/events/{event_id}/redeliver',
    handler: 'http/post-event-redelivery',
    auth: true,
    // The event: an action's item itself (BatchGetItem of its two possible keys: the campaign's
    // partition, or a visit partition), another's lookup item (GetItem); then one transaction of
    // the redelivery item's Put, the campaign's ConditionCheck, the Update of the event's count of
    // redeliveries this hour (the cap) and, with a key, the answer's Put; a replay reads the answer.
    dynamo: ['GetItem', 'BatchGetItem', 'PutItem', 'ConditionCheckItem', 'UpdateItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Deliver an event again',
  },
  {
    name: 'TestWebhook',
    method: 'POST',
    path: '/api/v1/campaign/webhook_test',
    handler: 'http/post-webhook-test',
    auth: true,
    // The campaign read (GetItem), and the attempt's two log items (one BatchWriteItem). With an
    // Idempotency-Key, one more: the key's claim (a conditional PutItem) before the POST, which
    // is outside the table, then one transaction of the log items and the answer; a replay is
    // the campaign read and the claim that fails with the stored answer.
    dynamo: ['GetItem', 'BatchWriteItem', 'PutItem'],
    dynamoCalls: 3,
    throttle: 'api',
    timeoutSeconds: 25,
    summary: "Send a webhook.test event to the campaign's webhook URL now",
  },
  {
    name: 'RotateWebhookSecret',
    method: 'POST',
    path: '/api/v1/campaign/rotate_webhook_secret',
    handler: 'http/post-webhook-secret-rotation',
    auth: true,
    // One conditional UpdateItem; with a key the campaign's GetItem and one transaction of the
    // Update and the answer's Put; a replay reads the answer.
    dynamo: ['UpdateItem', 'GetItem', 'PutItem'],
    // One UpdateItem; with an Idempotency-Key a read and a transaction (the stored answer is the campaign).
    dynamoCalls: 2,
    throttle: 'api',
    summary: "Replace the campaign's webhook signing secret",
  },
  {
    name: 'CreateConversion',
    method: 'POST',
    path: '/api/v1/conversion',
    handler: 'http/post-conversion',
    auth: true,
    // The referred user and the campaign (BatchGetItem), the link (GetItem), an id block now and
    // then (UpdateItem), then one transaction: the record's, its pointers' and its external id's
    // Puts, the link's Update and the campaign's ConditionCheck (its Update for the first one, which
    // locks the currency), with a key the answer's Put; a replay reads it (GetItem) after its
    // transaction failed on the key, hence 4.
    dynamo: ['BatchGetItem', 'GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    dynamoCalls: 4,
    throttle: 'api',
    summary: 'Record a conversion (a sale) of a referred user',
  },
  {
    name: 'RefundConversion',
    method: 'POST',
    path: '/api/v1/conversion/{id}/refund',
    handler: 'http/post-conversion-refund',
    auth: true,
    // The conversion and its campaign (BatchGetItem), its link (GetItem), then one transaction: the
    // conversion's compare-and-set Update, the refund's Put, the link's Update and the campaign's
    // ConditionCheck (and the answer's Put); a replay reads it (GetItem), hence 4. A refund that
    // lost a race to another reads again (not counted: the budget is of one uncontended request).
    dynamo: ['BatchGetItem', 'GetItem', 'PutItem', 'UpdateItem', 'ConditionCheckItem'],
    dynamoCalls: 4,
    throttle: 'api',
    summary: 'Refund part or all of a conversion',
  },
  {
    name: 'GetConversion',
    method: 'GET',
    path: '/api/v1/conversion',
    handler: 'http/get-conversion',
    auth: true,
    // The conversion and its campaign (BatchGetItem: its id names both keys), then its link (GetItem).
    dynamo: ['BatchGetItem', 'GetItem'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: 'Fetch a conversion',
  },
  {
    name: 'ListConversions',
    method: 'GET',
    path: '/api/v1/conversions/{campaign_id}',
    handler: 'http/list-conversions',
    auth: true,
    // One Query of the campaign's partition (its records, or a filter's pointers) beside the
    // campaign's existence (GetItem), then the page's links, and a filtered page's records, in one
    // BatchGetItem per 100 keys. No index.
    dynamo: ['GetItem', 'Query', 'BatchGetItem'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: "List a campaign's conversions, newest first",
  },
  {
    name: 'ListRewards',
    method: 'GET',
    path: '/api/v1/rewards/{campaign_id}',
    handler: 'http/list-rewards',
    auth: true,
    // One Query of a state's index partition (GSI3, or GSI2 for a recipient), or of all five at once
    // without a state, beside the campaign's existence (GetItem); then the page's items in one
    // BatchGetItem per 100 (no index projects a reward's fields). Two round trips.
    dynamo: ['GetItem', 'BatchGetItem'],
    queryIndexes: ['GSI2', 'GSI3'],
    dynamoCalls: 7,
    throttle: 'api',
    summary: "List a campaign's rewards, newest first",
  },
  {
    name: 'ApproveReward',
    method: 'POST',
    path: '/api/v1/reward/{id}/approve',
    handler: 'http/post-reward-approval',
    auth: true,
    // The reward (GetItem; its id names its key), its adjustments when it has some (BatchGetItem),
    // then one transaction: each changed reward's conditional Put, the campaign's ConditionCheck
    // and, with a key, the answer's Put; a replay reads the answer (GetItem).
    dynamo: ['GetItem', 'BatchGetItem', 'PutItem', 'ConditionCheckItem'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: 'Approve a reward in review, or end the hold of a pending one',
  },
  {
    name: 'VoidReward',
    method: 'POST',
    path: '/api/v1/reward/{id}/void',
    handler: 'http/post-reward-void',
    auth: true,
    // As ApproveReward: the reward, its adjustments or parent (BatchGetItem), one transaction.
    dynamo: ['GetItem', 'BatchGetItem', 'PutItem', 'ConditionCheckItem'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: 'Void an unpaid reward, with a reason',
  },
  {
    name: 'GetBalance',
    method: 'GET',
    path: '/api/v1/balance/{campaign_id}/{recipient_id}',
    handler: 'http/get-balance',
    auth: true,
    // The campaign's currency (GetItem) beside one strongly consistent Query of the recipient's
    // rewards in the campaign's partition (paged past 1 MB).
    dynamo: ['GetItem', 'Query'],
    dynamoCalls: 2,
    throttle: 'api',
    summary: "A recipient's rewards summed by state",
  },
  {
    name: 'CreatePayout',
    method: 'POST',
    path: '/api/v1/payout',
    handler: 'http/post-payout',
    auth: true,
    // One Query of the recipient's rewards, then one transaction: each paid reward's conditional
    // Put, the payout's Put, the campaign's ConditionCheck and, with a key, the answer's Put. A
    // replay reads the answer (GetItem) after its transaction failed on the key, hence 3; nothing
    // to pay reads the campaign (GetItem) instead of the transaction (404 or 422).
    dynamo: ['Query', 'GetItem', 'PutItem', 'ConditionCheckItem'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: "Record a payout of a recipient's approved rewards",
  },
  {
    name: 'ListPayouts',
    method: 'GET',
    path: '/api/v1/payouts/{campaign_id}',
    handler: 'http/list-payouts',
    auth: true,
    // One Query (the campaign's partition, or a recipient's GSI3 partition) beside the campaign's
    // existence (GetItem); a recipient's page then reads its items (BatchGetItem per 100).
    dynamo: ['GetItem', 'Query', 'BatchGetItem'],
    queryIndexes: ['GSI3'],
    dynamoCalls: 3,
    throttle: 'api',
    summary: "List a campaign's payouts, newest first",
  },
  {
    name: 'Health',
    method: 'GET',
    path: '/health',
    handler: 'http/health',
    auth: false,
    dynamo: [],
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'Liveness: the service answers (no dependency is called)',
  },
  {
    name: 'Readiness',
    method: 'GET',
    path: '/api/v1/health/ready',
    handler: 'http/get-readiness',
    auth: true,
    dynamo: ['GetItem'],
    dynamoCalls: 1,
    throttle: 'api',
    summary: 'Readiness: the table answers a read',
  },
  {
    name: 'GetOpenApiDocument',
    method: 'GET',
    path: '/api/v1/openapi.json',
    handler: 'http/get-openapi',
    auth: false,
    dynamo: [],
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'The OpenAPI 3.1 document of this API',
  },
  {
    name: 'GetApiReference',
    method: 'GET',
    path: '/docs',
    handler: 'http/get-docs',
    auth: false,
    dynamo: [],
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'The API reference page',
  },
  {
    name: 'GetDashboard',
    method: 'GET',
    path: '/dashboard',
    handler: 'http/get-dashboard',
    auth: false,
    dynamo: [],
    dynamoCalls: 0,
    throttle: 'docs',
    summary: 'The dashboard web app',
  },
];

export const routes: readonly RouteRow[] = rows.map(row);

/** The row of a route, by name: for handlers that build URLs of their own route. */
export function routeNamed(name: string): RouteDefinition {
  const route = routes.find((r) => r.name === name);
  if (!route) throw new Error(`no route named ${name}`);
  return route;
}

/**
 * Every GET route also answers `HEAD` (contract, Conventions): the same function, status and
 * headers, no body. API Gateway routes are per method, so the stack adds a HEAD twin of each.
 */
export function answersHead(route: RouteDefinition): boolean {
  return route.method === 'GET';
}

/** The catch-all route key: API Gateway's name for "no row matched". */
export const DEFAULT_ROUTE_KEY = '$default';

/** The API Gateway route keys of a row: `METHOD /path`, and `HEAD /path` beside a GET. */
export function routeKeysOf(route: RouteDefinition): string[] {
  const key = `${route.method} ${route.path}`;
  return answersHead(route) ? [key, `HEAD ${route.path}`] : [key];
}

/** The route key API Gateway gives a request that matched `route` with `method`. */
export function routeKeyFor(route: RouteDefinition, method: string): string {
  return `${method === 'HEAD' && answersHead(route) ? 'HEAD' : route.method} ${route.path}`;
}

export interface RouteMatch {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

interface CompiledPath {
  regex: RegExp;
  names: string[];
}

const compiled = new Map<string, CompiledPath>();

function compile(path: string): CompiledPath {
  let entry = compiled.get(path);
  if (!entry) {
    const names: string[] = [];
    const pattern = path
      .split('/')
      .map((segment) => {
        const param = /^\{([A-Za-z0-9_]+)\}$/.exec(segment);
        if (param?.[1]) {
          names.push(param[1]);
          return '([^/]+)';
        }
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    entry = { regex: new RegExp(`^${pattern}$`), names };
    compiled.set(path, entry);
  }
  return entry;
}

function matchPath(route: RouteDefinition, rawPath: string): Record<string, string> | undefined {
  const { regex, names } = compile(route.path);
  const m = regex.exec(rawPath);
  if (!m) return undefined;
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    const raw = m[i + 1] ?? '';
    params[name] = safeDecode(raw);
  });
  return params;
}

/** Percent-decoding that never throws: malformed escapes are kept as written. */
export function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/**
 * Resolve a request to a route the way API Gateway does: an exact method and path match wins;
 * a path that exists under another method is a 405; anything else is a 404.
 */
export function resolveRoute(
  method: string,
  rawPath: string,
  table: readonly RouteDefinition[] = routes,
):
  | { kind: 'match'; match: RouteMatch }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' } {
  const allowed: string[] = [];
  for (const route of table) {
    const pathParameters = matchPath(route, rawPath);
    if (!pathParameters) continue;
    if (route.method === method || (method === 'HEAD' && answersHead(route))) {
      return { kind: 'match', match: { route, pathParameters } };
    }
    allowed.push(route.method);
  }
  return allowed.length > 0 ? { kind: 'method_not_allowed', allowed } : { kind: 'not_found' };
}
