/**
 * Deleting a campaign: the 204 hides everything at once, and the background purge (table stream
 * -> purge queue -> purge function, as in AWS) leaves no item of the campaign in the table but its
 * codes' reservations, while another campaign's items stay untouched.
 *
 * On a stack of its own: its 5,000 links and their purge would fill the shared stack's stream and
 * its purge queue for the files running beside it, and its full-table scans would read every item
 * they write.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { newLinkItem } from '../../lib/db/entities/link.ts';
import { eventually, mapLimit, waitUntil } from '../../tools/wait.ts';
import { api, TENANT_A, TENANT_B } from '../support/api.ts';
import { expectError } from '../support/assertions.ts';
import { stackOfItsOwn } from '../support/own-stack.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import {
  BROWSER_UA,
  createCampaign,
  createCampaignWithWebhook,
  createLink,
  createReferredUser,
} from '../support/records.ts';
import { campaignItems, linkItem, putItems, settledActionItems, table } from '../support/table.ts';

stackOfItsOwn();
const receiver = receiversClosedAfterAll();

/**
 * Every item of a campaign, found by a full scan rather than by the keys the purge uses. A scan
 * reads the whole table (over 10,000 items here, in pages), so the waits poll it once a second
 * (`SCAN_POLL_MS`), not at the default tenth: DynamoDB Local's CPU goes to the purge.
 */
const SCAN_POLL_MS = 1_000;

