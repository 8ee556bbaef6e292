/** Campaign reads and writes; the item, its keys and its decoding are `entities/campaign.ts`. */
import { randomBytes, randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type CampaignChanges, type CampaignCreateInput, currencyLocked } from '../domain/campaign-rules.ts';
import { DEFAULT_ATTRIBUTION_WINDOW_DAYS } from '../domain/click-ids.ts';
import { ApiError, campaignNotFound } from '../domain/errors.ts';
import type { IdempotentRequest } from '../domain/idempotency.ts';
import { DEFAULT_REVIEW_SIGNUPS_PER_HOUR, type RuleSet, withRuleSet } from '../domain/reward-rules.ts';
import type { Campaign } from '../domain/schemas.ts';
import { formatTimestamp } from '../domain/time.ts';
import { PREVIOUS_SECRET_SECONDS, WEBHOOK_EVENT_TYPES } from '../domain/webhook-events.ts';
import { CAMPAIGN_ITEM_ATTRIBUTES } from '../table-definition.ts';
import {
  CAMPAIGN_LIST_INDEX,
  CAMPAIGN_ORDER,
  CLICK_SETTINGS_ATTRIBUTES,
  type ClickSettings,
  CURRENCY_LOCK,
  campaignFromItem,
  campaignIdOfOrder,
  campaignKey,
  campaignListPartition,
  clickSettingsOf,
  newCampaignItem,
  ruleSetsOfItem,
} from './entities/campaign.ts';
import { decoder } from './entities/decode.ts';
import { rememberAnswer } from './idempotency.ts';
import { getItems } from './table/batch.ts';
import { db, tableName } from './table/client.ts';
import { decodeSortKeyCursor, encodeSortKeyCursor, type Page } from './table/cursor.ts';
import { queryPage } from './table/query.ts';
import { transactWrite } from './table/transactions.ts';

export type { CampaignItem } from './entities/campaign.ts';

/** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * One PutItem; the condition only guards against a (practically impossible) UUID collision. With
 * an `Idempotency-Key`, one transaction of the same Put and the stored answer: still one call.
 */
export async function createCampaign(
  tenant: string,
  input: CampaignCreateInput,
  idempotency?: IdempotentRequest,
): Promise<Campaign> {
  const now = new Date();
  const campaign: Campaign = {
    id: randomUUID(),
    created_at: formatTimestamp(now),
    url: input.url,
    name: input.name,
    webhook_url: null,
    webhook_secret: null,
    webhook_events: [...WEBHOOK_EVENT_TYPES],
    webhook_status: 'enabled',
    webhook_disabled_reason: null,
    click_ids: input.click_ids ?? false,
    attribution_window_days: input.attribution_window_days ?? DEFAULT_ATTRIBUTION_WINDOW_DAYS,
    currency: input.currency,
    reward_rules: input.reward_rules ?? [],
    review_signups_per_hour: input.review_signups_per_hour ?? DEFAULT_REVIEW_SIGNUPS_PER_HOUR,
  };
  const item = newCampaignItem(tenant, campaign, now);
  const put = { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' };
  if (idempotency) await transactWrite([{ Put: put }], rememberAnswer(idempotency, 201, campaign));
  else await db.send(new PutCommand(put));
  return campaign;
}

/** One GetItem, strongly consistent so a write is visible to the next read. */
export async function getCampaign(tenant: string, id: string): Promise<Campaign> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: campaignKey(tenant, id), ConsistentRead: true }),
  );
  if (!Item) throw campaignNotFound(id);
  return campaignFromItem(Item);
}

/**
 * One UpdateItem with ALL_NEW. The secret is generated here but written only if the item has
 * none (`if_not_exists`), so it is created when a webhook URL is first set and stable afterwards.
 *
 * New `reward_rules` are appended to the rule history as a new version (`list_append`, in the
 * same UpdateItem), so a signup or conversion committed before the PATCH is still rewarded by
 * the rules of its commit. Versions superseded more than 2 days ago (or past the 20th) are
 * dropped by a second, conditional write, only when there are such versions: a PATCH of rules
 * more than 2 days after the one before it (`pruneRuleSets`).
 */
