/**
 * The redirect's hot-link cache (lib/db/hot-links.ts), with real requests: a code this process
 * serves often is not read (link, campaign) on every visit, an ordinary one is; a campaign this
 * process serves often over many links has its existence read about once a second; an ordinary
 * link of a deleted campaign answers 404 at once after the DELETE's 204, a hot one within a second.
 *
 * The visit handler runs in this test's process behind an in-process gateway (the local stack's,
 * lib/local/gateway.ts), its DynamoDB calls through the call counter (lib/local/dynamodb-counter.ts)
 * in front of the run's DynamoDB Local, which tells every item each call read. The campaigns and
 * links are made, and deleted, through the run's stack, as a customer would.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DynamoCounter, ItemAccesses } from '../../lib/local/dynamodb-counter.ts';
import { mapLimit } from '../../tools/wait.ts';
import { api, TENANT_A } from '../support/api.ts';
import { BROWSER_UA, createCampaign, createLink } from '../support/records.ts';
import { configureInProcessHandlers } from '../support/table.ts';

// The handler's client is made from DYNAMODB_ENDPOINT when its module loads: the counter goes in
// front first, and everything from lib/ and functions/ is imported after.
configureInProcessHandlers();
const { startDynamoCounter } = await import('../../lib/local/dynamodb-counter.ts');
const counter: DynamoCounter = await startDynamoCounter(process.env.DYNAMODB_ENDPOINT as string);
process.env.DYNAMODB_ENDPOINT = counter.endpoint;
const { createGateway } = await import('../../lib/local/gateway.ts');
const { routes } = await import('../../lib/routes.ts');
const { linkKey } = await import('../../lib/db/entities/link.ts');
const { campaignKey } = await import('../../lib/db/entities/campaign.ts');
const { HOT_LINK_CACHE_MS, HOT_LINK_VISITS_PER_SECOND } = await import('../../lib/db/hot-links.ts');

let server: Server;
let base: string;
let visitors = 0;

beforeAll(async () => {
  const visitRoute = routes.filter((r) => r.name === 'Visit');
  const { handler } = await import('../../functions/http/visit.ts');
  server = createGateway({
    routeTable: visitRoute,
    throttles: false,
    loadHandler: async () => handler as never,
    fallback: async () => ({ statusCode: 404 }),
    authorizer: async () => ({ isAuthorized: false }),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server?.close(() => resolve());
    server?.closeAllConnections();
  });
  await counter.stop();
});

/** A person's first visit (a user agent of its own: no earlier visit to check), with when it was sent. */
async function visit(code: string): Promise<{ status: number; sentAt: number }> {
  const sentAt = Date.now();
  const res = await fetch(`${base}/r/${code}`, {
    redirect: 'manual',
    headers: { 'user-agent': `${BROWSER_UA} hot-${visitors++}` },
  });
  await res.arrayBuffer();
  return { status: res.status, sentAt };
}

/** `n` simultaneous visits, and how often they read the link's and the campaign's items. */
async function burst(code: string, campaignId: string, n: number) {
  counter.track();
  const answers = await Promise.all(Array.from({ length: n }, () => visit(code)));
  const accessed = counter.tracked();
  const readsOf = (key: { PK: string; SK: string }) =>
    getItemReads(accessed, (a) => a.pk === key.PK && a.sk === key.SK);
  return {
    answers,
    linkReads: readsOf(linkKey(code)),
    campaignReads: readsOf(campaignKey(TENANT_A.tenant, campaignId)),
  };
}

/** The GetItem reads among the tracked accesses of the items that `match`. */
const getItemReads = (accessed: readonly ItemAccesses[], match: (a: ItemAccesses) => boolean) =>
  accessed
    .filter(match)
    .flatMap((a) => Object.entries(a.counts))
    .filter(([access]) => access.startsWith('GetItem'))
    .reduce((sum, [, count]) => sum + count, 0);

/**
 * Bursts of visits until one is served from the cache entirely (no link or campaign read): the
 * code is hot and cached. A burst is as many visits as make a code hot, so every burst keeps it hot.
 */
async function makeHot(code: string, campaignId: string) {
  const bursts: Array<{ linkReads: number; campaignReads: number }> = [];
  for (let i = 0; i < 20; i++) {
    const b = await burst(code, campaignId, HOT_LINK_VISITS_PER_SECOND + 5);
    expect(b.answers.map((a) => a.status)).toEqual(b.answers.map(() => 302));
    bursts.push({ linkReads: b.linkReads, campaignReads: b.campaignReads });
    if (i > 0 && b.linkReads === 0 && b.campaignReads === 0) return bursts;
  }
  throw new Error(`no burst was served from the cache: ${JSON.stringify(bursts)}`);
}

