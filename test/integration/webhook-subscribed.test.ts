/**
 * The stream consumer puts an event on the webhook queue only when its campaign's webhook would
 * send it (`lib/webhooks/subscribed.ts`): a URL, enabled, subscribed to the type. Campaigns are
 * made through the API (a disabled webhook by writing its status, as the delivery does after 3 days
 * of failures); the records are stream INSERTs of event images of those campaigns, and the check
 * runs in process against DynamoDB Local. The one stub: a campaign read that fails, to show that
 * every event then goes on the queue.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { campaignKey } from '../../lib/db/entities/campaign.ts';
import { api, TENANT_A } from '../support/api.ts';
import { createCampaign } from '../support/records.ts';
import { configureInProcessHandlers, table } from '../support/table.ts';

configureInProcessHandlers();
afterEach(() => vi.restoreAllMocks());

const HOOK = 'http://127.0.0.1:9/hook';

async function campaignWith(body: Record<string, unknown> | null, name: string) {
  const campaign = await createCampaign({ name });
  if (body) expect((await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, { body })).status).toBe(200);
  return campaign.id as string;
}

let sequence = 0;
const recordOf = (
  campaignId: string,
  type: 'action.created' | 'referred_user.created',
  redelivery?: string,
) => ({
  eventName: 'INSERT',
  dynamodb: {
    SequenceNumber: String(++sequence),
    NewImage: marshall({
      PK: `T#${TENANT_A.tenant}#C#${campaignId}`,
      SK: `X#${sequence}`,
      event_id: `evt_${type === 'action.created' ? 'action' : 'referred_user'}_${sequence}`,
      event_type: type,
      event_time: new Date().toISOString(),
      event_json: '{}',
      tenant: TENANT_A.tenant,
      campaign_id: campaignId,
      ...(redelivery ? { redelivery } : {}),
    }),
  },
});

describe('events on the webhook queue', () => {
  it("only those of campaigns whose webhook sends them: a URL, enabled, subscribed to the event's type", async () => {
    const { recordsToSend } = await import('../../lib/webhooks/subscribed.ts');
    const none = await campaignWith(null, 'no webhook');
    const all = await campaignWith({ webhook_url: HOOK }, 'every event');
    const signups = await campaignWith(
      { webhook_url: HOOK, webhook_events: ['referred_user.created'] },
      'signups only',
    );
    const disabled = await campaignWith({ webhook_url: HOOK }, 'disabled');
    const { db, name } = table();
    await db.send(
      new UpdateCommand({
        TableName: name,
        Key: campaignKey(TENANT_A.tenant, disabled),
        UpdateExpression: 'SET webhook_status = :d, webhook_disabled_reason = :r',
        ExpressionAttributeValues: { ':d': 'disabled', ':r': 'failing' },
      }),
    );
    const deleted = await campaignWith({ webhook_url: HOOK }, 'deleted');
    expect((await api('DELETE', `/api/v1/campaign?id=${deleted}`)).status).toBe(204);

    const records = {
      none: [recordOf(none, 'action.created'), recordOf(none, 'referred_user.created')],
      all: [
        recordOf(all, 'action.created'),
        recordOf(all, 'referred_user.created'),
        recordOf(all, 'action.created', 'r1'),
      ],
      signups: [recordOf(signups, 'action.created'), recordOf(signups, 'referred_user.created')],
      disabled: [recordOf(disabled, 'action.created')],
      deleted: [recordOf(deleted, 'action.created')],
      // Not an event (a bot visit, a link MODIFY): the queue's own filter skips it, this check keeps it.
      other: [
        { eventName: 'INSERT', dynamodb: { SequenceNumber: '0', NewImage: marshall({ PK: 'x', SK: 'y' }) } },
      ],
    };
    const sent = await recordsToSend(Object.values(records).flat());
    expect(sent).toEqual([...records.all, records.signups[1], ...records.other]);
  });

  it('every event, when the campaigns cannot be read: the check saves work and never drops an event', async () => {
    const { recordsToSend } = await import('../../lib/webhooks/subscribed.ts');
    const { db } = await import('../../lib/db/table/client.ts');
    const none = await campaignWith(null, 'no webhook, unread');
    const records = [recordOf(none, 'action.created'), recordOf(none, 'referred_user.created')];
    expect(await recordsToSend(records)).toEqual([]);
    vi.spyOn(db, 'send').mockRejectedValue(new Error('ProvisionedThroughputExceededException'));
    expect(await recordsToSend(records)).toEqual(records);
  });
});
