/**
 * Table stream -> which event records go on the webhook queue: those of campaigns whose webhook
 * would send them now (a URL, enabled, subscribed to the event's type). Apart from `stream.ts`
 * because it needs the table, like `feed.ts`.
 *
 * An event of a campaign without a webhook is in its feed and nowhere else: putting it on the
 * queue anyway cost an SQS send, receive and delete, a delivery invocation and a strongly
 * consistent read of the campaign per event, only for the delivery to drop it. Here one batch
 * reads each of its campaigns once (BatchGetItem). The delivery still reads the campaign when it
 * sends (the URL in force then is the one used; a campaign deleted or a URL cleared meanwhile gets
 * nothing). So an event is sent when its campaign has a webhook as the stream consumer takes it,
 * within about a second of the event; one that came before the URL was set is in the feed, and a
 * redelivery sends it. When the read fails every event goes on the queue, as before: the check
 * saves work and never loses an event.
 */

import { campaignKey, webhookOfItem } from '../db/entities/campaign.ts';
import { getItems } from '../db/table/batch.ts';
import { webhookSends } from '../domain/webhook-events.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { messageFromStreamRecord, type StreamRecordLike } from './stream.ts';

const logger = rootLogger.createChild();

/** Keys per BatchGetItem. */
const READ_BATCH = 100;

/** The records to put on the queue: every record but the events of campaigns that would not send them. */
export async function recordsToSend<R extends StreamRecordLike>(
  records: readonly R[],
): Promise<readonly R[]> {
  const keyOf = (m: { tenant: string; campaign_id: string }) => `${m.tenant}#${m.campaign_id}`;
  const events = records.map((record) => ({ record, message: messageFromStreamRecord(record) }));
  const campaigns = new Map<string, { tenant: string; campaignId: string }>();
  for (const { message } of events)
    if (message?.tenant && message.campaign_id)
      campaigns.set(keyOf(message), { tenant: message.tenant, campaignId: message.campaign_id });
  if (campaigns.size === 0) return records;
  const keys = [...campaigns];
  /** Each campaign's webhook as read now (undefined: none, or no campaign). */
  const targets = new Map<string, ReturnType<typeof webhookOfItem>>();
  try {
    for (let i = 0; i < keys.length; i += READ_BATCH) {
      const chunk = keys.slice(i, i + READ_BATCH);
      const items = await getItems(chunk.map(([, c]) => campaignKey(c.tenant, c.campaignId)));
      for (const [j, [key]] of chunk.entries()) targets.set(key, webhookOfItem(items[j]));
    }
  } catch (err) {
    logger.warn('campaign webhooks not read: every event goes on the queue', {
      error: (err as Error).message,
    });
    return records;
  }
  return events
    .filter(({ message }) => {
      if (!message?.tenant || !message.campaign_id) return true;
      const target = targets.get(keyOf(message));
      const send = target !== undefined && webhookSends(target, message.event_type);
      if (!send)
        logger.debug('event not queued: its campaign has no webhook that sends it', {
          event_id: message.event_id,
        });
      return send;
    })
    .map(({ record }) => record);
}
