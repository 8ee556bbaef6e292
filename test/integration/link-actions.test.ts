/**
 * Endpoint 5 records an action on its link's item; the table stream's consumer writes the action
 * item (event included). These tests replay such a stream record by hand, the way a redelivered
 * Lambda batch would, against DynamoDB Local: a replay writes nothing twice, a record whose
 * campaign is gone (and purged) writes nothing at all, and the link stops carrying the action once
 * its item exists.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { actionEventId } from '../../lib/domain/webhook-events.ts';
import { waitUntil } from '../../tools/wait.ts';
import { api, TENANT_A } from '../support/api.ts';
import {
  type ActionBody,
  BROWSER_UA,
  createCampaign,
  createLink,
  createReferredUser,
} from '../support/records.ts';
import { runStack } from '../support/run-stack.ts';
import {
  campaignItems,
  configureInProcessHandlers,
  eventDataOf,
  linkItem,
  settledActionItems,
} from '../support/table.ts';

type Materialize = typeof import('../../lib/db/actions.ts').materializeLinkAction;
type Consume = typeof import('../../functions/stream/enqueue-webhook-events.ts').handler;
let materialize: Materialize;
let consume: Consume;

beforeAll(async () => {
  configureInProcessHandlers();
  // The consumer needs a queue URL at load; these tests give it no event to send.
  process.env.WEBHOOK_QUEUE_URL = `${runStack().queueEndpoint}/000000000000/not-used`;
  materialize = (await import('../../lib/db/actions.ts')).materializeLinkAction;
  consume = (await import('../../functions/stream/enqueue-webhook-events.ts')).handler;
});

const userAction = (campaignId: string, referredUserId: string, metadata?: Record<string, unknown>) =>
  api<ActionBody>('POST', '/api/v1/action/referred_user', {
    body: { campaign_id: campaignId, referred_user_id: referredUserId, action_type: 'purchase', metadata },
  });

/**
 * The link's image as the action's own write left it: the stored link with that action as
 * `last_action` (the consumer may have taken it off the link by the time the test reads it).
 */
async function imageOf(code: string, action: ActionBody): Promise<Record<string, unknown>> {
  const [date = '', time = ''] = action.created_at.split('_');
  const recorded = {
    id: action.id,
    at: `${date}T${time.replace(/-/g, ':')}.000Z`,
    action_type: action.action_type,
    metadata: action.metadata,
    referred_user: action.referred_user && {
      id: action.referred_user.id,
      created_at: action.referred_user.created_at,
      referred_user_id: action.referred_user.referred_user_id,
    },
  };
  return { ...(await linkItem(code)), last_action: { id: action.id, json: JSON.stringify(recorded) } };
}

/** A stream record of a link image, as DynamoDB Streams delivers a MODIFY. */
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

  it('the action item matches the response; a big action then leaves the link, a small one at its next write, each fed once', async () => {
    const res = await userAction(campaignId, 'la-user', { plan: 'pro', note: 'x'.repeat(2_000) });
    expect(res.status, res.text).toBe(201);
    const items = await settledActionItems(TENANT_A.tenant, campaignId, [code]);
    const item = items.find((i) => eventDataOf<ActionBody>(i).id === res.body.id);
    // The event's data is exactly what the API answered, counters included.
    expect(eventDataOf(item)).toEqual(res.body);
    expect(item).toMatchObject({
      event_type: 'action.created',
      event_id: actionEventId(res.body.id, campaignId),
    });
    // Big (2 KB of metadata): taken off the link once its item is written.
    const cleared = await waitUntil(async () => (await linkItem(code))?.last_action === undefined, 10_000);
    expect(cleared, 'last_action still on the link').toBe(true);

    // Small: left on the link (one write fewer), and the link's next write takes it off.
    const small = await userAction(campaignId, 'la-user', { plan: 'pro' });
    expect(small.status, small.text).toBe(201);
    await settledActionItems(TENANT_A.tenant, campaignId, [code]);
    await waitUntil(
      async () =>
        (await campaignItems(TENANT_A.tenant, campaignId, 'A#')).some(
          (i) => eventDataOf<ActionBody>(i).id === small.body.id,
        ),
      10_000,
    );
    expect(((await linkItem(code))?.last_action as { id?: number } | undefined)?.id).toBe(small.body.id);
    await api('GET', `/r/${code}`, { key: null, headers: { 'user-agent': BROWSER_UA } });
    const taken = await waitUntil(async () => (await linkItem(code))?.last_action === undefined, 10_000);
    expect(taken, 'the next write left last_action on the link').toBe(true);
    // Each action once in the feed, whatever wrote the link meanwhile.
    const feed = (await api('GET', `/api/v1/events/${campaignId}?limit=1000`)).body as Array<{ id: string }>;
    for (const id of [res.body.id, small.body.id])
      expect(feed.filter((e) => e.id === actionEventId(id, campaignId))).toHaveLength(1);
  });

  it('a replayed stream record writes nothing twice', async () => {
    const res = await userAction(campaignId, 'la-user', { odd: JSON.parse('{"__proto__":{"":[1e-200]}}') });
    const image = await imageOf(code, res.body);
    await settledActionItems(TENANT_A.tenant, campaignId, [code]);
    const before = await campaignItems(TENANT_A.tenant, campaignId, 'A#');
    expect(await materialize(image as never)).toBe('exists');
    // Through the consumer as Lambda would call it: no failure reported, nothing added.
    expect(await consume({ Records: [modifyRecord(image!)] } as never)).toEqual({ batchItemFailures: [] });
    expect(await campaignItems(TENANT_A.tenant, campaignId, 'A#')).toHaveLength(before.length);
  });

  it('a record of a deleted campaign writes no action item, even after the purge', async () => {
    const doomed = (await createCampaign({ name: 'doomed link actions' })).id;
    const doomedCode = (await createLink(doomed)).referral_code;
    await createReferredUser(doomedCode, 'doomed-user');
    const res = await userAction(doomed, 'doomed-user');
    expect(res.status).toBe(201);
    const image = await imageOf(doomedCode, res.body);
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
    expect(await consume({ Records: [modifyRecord(image!)] } as never)).toEqual({ batchItemFailures: [] });
    expect(await campaignItems(TENANT_A.tenant, doomed, '')).toEqual([]);
  }, 90_000);
});
