/**
 * The failure clock of a campaign's webhook URL and the automatic disable (contract, "Webhook
 * operations": a URL that has failed every attempt for 3 days is disabled).
 *
 * On the campaign item: `webhook_failing_url` and `webhook_failing_since`, the time of the first
 * failed attempt since the URL's last success. Delivery reads them with the URL (one GetItem it
 * makes anyway) and writes only when the outcome changes something: the first failure starts the
 * clock, the first success clears it, and a failure when the clock is old enough disables the
 * webhook. Each write is one conditional UpdateItem that names the URL, so a changed URL, a
 * deleted campaign or concurrent attempts make it a no-op.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { campaignKey } from '../db/entities/campaign.ts';
import { db, tableName } from '../db/table/client.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { BusinessMetric, countEvent } from '../observability/metrics.ts';
import type { WebhookTarget } from './deliver.ts';

const logger = rootLogger.createChild();

/** The reason a disabled campaign carries. */
export function disabledReason(url: string, since: string, afterSeconds: number): string {
  const days = afterSeconds / 86_400;
  const span = days >= 1 ? `${Number(days.toFixed(1))} days` : `${afterSeconds} seconds`;
  return `Every delivery attempt to ${url} failed for ${span} (since ${since}). Fix the endpoint, then PATCH webhook_status to "enabled".`;
}

export function failureTracker(disableAfterSeconds: number) {
  return async (tenant: string, campaignId: string, target: WebhookTarget, failed: boolean, now: Date) => {
    const key = campaignKey(tenant, campaignId);
    const since = target.failingSince;
    let update: ConstructorParameters<typeof UpdateCommand>[0];
    let disabling = false;
    if (!failed) {
      if (since === undefined) return;
      update = {
        TableName: tableName,
        Key: key,
        UpdateExpression: 'REMOVE webhook_failing_url, webhook_failing_since',
        ConditionExpression: 'webhook_failing_url = :url',
        ExpressionAttributeValues: { ':url': target.url },
      };
    } else if (since === undefined) {
      update = {
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET webhook_failing_url = :url, webhook_failing_since = :now',
        ConditionExpression:
          'webhook_url = :url AND (attribute_not_exists(webhook_failing_url) OR webhook_failing_url <> :url)',
        ExpressionAttributeValues: { ':url': target.url, ':now': now.toISOString() },
      };
    } else if (now.getTime() - Date.parse(since) >= disableAfterSeconds * 1000 && !target.disabled) {
      disabling = true;
      update = {
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET webhook_status = :disabled, webhook_disabled_reason = :reason',
        ConditionExpression:
          'webhook_url = :url AND webhook_failing_since = :since AND attribute_not_exists(webhook_status)',
        ExpressionAttributeValues: {
          ':url': target.url,
          ':since': since,
          ':disabled': 'disabled',
          ':reason': disabledReason(target.url, since, disableAfterSeconds),
        },
      };
    } else {
      return;
    }
    try {
      await db.send(new UpdateCommand(update));
      if (disabling) {
        logger.warn('webhook disabled: every attempt failed', {
          campaign_id: campaignId,
          failing_since: since,
        });
        countEvent(BusinessMetric.WebhookEndpointsDisabled);
      }
    } catch (err) {
      if (
        !(
          err instanceof ConditionalCheckFailedException ||
          (err as Error).name === 'ConditionalCheckFailedException'
        )
      ) {
        throw err;
      }
    }
  };
}
