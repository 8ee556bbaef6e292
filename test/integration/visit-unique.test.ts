/**
 * Unique visits count only visits that were written (`isUniqueVisit` of lib/db/visits.ts): a visit
 * whose request died between its visitor marker and its visit item does not make the visitor's
 * next visit "not unique"; a visit still on its way (a double click) is waited for; a visit found
 * missing is made lost, and can then no longer be written; a code issued again after its
 * campaign's purge starts fresh. The crash itself, with a real process killed between the two
 * writes, is test/faults/visit-crash.test.ts.
 *
 * The lost and in-flight visits are made by writing the marker as such a request leaves it: a
 * request that dies or stalls at that very point cannot be produced on the run's shared stack.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../tools/wait.ts';
import { api, rawRequest, TENANT_A } from '../support/api.ts';
import { BROWSER_UA, createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { configureInProcessHandlers, linkItem, table, visitItems } from '../support/table.ts';

// lib/ reads its configuration when it loads: everything from it is imported after this.
configureInProcessHandlers();
const entities = await import('../../lib/db/entities/visit.ts');
const { findLinkByCode } = await import('../../lib/db/links.ts');
const { recordVisit } = await import('../../lib/db/visits.ts');
const { linkKey } = await import('../../lib/db/entities/link.ts');
const { formatTimestamp } = await import('../../lib/domain/time.ts');
const { DeadlineExceededError } = await import('../../lib/aws/deadline.ts');

/** The run's gateway takes the source address from the socket: every test request is this one. */
const SOURCE_IP = '127.0.0.1';

let campaignId: string;
let run = 0;
/** A visitor of its own per test: a user agent no other visit sends. */
const newVisitor = () => `${BROWSER_UA} unique-${Date.now().toString(36)}-${run++}`;
/** Far above any id the run gives, so never the id of a real visit. */
const unusedVisitId = () => 8_000_000_000_000_000 + Math.floor(Math.random() * 1e12);

const visit = (code: string, userAgent: string) =>
  rawRequest('GET', `/r/${code}`, { headers: { 'user-agent': userAgent } });

/** The link's visits as stored, by id: `unique` as the visit item says. */
async function storedVisits(code: string, campaign = campaignId) {
  return (await visitItems(TENANT_A.tenant, campaign))
    .filter((i) => i.link_code === code && i.type === 'action')
    .map((i) => ({ id: Number(String(i.SK).slice(2)), unique: (i.visit as { unique: boolean }).unique }))
    .sort((a, b) => a.id - b.id);
}

/** The visitor marker of `code` for `userAgent`, as the visit handler keys it. */
async function markerKey(code: string, userAgent: string) {
  const day = new Date().toISOString().slice(0, 10);
  const { db, name } = table();
  const { Item } = await db.send(
    new GetCommand({ TableName: name, Key: entities.visitorKeyKey(day), ConsistentRead: true }),
  );
  if (typeof Item?.key !== 'string') throw new Error(`no visitor key for ${day}`);
  return entities.visitorMarkerKey(code, entities.visitorHash(Item.key, SOURCE_IP, userAgent));
}

/** Set the marker's visits (newest first) as a request that stopped after its marker leaves them. */
async function setMarker(code: string, userAgent: string, visits: Array<{ at: number; vid: number }>) {
  const { db, name } = table();
  await db.send(
    new UpdateCommand({
      TableName: name,
      Key: await markerKey(code, userAgent),
      UpdateExpression: 'SET v0 = :v0, v1 = :v1, v2 = :v2',
      ExpressionAttributeValues: {
        ':v0': visits[0] ?? null,
        ':v1': visits[1] ?? null,
        ':v2': visits[2] ?? null,
      },
    }),
  );
}

/**
 * The link as if created `ms` ago (a direct write: the API makes no older link): a visit counts
 * only visits marked since its link was created, and these tests mark visits of the last hour.
 * Done before the link's first visit, which would keep it as read for a second (hot-links.ts).
 */