export async function updateCampaign(
  tenant: string,
  id: string,
  changes: CampaignChanges,
): Promise<Campaign> {
  if (Object.values(changes).every((v) => v === undefined)) return getCampaign(tenant, id);
  const sets: string[] = [];
  const removes: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (changes.name !== undefined) {
    sets.push('#name = :name');
    names['#name'] = 'name';
    values[':name'] = changes.name;
  }
  if (changes.webhook_url !== undefined) {
    sets.push('webhook_url = :webhook_url');
    values[':webhook_url'] = changes.webhook_url;
    if (changes.webhook_url !== null) {
      sets.push('webhook_secret = if_not_exists(webhook_secret, :secret)');
      values[':secret'] = newWebhookSecret();
    }
  }
  if (changes.click_ids !== undefined) {
    sets.push('click_ids = :click_ids');
    values[':click_ids'] = changes.click_ids;
  }
  if (changes.attribution_window_days !== undefined) {
    sets.push('attribution_window_days = :window_days');
    values[':window_days'] = changes.attribution_window_days;
  }
  if (changes.webhook_events !== undefined) {
    sets.push('webhook_events = :webhook_events');
    values[':webhook_events'] = changes.webhook_events;
  }
  let condition = 'attribute_exists(PK)';
  if (changes.review_signups_per_hour !== undefined) {
    sets.push('review_signups_per_hour = :review_per_hour');
    values[':review_per_hour'] = changes.review_signups_per_hour;
  }
  if (changes.reward_rules !== undefined) {
    sets.push('reward_rule_sets = list_append(if_not_exists(reward_rule_sets, :no_rule_sets), :rule_set)');
    values[':no_rule_sets'] = [];
    values[':rule_set'] = [{ from_ms: Date.now(), rules: changes.reward_rules }];
  }
  if (changes.currency !== undefined) {
    sets.push('#currency = :currency');
    names['#currency'] = 'currency';
    names['#locked'] = CURRENCY_LOCK;
    values[':currency'] = changes.currency;
    // The first conversion locks the currency in its own transaction (`lib/db/conversions.ts`), so
    // this condition and that transaction never both pass with different currencies. Naming the
    // currency the campaign already has is no change, and allowed.
    condition += ' AND (attribute_not_exists(#locked) OR #currency = :currency)';
  }
  if (changes.webhook_status === 'enabled') {
    // Re-enabled: the failure clock starts again with the next failed attempt.
    removes.push('webhook_status', 'webhook_disabled_reason', 'webhook_failing_url', 'webhook_failing_since');
  } else if (changes.webhook_status === 'disabled') {
    sets.push(
      'webhook_status = :disabled',
      'webhook_disabled_reason = if_not_exists(webhook_disabled_reason, :reason)',
    );
    values[':disabled'] = 'disabled';
    values[':reason'] = 'Disabled through the API.';
  }
  const update = [
    sets.length ? `SET ${sets.join(', ')}` : '',
    removes.length ? `REMOVE ${removes.join(', ')}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        UpdateExpression: update,
        ConditionExpression: condition,
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    if (changes.reward_rules !== undefined && Attributes) await pruneRuleSets(tenant, id, Attributes);
    return campaignFromItem(Attributes ?? {});
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) {
      if (err.Item) throw currencyLocked();
      throw campaignNotFound(id);
    }
    throw err;
  }
}

/**
 * Drop the rule versions no replay can need any more (`withRuleSet`: superseded more than 2 days
 * ago, or past the 20th), conditioned on the history as written: a PATCH of rules meanwhile
 * appended one, and the next PATCH prunes instead. Nothing to drop, nothing written.
 */
async function pruneRuleSets(tenant: string, id: string, item: Record<string, unknown>): Promise<void> {
  const history = ruleSetsOfItem(item);
  const latest = history.reduce<RuleSet | undefined>(
    (a, b) => (a === undefined || b.from_ms >= a.from_ms ? b : a),
    undefined,
  );
  if (!latest) return;
  const kept = withRuleSet(
    history.filter((s) => s !== latest),
    latest.rules,
    latest.from_ms,
  );
  if (kept.length === history.length) return;
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        UpdateExpression: 'SET reward_rule_sets = :kept',
        ConditionExpression: 'reward_rule_sets = :history',
        ExpressionAttributeValues: { ':kept': kept, ':history': item.reward_rule_sets },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}

const listField = decoder('campaign list entry');

/**
 * One page of the tenant's campaigns, newest first: one Query of GSI2's campaign partition, read
 * backwards, of limit + 1 entries (the extra one only tells whether another page exists). The
 * index projects the API's campaign object as it was first deployed; the attributes added since
 * are read from the items, one BatchGetItem per 100 campaigns shown. No campaign check is needed: the partition is the key's own tenant's.
 *
 * As with the link lists, a Query stops at 1 MB, so a page of large campaigns (long URLs) can end
 * before `limit` and still carries a cursor. The cursor holds the last entry's sort key, from which
 * the whole start key follows (the campaign's id is in it): nothing of it is taken from the client
 * but a position inside the request's own tenant's list.
 */
export async function listCampaigns(
  tenant: string,
  options: { limit: number; cursor?: string },
): Promise<Page<Campaign>> {
  const scope = { kind: 'campaigns' as const, tenant };
  const after = options.cursor ? decodeSortKeyCursor(scope, options.cursor, CAMPAIGN_ORDER) : undefined;
  const partition = campaignListPartition(tenant);
  const index = CAMPAIGN_LIST_INDEX;
  const afterId = after && campaignIdOfOrder(after);
  const {
    items: shown,
    last,
    more,
  } = await queryPage({
    index,
    partition,
    limit: options.limit,
    newestFirst: true,
    after: after && afterId ? { sortKey: after, tableKey: campaignKey(tenant, afterId) } : undefined,
  });
  // What the index does not project (`CAMPAIGN_ITEM_ATTRIBUTES`) comes from the items, as fresh
  // as the index copy. A campaign deleted in between keeps what the index had (its defaults).
  const later = await getItems(
    shown.map((item) => campaignKey(tenant, listField.string(item, 'id'))),
    { consistent: false, attributes: CAMPAIGN_ITEM_ATTRIBUTES },
  );
  return {
    items: shown.map((item, i) => campaignFromItem({ ...item, ...later[i] })),
    nextCursor: more && last ? encodeSortKeyCursor(scope, listField.string(last, index.sortKey)) : undefined,
  };
}

/** One strongly consistent key-only read: a deleted campaign hides its links at once. */
export async function campaignExists(tenant: string, campaignId: string): Promise<boolean> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConsistentRead: true,
      ProjectionExpression: 'PK',
    }),
  );
  return Item !== undefined;
}

/**
 * The campaign's click settings (`click_ids`, the window), strongly consistent; undefined when it
 * does not exist. One GetItem, billed as `campaignExists` is (by the item's size, whatever the
 * projection): the redirect reads this where it only checked that the campaign exists.
 */
export async function campaignClickSettings(
  tenant: string,
  campaignId: string,
): Promise<ClickSettings | undefined> {
  const { Item } = await db.send(
    new GetCommand({
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConsistentRead: true,
      ProjectionExpression: ['PK', ...CLICK_SETTINGS_ATTRIBUTES].join(', '),
    }),
  );
  return Item && clickSettingsOf(Item);
}

/**
 * Which of the campaigns at `keys` exist, read eventually consistent (the counting consumer's
 * check, which the purge of a campaign deleted meanwhile backs up): the GetItem of one campaign's
 * key alone, or one BatchGetItem of them all.
 */
export async function campaignsFound(keys: ReadonlyArray<{ PK: string; SK: string }>): Promise<boolean[]> {
  if (keys.length === 1) {
    const { Item } = await db.send(
      new GetCommand({ TableName: tableName, Key: keys[0], ProjectionExpression: 'PK' }),
    );
    return [Item !== undefined];
  }
  return (await getItems([...keys], { consistent: false })).map((item) => item !== undefined);
}

/**
 * Put a new item of a campaign (`attribute_not_exists`) beside a read of the campaign, and take
 * it back if the campaign is gone: one write and one read where a transaction with the campaign's
 * check bills 2 WRU per KB for each. Should the take-back not happen (a crash), the stream's
 * readers still write nothing for a campaign that is gone (their transactions check it), and the
 * purge removes the item. 'exists': an item was at that key already (a retried write).
 */
export async function putForLiveCampaign(
  tenant: string,
  campaignId: string,
  item: { PK: string; SK: string },
): Promise<'written' | 'exists' | 'campaign_gone'> {
  return (await putBesideCampaign(tenant, campaignId, item)).outcome;
}

/** `putForLiveCampaign`, also answering the campaign's click settings (none when it is gone). */
export async function putBesideCampaign(
  tenant: string,
  campaignId: string,
  item: { PK: string; SK: string },
): Promise<{ outcome: 'written' | 'exists' | 'campaign_gone'; campaign?: ClickSettings }> {
  const put = db
    .send(
      new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(PK)' }),
    )
    .then(
      () => 'written' as const,
      (err) => {
        if (err instanceof ConditionalCheckFailedException) return 'exists' as const;
        throw err;
      },
    );
  const [campaign, outcome] = await Promise.all([campaignClickSettings(tenant, campaignId), put]);
  if (campaign) return { outcome, campaign };
  if (outcome === 'written') {
    await db.send(new DeleteCommand({ TableName: tableName, Key: { PK: item.PK, SK: item.SK } }));
  }
  return { outcome: 'campaign_gone' };
}

/**
 * A transaction item that cancels the transaction unless the campaign still exists: every write
 * of a campaign's records carries it, so nothing is written for a deleted campaign.
 */
export function campaignStillExists(tenant: string, campaignId: string) {
  return {
    ConditionCheck: {
      TableName: tableName,
      Key: campaignKey(tenant, campaignId),
      ConditionExpression: 'attribute_exists(PK)',
    },
  };
}

/** One DeleteItem; the campaign's links and records are purged in the background. */
export async function deleteCampaign(tenant: string, id: string): Promise<void> {
  try {
    await db.send(
      new DeleteCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        ConditionExpression: 'attribute_exists(PK)',
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw campaignNotFound(id);
    throw err;
  }
}

export const webhookUrlNotSet = () =>
  new ApiError(
    'webhook_url_not_set',
    'The campaign has no webhook_url: set one with PATCH /api/v1/campaign first.',
  );

/**
 * A new signing secret (one conditional UpdateItem): the current one becomes the previous secret,
 * which deliveries are also signed with for 24 h. A campaign that never had a webhook URL has no
 * secret to rotate (409); the old item, returned on the failed condition, tells the two cases apart.
 */
export async function rotateWebhookSecret(
  tenant: string,
  id: string,
  idempotency?: IdempotentRequest,
  now = new Date(),
): Promise<Campaign> {
  if (idempotency) return rotateWithKey(tenant, id, idempotency, now);
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: campaignKey(tenant, id),
        UpdateExpression:
          'SET webhook_previous_secret = webhook_secret, webhook_previous_secret_expires_at = :until, webhook_secret = :secret',
        ConditionExpression: 'attribute_exists(PK) AND attribute_type(webhook_secret, :string)',
        ExpressionAttributeValues: {
          ':until': new Date(now.getTime() + PREVIOUS_SECRET_SECONDS * 1000).toISOString(),
          ':secret': newWebhookSecret(),
          ':string': 'S',
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return campaignFromItem(Attributes ?? {});
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) {
      if (err.Item) throw webhookUrlNotSet();
      throw campaignNotFound(id);
    }
    throw err;
  }
}

/**
 * The rotation with an `Idempotency-Key`: its answer is stored in the rotation's own transaction,
 * so a retry after a lost answer replays it instead of rotating again (which would drop the
 * secret the receiver still uses). The answer is the campaign, so it is read first: two calls.
 */
async function rotateWithKey(
  tenant: string,
  id: string,
  idempotency: IdempotentRequest,
  now: Date,
): Promise<Campaign> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: campaignKey(tenant, id), ConsistentRead: true }),
  );
  if (!Item) throw campaignNotFound(id);
  const old = Item.webhook_secret;
  if (typeof old !== 'string') throw webhookUrlNotSet();
  const secret = newWebhookSecret();
  const until = new Date(now.getTime() + PREVIOUS_SECRET_SECONDS * 1000).toISOString();
  const campaign = campaignFromItem({ ...Item, webhook_secret: secret });
  const result = await transactWrite(
    [
      {
        Update: {
          TableName: tableName,
          Key: campaignKey(tenant, id),
          UpdateExpression:
            'SET webhook_previous_secret = webhook_secret, webhook_previous_secret_expires_at = :until, webhook_secret = :secret',
          // Nothing changed the secret since the read: otherwise the answer would not be the stored item.
          ConditionExpression: 'webhook_secret = :old',
          ExpressionAttributeValues: { ':until': until, ':secret': secret, ':old': old },
        },
      },
    ],
    rememberAnswer(idempotency, 200, campaign),
  );
  if (!result.ok) throw campaignNotFound(id);
  return campaign;
}
