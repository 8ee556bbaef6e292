/**
 * Actions, on a link alone (endpoint 12) or of a referred user (endpoint 5), one write path: the
 * link (or the referred user) read, then one UpdateItem of the link that raises `total_clicks`,
 * stores the action on the link item (`last_action`) and returns the new image (`commitOnLink`).
 * That single-item write is the commit: the counter and the action cannot disagree, and the
 * response's counters are the exact values after this action. The link's stream record of that
 * write then becomes the action item, event included (`materializeLinkAction`, run by the stream
 * consumer), which then removes a big `last_action` from the link so that reads of the link stop
 * paying for up to 8 KiB of metadata (a small one stays until the link's next write).
 *
 * Why not one transaction of the action item, the link's counter and the campaign's check: a
 * transaction bills 2 WRU per KB for each of its items, condition checks included, and returns
 * no values (so no exact counter without another read). The single write plus the stream's
 * action item costs about half. Endpoint 12 with an `Idempotency-Key` keeps the transaction
 * (`recordKeyedLinkAction` says why).
 *
 * Metadata is stored as JSON text inside the item's event (`event_json`) and in `last_action`,
 * never as a DynamoDB map: it is any JSON object within 8 KiB, and a map cannot hold every such
 * object (numbers past 38 digits or 1e125, more than 32 levels of nesting).
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { campaignNotFound } from '../domain/errors.ts';
import { IdempotencyKeyUsed, type IdempotentRequest } from '../domain/idempotency.ts';
import type { Action } from '../domain/link-schemas.ts';
import { EVENT_FROM_LINK } from '../domain/webhook-events.ts';
import { campaignExists, campaignStillExists, putForLiveCampaign } from './campaigns.ts';
import { newActionItem as actionItem, toAction } from './entities/action.ts';
import { campaignKey } from './entities/campaign.ts';
import { idempotencyItemKey, storedAnswerOf } from './entities/idempotency.ts';
import {
  CLEAR_LAST_ACTION,
  CLEAR_LAST_ACTION_ATTRIBUTE,
  type LinkAction,
  type LinkItem,
  linkActionFromItem,
  linkFromItem,
  linkKey,
  storedLinkAction,
} from './entities/link.ts';
import { type ReferredUserItem, referredUserFromItem, referredUserKey } from './entities/referred-user.ts';
import { rememberAnswer } from './idempotency.ts';
import { nextId } from './ids.ts';
import { countOn, findIndexedLink, findLink, linkNotFound, rankedTotal } from './links.ts';
import { referredUserNotFound } from './referred-users.ts';
import { getItems } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { transactWrite } from './table/transactions.ts';

export async function newAction(
  actionType: string,
  metadata: Record<string, unknown>,
  referredUser: ReferredUserItem | null,
): Promise<LinkAction> {
  return {
    id: await nextId('action'),
    at: new Date().toISOString(),
    action_type: actionType,
    metadata,
    referred_user: referredUser && {
      id: referredUser.id,
      created_at: referredUser.created_at,
      referred_user_id: referredUser.referred_user_id,
      ...(referredUser.click_id !== undefined
        ? { click_id: referredUser.click_id, clicked_at: referredUser.clicked_at }
        : {}),
    },
  };
}

/**
 * Endpoint 12: an action on a link alone, found by code or id. Unkeyed, the action is committed on
 * the link's item (`commitOnLink`) beside a read of the campaign, and the stream consumer writes its
 * action item. A campaign deleted meanwhile answers 404 like a link that is gone; the increment may
 * have been made on that deleted campaign's link, but nothing of the campaign is visible after its
 * delete, the link goes with the purge, and `materializeLinkAction` writes no action item (and so
 * no event and no rollup) for a campaign that no longer exists. Keyed: `recordKeyedLinkAction`.
 */
export async function createLinkAction(
  tenant: string,
  target: { code: string } | { id: number },
  input: { actionType: string; metadata: Record<string, unknown> },
  idempotency?: IdempotentRequest,
): Promise<Action> {
  if (idempotency) {
    const link = await findLink(target, tenant);
    if (!link) throw linkNotFound();
    return recordKeyedLinkAction(link, input, idempotency);
  }
  // The counters come from the update's new image: by id, the index read alone finds the link.
  const link = await findIndexedLink(target, tenant);
  if (!link) throw linkNotFound();
  const action = await newAction(input.actionType, input.metadata, null);
  const [counted, exists] = await Promise.all([
    commitOnLink(link.referral_code, link.id, action),
    campaignExists(link.tenant, link.campaign_id),
  ]);
  if (!exists || !counted) throw linkNotFound();
  return toAction(counted, action);
}

/**
 * Endpoint 12 with an `Idempotency-Key`: one transaction of the action item, the link's counter,
 * the campaign's check and the stored answer, so that a retry right after the answer is replayed
 * at once (a key held on the link is answered 409 until the stream consumer has stored the
 * answer). It bills about twice the unkeyed path, for the requests that ask for it.
 */