async function backdate(code: string, ms = 60 * 60_000) {
  const { db, name } = table();
  await db.send(
    new UpdateCommand({
      TableName: name,
      Key: linkKey(code),
      UpdateExpression: 'SET created_at = :at',
      ExpressionAttributeValues: { ':at': formatTimestamp(new Date(Date.now() - ms)) },
    }),
  );
}

async function itemAt(campaign: string, vid: number) {
  const { db, name } = table();
  const { Item } = await db.send(
    new GetCommand({
      TableName: name,
      Key: entities.visitKey(TENANT_A.tenant, campaign, vid),
      ConsistentRead: true,
    }),
  );
  return Item;
}

beforeAll(async () => {
  campaignId = (await createCampaign({ name: 'unique visits' })).id;
});

describe('unique visits count written visits only', () => {
  it('a visit whose item was never written does not make the next one a repeat; it is made lost', async () => {
    const link = await createLink(campaignId);
    await backdate(link.referral_code);
    const ua = newVisitor();
    expect((await visit(link.referral_code, ua)).status).toBe(302);
    // That visit written, then one whose request died after its marker, ten minutes ago.
    const [first] = await storedVisits(link.referral_code);
    const lost = unusedVisitId();
    await setMarker(link.referral_code, ua, [{ at: Date.now() - 10 * 60_000, vid: lost }]);
    expect((await visit(link.referral_code, ua)).status).toBe(302);
    const visits = await storedVisits(link.referral_code);
    expect(visits).toEqual([first, { id: expect.any(Number), unique: true }]);
    expect((await itemAt(campaignId, lost))?.type).toBe(entities.LOST_VISIT_TYPE);
  });

  it('a lost visit does not hide a written one before it in the hour', async () => {
    const link = await createLink(campaignId);
    await backdate(link.referral_code);
    const ua = newVisitor();
    expect((await visit(link.referral_code, ua)).status).toBe(302);
    const [first] = await storedVisits(link.referral_code);
    const at = Date.now();
    await setMarker(link.referral_code, ua, [
      { at: at - 60_000, vid: unusedVisitId() },
      { at: at - 120_000, vid: first!.id },
    ]);
    expect((await visit(link.referral_code, ua)).status).toBe(302);
    expect((await storedVisits(link.referral_code)).map((v) => v.unique)).toEqual([true, false]);
  });

  it('a visit still on its way (a double click) is waited for, not made lost', async () => {
    const link = await createLink(campaignId);
    const ua = newVisitor();
    const slow = unusedVisitId();
    // The first click's marker is written; its visit item comes 300 ms later.
    await setMarker(link.referral_code, ua, [{ at: Date.now(), vid: slow }]);
    const started = Date.now();
    const second = visit(link.referral_code, ua);
    const item = await findLinkByCode(link.referral_code);
    if (!item) throw new Error('no link');
    await new Promise((r) => setTimeout(r, 300));
    const action = {
      id: slow,
      at: new Date().toISOString(),
      action_type: 'visit',
      metadata: {},
      referred_user: null,
    };
    await recordVisit(item, action, true);
    expect((await second).status).toBe(302);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    const visits = await storedVisits(link.referral_code);
    expect(visits).toHaveLength(2);
    expect(visits.find((v) => v.id === slow)).toEqual({ id: slow, unique: true });
    expect(visits.find((v) => v.id !== slow)).toEqual({ id: expect.any(Number), unique: false });
  });

  it('a visit made lost can no longer be written: its request gets a 503, never a late count', async () => {
    const link = await createLink(campaignId);
    await backdate(link.referral_code);
    const ua = newVisitor();
    const stalled = unusedVisitId();
    // Its marker 5.9 s ago: the next visit waits for it only a moment, then makes it lost.
    await setMarker(link.referral_code, ua, [{ at: Date.now() - 5_900, vid: stalled }]);
    expect((await visit(link.referral_code, ua)).status).toBe(302);
    expect((await itemAt(campaignId, stalled))?.type).toBe(entities.LOST_VISIT_TYPE);
    const item = await findLinkByCode(link.referral_code);
    if (!item) throw new Error('no link');
    const action = {
      id: stalled,
      at: new Date().toISOString(),
      action_type: 'visit',
      metadata: {},
      referred_user: null,
    };
    await expect(recordVisit(item, action, true)).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(await storedVisits(link.referral_code)).toEqual([{ id: expect.any(Number), unique: true }]);
  });

  it('12 simultaneous identical visits: all redirected, exactly one unique', async () => {
    const link = await createLink(campaignId);
    const ua = newVisitor();
    const answers = await Promise.all(Array.from({ length: 12 }, () => visit(link.referral_code, ua)));
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(302));
    const visits = await storedVisits(link.referral_code);
    expect(visits).toHaveLength(12);
    expect(visits.filter((v) => v.unique)).toHaveLength(1);
  });

  it('a code issued again after its campaign was purged starts fresh for a visitor of the old link', async () => {
    const old = await createCampaign({ name: 'unique visits: deleted' });
    const code = `uniq_${Date.now().toString(36)}`;
    await createLink(old.id, { referral_code: code });
    const ua = newVisitor();
    const visitedAt = new Date();
    expect((await visit(code, ua)).status).toBe(302);
    const [oldVisit] = await storedVisits(code, old.id);
    expect((await api('DELETE', `/api/v1/campaign?id=${old.id}`)).status).toBe(204);
    const reserved = await waitUntil(async () => (await linkItem(code))?.type === 'code_reservation', 60_000);
    expect(reserved, `the purge left no reservation for ${code}`).toBe(true);
    // Times are kept to the second: a link made in the same second as the old visit cannot tell
    // it came before (the purge, woken at once by the delete, can be that quick).
    await waitUntil(async () => formatTimestamp(new Date()) !== formatTimestamp(visitedAt), 2_000);
    const fresh = await createCampaign({ name: 'unique visits: again' });
    const again: LinkBody = await createLink(fresh.id, { referral_code: code });
    expect(again.referral_code).toBe(code);
    expect((await visit(code, ua)).status).toBe(302);
    expect((await visit(code, ua)).status).toBe(302);
    expect((await storedVisits(code, fresh.id)).map((v) => v.unique)).toEqual([true, false]);
    // The old link's visit, marked before the new link was created, was not even a candidate:
    // neither read nor made lost in the new campaign (it used to be, after waiting for it).
    expect(oldVisit).toBeDefined();
    expect(await itemAt(fresh.id, oldVisit!.id)).toBeUndefined();
  }, 90_000);

  it('a visit marked before its link existed (a 404 of a code not yet issued) is no earlier visit', async () => {
    const code = `uniq_${Date.now().toString(36)}_n`;
    const ua = newVisitor();
    // The marker is written beside the link's read, so even a 404 leaves one.
    expect((await visit(code, ua)).status).toBe(404);
    const noticed = await table().db.send(
      new GetCommand({ TableName: table().name, Key: await markerKey(code, ua), ConsistentRead: true }),
    );
    const before = entities.markerBeforeOf(noticed.Item);
    const marked = 'visits' in before ? before.visits[0] : undefined;
    expect(marked).toBeDefined();
    // Issued in a later second than that visit.
    await waitUntil(async () => formatTimestamp(new Date()) !== formatTimestamp(new Date(marked!.at)), 2_000);
    await createLink(campaignId, { referral_code: code });
    expect((await visit(code, ua)).status).toBe(302);
    expect((await storedVisits(code)).map((v) => v.unique)).toEqual([true]);
    expect(await itemAt(campaignId, marked!.vid)).toBeUndefined();
  });
});