async function itemsOf(campaignId: string): Promise<number> {
  const { db, name } = table();
  let count = 0;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new ScanCommand({
        TableName: name,
        FilterExpression: 'campaign_id = :c OR contains(PK, :c)',
        ExpressionAttributeValues: { ':c': campaignId },
        ExclusiveStartKey: start,
        ConsistentRead: true,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start);
  return count;
}

describe('campaign purge', () => {
  it('removes every item of a deleted campaign with 5,000 links and nothing of another campaign', async () => {
    const doomed = await createCampaign({ name: 'to purge' });
    const kept = await createCampaign({ name: 'to keep' });
    // A few links through the API; the rest written straight into the table in the exact shape
    // the API writes (same builder), which is what makes 5,000 affordable in the test's time.
    const links = await mapLimit(Array.from({ length: 20 }), 8, (_, i) =>
      createLink(doomed.id, { referrer_id: `referrer-${i % 5}` }),
    );
    const first = links[0]!;
    const bulk = Array.from({ length: 4980 }, (_, i) =>
      newLinkItem({
        tenant: TENANT_A.tenant,
        campaignId: doomed.id,
        campaignUrl: doomed.url,
        id: 9_000_000_000 + i,
        code: `PURGE-${doomed.id.slice(0, 8)}-${i}`,
        referrerId: `referrer-${i % 50}`,
        now: new Date(),
      }),
    );
    await putItems(bulk);
    expect((await api('GET', `/api/v1/campaign_referral_links/${doomed.id}?limit=1000`)).body).toHaveLength(
      1000,
    );
    await createReferredUser(first.referral_code, 'purged-user');
    await api('POST', '/api/v1/action/referred_user', {
      body: { campaign_id: doomed.id, referred_user_id: 'purged-user', action_type: 'purchase' },
    });
    // A browser's visit (an HTTP library's user agent is not counted).
    await api('GET', `/r/${first.referral_code}`, { key: null, headers: { 'user-agent': BROWSER_UA } });
    const keptLink = await createLink(kept.id, { referrer_id: 'referrer-1' });
    await createReferredUser(keptLink.referral_code, 'kept-user');

    // Endpoint 5's action item is written from the table stream: wait until it is there.
    await settledActionItems(TENANT_A.tenant, doomed.id, [first.referral_code]);
    // Campaign, links, referred user, two actions, and the three events (the signup, the purchase,
    // the visit) in the campaign's feed (feed items of one or more events each, as the stream
    // batched them), the signup's lookup item (an action's event is found through its action item)
    // and the feed's counter: written from the stream too, like the analytics: 4 series items
    // (campaign, its actions by type, link and referrer: one item per day, hour by hour), the
    // campaign's type registry, the referrer's totals and 8 ranking boards (by link and by
    // referrer, of visits, unique visits, signups and actions).
    await eventually('the three events in the feed', async () =>
      (await api('GET', `/api/v1/events/${doomed.id}`)).body.length === 3 ? true : undefined,
    );
    const feedItems = (await campaignItems(TENANT_A.tenant, doomed.id, 'EV#')).length;
    expect(feedItems).toBeGreaterThanOrEqual(1);
    const all = 1 + 5000 + 1 + 2 + feedItems + 1 + 1 + 4 + 1 + 1 + 8;
    expect(await waitUntil(async () => (await itemsOf(doomed.id)) === all, 30_000, SCAN_POLL_MS)).toBe(true);
    expect(await itemsOf(doomed.id)).toBe(all);
    const keptBefore = await itemsOf(kept.id);

    const started = Date.now();
    const del = await api('DELETE', `/api/v1/campaign?id=${doomed.id}`);
    expect(del.status).toBe(204);
    expect(Date.now() - started).toBeLessThan(2000);

    // Gone from every endpoint at once, before the purge has run.
    expect((await api('GET', `/r/${first.referral_code}`, { key: null })).status).toBe(404);
    expect((await api('GET', `/api/v1/referral_link?id=${first.id}`)).status).toBe(404);

    const purged = await waitUntil(async () => (await itemsOf(doomed.id)) === 0, 90_000, SCAN_POLL_MS);
    expect(purged, 'purge left items behind').toBe(true);
    expect(await itemsOf(kept.id)).toBe(keptBefore);
    expect((await api('GET', `/api/v1/referral_link?referral_code=${keptLink.referral_code}`)).status).toBe(
      200,
    );

    // Each link is now its code's reservation: the tenant that issued a code can use it again,
    // another tenant cannot.
    expect(await linkItem(bulk[4979]!.referral_code)).toMatchObject({ type: 'code_reservation' });
    const other = await createCampaign({ name: 'other tenant' }, TENANT_B.key);
    const takeover = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: other.id, referral_code: bulk[0]!.referral_code },
      key: TENANT_B.key,
    });
    expect(takeover.status).toBe(409);
    const reuse = await api('POST', '/api/v1/referral_link', {
      body: { campaign_id: kept.id, referral_code: bulk[0]!.referral_code },
    });
    expect(reuse.status).toBe(201);
  }, 180_000);

  it('takes everything the stream and the webhooks wrote for the campaign: visits, analytics, feed, delivery log', async () => {
    const rx = await receiver();
    const doomed = await createCampaignWithWebhook(`${rx.url}/hook`);
    const link = await createLink(doomed.id, { referrer_id: 'gone-referrer' });
    await api('GET', `/r/${link.referral_code}`, { key: null, headers: { 'user-agent': BROWSER_UA } });
    await api('HEAD', `/r/${link.referral_code}`, { key: null });
    await createReferredUser(link.referral_code, 'gone-user');
    expect((await api('POST', `/api/v1/campaign/webhook_test?id=${doomed.id}`)).status).toBe(200);
    // Two events delivered (the visit, the signup; a HEAD is no event) and the test, all logged;
    // the two events in the feed; the analytics counted.
    await rx.waitFor(3);
    await eventually('the log, the feed and the analytics', async () => {
      const [log, feed, series, top] = await Promise.all([
        api('GET', `/api/v1/webhook_deliveries/${doomed.id}`),
        api('GET', `/api/v1/events/${doomed.id}`),
        api('GET', `/api/v1/analytics/${doomed.id}`),
        api('GET', `/api/v1/analytics/${doomed.id}/top?metric=visits&by=referrer`),
      ]);
      const t = series.body.totals;
      return log.body.length === 3 &&
        feed.body.length === 2 &&
        t.visits === 1 &&
        t.bot_visits === 1 &&
        t.referred_users === 1 &&
        top.body[0]?.value === 1
        ? true
        : undefined;
    });
    expect(await itemsOf(doomed.id)).toBeGreaterThan(20);

    expect((await api('DELETE', `/api/v1/campaign?id=${doomed.id}`)).status).toBe(204);
    expectError(await api('GET', `/api/v1/analytics/${doomed.id}`), 404, 'campaign_not_found');
    expectError(await api('GET', `/api/v1/webhook_deliveries/${doomed.id}`), 404, 'campaign_not_found');
    const purged = await waitUntil(async () => (await itemsOf(doomed.id)) === 0, 60_000, SCAN_POLL_MS);
    expect(purged, 'purge left items behind').toBe(true);
  }, 90_000);
});
