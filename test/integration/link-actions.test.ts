/**
 * Endpoint 5 records an action on its link's item; the table stream's consumer writes the action
 * item (event included). These tests replay such a stream record by hand, the way a redelivered
 * Lambda batch would, against DynamoDB Local: a replay writes nothing twice, a record whose
 * campaign is gone (and purged) writes nothing at all, and every other link write clears the
 * action it carried so that the stream shows it only once.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type ActionBody,
  api,
  campaignItems,
  configureInProcessHandlers,
  createCampaign,
  createLink,
  createReferredUser,
  linkItem,
  settledActionItems,
  TENANT_A,
  waitUntil,
} from './helpers.ts';

type Materialize = typeof import('../../lib/db/actions.ts').materializeLinkAction;
type Consume = typeof import('../../functions/queue/enqueue-webhook-events.ts').handler;
let materialize: Materialize;
let consume: Consume;

beforeAll(async () => {
  configureInProcessHandlers();
  // The consumer needs a queue URL at load; these tests give it no event to send.
  process.env.WEBHOOK_QUEUE_URL = `${inject('queueEndpoint')}/000000000000/not-used`;
  materialize = (await import('../../lib/db/actions.ts')).materializeLinkAction;
  consume = (await import('../../functions/queue/enqueue-webhook-events.ts')).handler;
});

const userAction = (campaignId: string, referredUserId: string, metadata?: Record<string, unknown>) =>
  api<ActionBody>('POST', '/api/v1/action/referred_user', {
    body: { campaign_id: campaignId, referred_user_id: referredUserId, action_type: 'purchase', metadata },
  });

/** A stream record of the link's current image, as DynamoDB Streams delivers a MODIFY. */
const modifyRecord = (image: Record<string, unknown>, sequence = '1') => ({
  eventName: 'MODIFY' as const,
  dynamodb: { NewImage: marshall(image, { removeUndefinedValues: true }), SequenceNumber: sequence },
});

describe('actions recorded on their link (endpoint 5)', () => {
  let campaignId: string;
  let code: string;

  beforeAll(async () => {
    campaignId = (await createCampaign({ name: 'link actions' })).id;
    code = (await createLink(campaignId, { referrer_id: 'la-referrer' })).referral_code;
    await createReferredUser(code, 'la-user');
  });

  it('the link item carries the action its write recorded, and the action item matches the response', async () => {
    const res = await userAction(campaignId, 'la-user', { plan: 'pro' });
    expect(res.status, res.text).toBe(201);
    const stored = await linkItem(code);
    expect(stored?.last_action).toMatchObject({
      id: res.body.id,
      action_type: 'purchase',
      metadata: { plan: 'pro' },
      referred_user: { referred_user_id: 'la-user' },
    });
    const items = await settledActionItems(TENANT_A.tenant, campaignId, [code]);
    const item = items.find((i) => (i.event_data as ActionBody).id === res.body.id);
    // The event's data is exactly what the API answered, counters included.
    expect(item?.event_data).toEqual(res.body);
    expect(item).toMatchObject({ event_type: 'action.created', event_id: `evt_action_${res.body.id}` });
  });

  it('a replayed stream record writes nothing twice', async () => {
    await userAction(campaignId, 'la-user');
    const image = await linkItem(code);
    const before = await settledActionItems(TENANT_A.tenant, campaignId, [code]);
    expect(await materialize(image as never)).toBe('exists');
    // Through the consumer as Lambda would call it: no failure reported, nothing added.
    expect(await consume({ Records: [modifyRecord(image!)] } as never)).toEqual({
      batchItemFailures: [],
    });
    expect(await campaignItems(TENANT_A.tenant, campaignId, 'A#')).toHaveLength(before.length);
  });

  it('every other write of the link clears the action, so the stream shows it once', async () => {
    await userAction(campaignId, 'la-user');
    expect((await linkItem(code))?.last_action).toBeDefined();
    const visit = await fetch(`${inject('baseUrl')}/r/${code}`, { redirect: 'manual' });
    expect(visit.status).toBe(302);
    expect((await linkItem(code))?.last_action).toBeUndefined();
    await userAction(campaignId, 'la-user');
    await createReferredUser(code, 'la-user-2');
    expect((await linkItem(code))?.last_action).toBeUndefined();
    await settledActionItems(TENANT_A.tenant, campaignId, [code]);
  });

  it('a record of a deleted campaign writes no action item, even after the purge', async () => {
    const doomed = (await createCampaign({ name: 'doomed link actions' })).id;
    const doomedCode = (await createLink(doomed)).referral_code;
    await createReferredUser(doomedCode, 'doomed-user');
    expect((await userAction(doomed, 'doomed-user')).status).toBe(201);
    const image = await linkItem(doomedCode);
    await settledActionItems(TENANT_A.tenant, doomed, [doomedCode]);
    expect((await api('DELETE', `/api/v1/campaign?id=${doomed}`)).status).toBe(204);
    const purged = await waitUntil(
      async () =>
        (await campaignItems(TENANT_A.tenant, doomed, '')).length === 0 &&
        (await linkItem(doomedCode))?.type === 'code_reservation',
      60_000,
    );
    expect(purged, 'purge did not finish').toBe(true);
    // The record arrives late (a retried batch): the campaign is gone, so nothing is written.
    expect(await materialize(image as never)).toBe('campaign_gone');
    expect(await consume({ Records: [modifyRecord(image!)] } as never)).toEqual({
      batchItemFailures: [],
    });
    expect(await campaignItems(TENANT_A.tenant, doomed, '')).toEqual([]);
  }, 90_000);
});