async function recordKeyedLinkAction(
  link: LinkItem,
  input: { actionType: string; metadata: Record<string, unknown> },
  idempotency: IdempotentRequest,
): Promise<Action> {
  const action = await newAction(input.actionType, input.metadata, null);
  // The counters as of the read plus this action; the transaction makes the increment itself.
  const { item, data } = actionItem({ ...link, total_clicks: link.total_clicks + 1 }, action);
  const result = await transactWrite(
    [
      { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } },
      countOn(link, { counter: 'total_clicks', actionType: action.action_type }, Date.parse(action.at)),
      campaignStillExists(link.tenant, link.campaign_id),
    ],
    rememberAnswer(idempotency, 201, data),
  );
  // A link or campaign that is gone: the campaign was deleted (links go only with it).
  if (!result.ok) throw linkNotFound();
  return data;
}

/**
 * Commit `action` on the link `code` (only that very link, `id`: never a code reservation left by
 * a purge or a link that re-issued the code since): one UpdateItem that raises `total_clicks`,
 * stores the action on the item (`last_action`) and returns the new image. That single-item write
 * is the commit: the counter and the action cannot disagree, and the answer's counters are the
 * exact values after this action. The link's stream record of that write then becomes the action
 * item, event included (`materializeLinkAction`, run by the stream consumer).
 *
 * One write of about 1 KB instead of a transaction (which bills 2 WRU per KB for each of the
 * action's Put, the link's Update and the campaign's ConditionCheck), and the indexes project no
 * counter, so the update rewrites no index copy. Undefined when the link is gone; throws
 * `IdempotencyKeyUsed` when the request's key is held on the link already.
 */
async function commitOnLink(
  code: string,
  linkId: number,
  action: LinkAction,
  idempotency?: IdempotentRequest,
): Promise<LinkItem | undefined> {
  if (idempotency) {
    action.idempotency = { key_hash: idempotency.keyHash, request_hash: idempotency.requestHash };
  }
  // Without a transaction, the key is committed on the link item itself: an attribute of its own,
  // written only if absent (see `heldKeyAttribute`).
  const held = idempotency ? heldKeyAttribute(idempotency.keyHash) : undefined;
  const totals = rankedTotal(action.action_type);
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: linkKey(code),
        UpdateExpression: `ADD total_clicks :one, #total :one SET last_action = :action, #reach = :at${held ? ', #held = :now' : ''}`,
        ConditionExpression: `#id = :link${held ? ' AND attribute_not_exists(#held)' : ''}`,
        ExpressionAttributeNames: {
          '#id': 'id',
          '#total': totals.count!,
          '#reach': totals.reach,
          ...(held ? { '#held': held } : {}),
        },
        ExpressionAttributeValues: {
          ':one': 1,
          ':action': storedLinkAction(action),
          ':link': linkId,
          ':at': Date.parse(action.at),
          ...(held ? { ':now': Date.now() } : {}),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return linkFromItem(Attributes ?? {});
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    if (held && err.Item?.[held] !== undefined) throw new IdempotencyKeyUsed();
    return undefined;
  }
}

/**
 * Endpoint 5: an action tied to a referred user of a campaign. Two round trips: one strongly
 * consistent batch read of the referred user and the campaign (which also tells an unknown
 * campaign from an unknown referred user), then the link's UpdateItem described above.
 *
 * The campaign is checked by the read, not inside the write. A campaign deleted between the two
 * can still count this action on its link; nothing of that campaign is visible after its delete
 * anyway, the link goes with the purge, and `materializeLinkAction` writes no action item (and so
 * no event) for a campaign that no longer exists. The link is pinned by its id as well as its
 * code, so a code freed by a purge and reused since can never be counted by mistake.
 */
export async function createReferredUserAction(
  tenant: string,
  input: {
    campaignId: string;
    referredUserId: string;
    actionType: string;
    metadata: Record<string, unknown>;
  },
  idempotency?: IdempotentRequest,
): Promise<Action> {
  // A keyed request reads its key's stored answer in the same batch: no extra round trip.
  const [item, campaign, remembered] = await getItems([
    referredUserKey(tenant, input.campaignId, input.referredUserId),
    campaignKey(tenant, input.campaignId),
    ...(idempotency ? [idempotencyItemKey(idempotency)] : []),
  ]);
  const stored = storedAnswerOf(remembered);
  if (stored) throw new IdempotencyKeyUsed(stored);
  if (!campaign) throw campaignNotFound(input.campaignId);
  if (!item) throw referredUserNotFound();
  const referredUser = referredUserFromItem(item);
  const action = await newAction(input.actionType, input.metadata, referredUser);
  const counted = await commitOnLink(referredUser.link_code, referredUser.link_id, action, idempotency);
  if (!counted) throw campaignNotFound(input.campaignId);
  return toAction(counted, action);
}

/**
 * An `Idempotency-Key` of an action committed on its link (endpoints 5 and 12), held on the link.
 * The write that commits the action sets it (only if absent); the stream consumer then stores the answer, and a retry
 * that reads the answer is replayed. A retry that read before the answer was stored but writes
 * after it still meets the held key, so the key stays on the link for `KEY_HOLD_MS` after its
 * answer is stored, far longer than any request's read-then-write (5 s deadline) or a write
 * delayed in a paused or overloaded DynamoDB, and is removed by a later settlement.
 */