describe('the hot-link cache of GET /r/{code}', () => {
  it('an ordinary link is read, link and campaign, on every visit', async () => {
    const campaign = await createCampaign({ name: 'cold link' });
    const link = await createLink(campaign.id);
    for (let i = 0; i < 5; i++) {
      const b = await burst(link.referral_code, campaign.id, 1);
      expect(b.answers[0]?.status).toBe(302);
      expect([b.linkReads, b.campaignReads]).toEqual([1, 1]);
    }
  });

  it('a hot link is not: whole bursts of its visits read neither', async () => {
    const campaign = await createCampaign({ name: 'hot link' });
    const link = await createLink(campaign.id);
    const bursts = await makeHot(link.referral_code, campaign.id);
    // The first burst made it hot: its visits up to the one that did read both.
    expect(bursts[0]?.linkReads).toBeGreaterThanOrEqual(HOT_LINK_VISITS_PER_SECOND);
    expect(bursts[0]?.campaignReads).toBeGreaterThanOrEqual(HOT_LINK_VISITS_PER_SECOND);
  });

  it("a campaign hot over many links: each link is read, the campaign's existence about once a second", async () => {
    const campaign = await createCampaign({ name: 'hot campaign, cold links' });
    const links = await Promise.all(Array.from({ length: 40 }, () => createLink(campaign.id)));
    const key = campaignKey(TENANT_A.tenant, campaign.id);
    // Each round visits every link 3 times, 8 visits in flight (as 8 containers would; here they
    // share one cache): no link is hot, the campaign is. Its existence is read again when its
    // entry expires, by the visits then in flight: at most 8 per second of the round, and one
    // more second for the round's start. On a quiet machine a round takes about a second; the
    // bound follows the measured time so that a busy machine cannot fail it.
    const rounds: Array<{ ms: number; linkReads: number; campaignReads: number; bound: number }> = [];
    for (let round = 0; round < 10; round++) {
      counter.track();
      const started = Date.now();
      const order = [...links, ...links, ...links].sort(() => Math.random() - 0.5);
      const answers = await mapLimit(order, 8, (l) => visit(l.referral_code));
      const ms = Date.now() - started;
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 302));
      const accessed = counter.tracked();
      rounds.push({
        ms,
        linkReads: getItemReads(accessed, (a) => a.pk.startsWith('LINK#')),
        campaignReads: getItemReads(accessed, (a) => a.pk === key.PK && a.sk === key.SK),
        bound: 8 * (Math.ceil(ms / HOT_LINK_CACHE_MS) + 1),
      });
      expect(rounds.at(-1)!.linkReads).toBe(order.length);
      // The first round makes the campaign hot; a later one shows what hot costs.
      if (round > 0 && rounds.at(-1)!.campaignReads <= rounds.at(-1)!.bound) break;
    }
    const last = rounds.at(-1)!;
    expect(last.campaignReads, JSON.stringify(rounds)).toBeLessThanOrEqual(last.bound);
    expect(last.campaignReads, JSON.stringify(rounds)).toBeLessThan(last.linkReads);
  }, 120_000);

  it("an ordinary link of a deleted campaign answers 404 at once after the DELETE's 204", async () => {
    const campaign = await createCampaign({ name: 'cold link, deleted' });
    const link = await createLink(campaign.id);
    for (let i = 0; i < 3; i++) expect((await visit(link.referral_code)).status).toBe(302);
    expect((await api('DELETE', `/api/v1/campaign?id=${campaign.id}`)).status).toBe(204);
    expect((await visit(link.referral_code)).status).toBe(404);
  });

  it("a hot link of a deleted campaign answers 404 to every visit sent a second after the DELETE's 204", async () => {
    const campaign = await createCampaign({ name: 'hot link, deleted' });
    const link = await createLink(campaign.id);
    await makeHot(link.referral_code, campaign.id);
    const deleted = await api('DELETE', `/api/v1/campaign?id=${campaign.id}`);
    expect(deleted.status).toBe(204);
    // Keeps it hot: visits side by side until half a second past the bound.
    const answers: Array<{ status: number; sentAt: number }> = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < deleted.at + HOT_LINK_CACHE_MS + 500)
          answers.push(await visit(link.referral_code));
      }),
    );
    const late = answers.filter((a) => a.sentAt >= deleted.at + HOT_LINK_CACHE_MS);
    expect(late.length).toBeGreaterThan(0);
    expect(late.filter((a) => a.status !== 404)).toEqual([]);
    expect(answers.filter((a) => a.status !== 302 && a.status !== 404)).toEqual([]);
  });
});