const HELD_KEY_PREFIX = 'idem_';
const heldKeyAttribute = (keyHash: string) => `${HELD_KEY_PREFIX}${keyHash}`;
export const KEY_HOLD_MS = 10 * 60_000;

/**
 * The stream side of endpoints 5 and 12: turn a link image that carries `last_action` into that
 * action's item, with its `action.created` event (which the same stream then carries to the webhook queue,
 * like every other event), then take the action off the link. Idempotent, so a redelivered stream
 * record changes nothing; and never for a deleted campaign, so a purge cannot be outrun into an
 * orphan item. `image` is the link's new image, unmarshalled; it is decoded here.
 */
export async function materializeLinkAction(
  image: Record<string, unknown>,
): Promise<'written' | 'exists' | 'campaign_gone'> {
  const link = linkFromItem(image);
  const action = linkActionFromItem(image);
  const { item: event, data } = actionItem(link, action);
  // Its event was fed from the link's record (`eventRecordsOf`): the item's INSERT is no new event.
  const item = { ...event, [EVENT_FROM_LINK]: true };
  const keyed = action.idempotency && {
    tenant: link.tenant,
    keyHash: action.idempotency.key_hash,
    requestHash: action.idempotency.request_hash,
  };
  let outcome: 'written' | 'exists' | 'campaign_gone';
  if (!keyed) {
    // Unkeyed (most actions): a conditional Put beside the campaign's read, taken back if the
    // campaign is gone. Half of what a transaction with the campaign's check bills.
    outcome = await putForLiveCampaign(link.tenant, link.campaign_id, item);
  } else {
    try {
      const result = await transactWrite(
        [
          { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' } },
          campaignStillExists(link.tenant, link.campaign_id),
        ],
        // The answer the request got (the same link image, so the same counters), under its key.
        rememberAnswer(keyed, 201, data),
      );
      outcome = result.ok ? 'written' : result.failed.has(1) ? 'campaign_gone' : 'exists';
    } catch (err) {
      // The stored answer exists: this record was handled before.
      if (!(err instanceof IdempotencyKeyUsed)) throw err;
      outcome = 'exists';
    }
  }
  if (outcome === 'campaign_gone') return outcome;
  const expired = expiredKeys(image);
  if (expired.length > 0) await releaseExpiredKeys(link.referral_code, expired);
  else if (lastActionBytes(image) > LAST_ACTION_KEPT_BYTES)
    await removeLastAction(link.referral_code, action.id);
  return outcome;
}

/**
 * A materialized action small enough to leave on its link until the link's next write, which
 * removes or replaces it (every write of a link does: `CLEAR_LAST_ACTION`): it keeps the link under
 * 1 KB, so its reads and writes cost what they did without it, and an action costs one write fewer
 * (about 0.8 WRU of the 3 it took). A bigger one (metadata up to 8 KiB) is removed at once.
 */
export const LAST_ACTION_KEPT_BYTES = 400;

function lastActionBytes(image: Record<string, unknown>): number {
  const stored = image.last_action as { json?: unknown } | undefined;
  return typeof stored?.json === 'string' ? Buffer.byteLength(stored.json) : 0;
}

/** The held keys of this link image whose hold has ended: the link carries only its last `KEY_HOLD_MS` of keyed actions. */
function expiredKeys(image: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(image).filter(
    ([name, heldAt]) => name.startsWith(HELD_KEY_PREFIX) && Number(heldAt) < Date.now() - KEY_HOLD_MS,
  );
}

/**
 * Remove `expired` held keys, each on the condition that it holds the value seen (a key held again
 * since, by a new request reusing it after the stored answer expired, is kept), and the link's
 * action with them: a write of the link that left an action on it would be taken by the stream's
 * readers for that action's commit again (a second event). An action that a later request put
 * there meanwhile is committed already (that write was its record), so removing it loses nothing.
 */
async function releaseExpiredKeys(code: string, expired: ReadonlyArray<[string, unknown]>): Promise<void> {
  for (const [name, heldAt] of expired) {
    try {
      await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: linkKey(code),
          UpdateExpression: `REMOVE #held, ${CLEAR_LAST_ACTION_ATTRIBUTE}`,
          ConditionExpression: '#held = :at',
          ExpressionAttributeNames: { '#held': name },
          ExpressionAttributeValues: { ':at': heldAt },
        }),
      );
    } catch (err) {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    }
  }
}

/**
 * Take a materialized action off its link, unless a later action has replaced it (that one's own
 * record removes it) or another write removed it already. Only `last_action` changes, which no
 * index projects, so the indexes' copies of the link are not rewritten.
 */
async function removeLastAction(code: string, actionId: number): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: linkKey(code),
        UpdateExpression: CLEAR_LAST_ACTION,
        ConditionExpression: 'last_action.id = :id',
        ExpressionAttributeValues: { ':id': actionId },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
