/**
 * The rollups count each interaction exactly once whatever the stream hands the consumer again:
 * Lambda retries a batch from its first failed record (so with other boundaries), the local poller
 * re-reads from its checkpoint after a restart, and a consumer can die between two of its
 * transactions. The records are stream INSERTs of visit items built by the writers' own builder
 * (`newVisitItem`) for real links, and `applyRollups` runs in process against DynamoDB Local.
 *
 * The one stub: a consumer killed between two transactions of one batch, made by failing the
 * third TransactWriteItems call (no process kill lands reliably between two calls 5 ms apart).
 * test/local-stack/kill-restart.test.ts kills the whole stack under load for the same property.
 */
import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api } from '../support/api.ts';
import { killAtTransaction } from '../support/killed-transaction.ts';
import { createCampaign, createLink, type LinkBody } from '../support/records.ts';
import { configureInProcessHandlers, linkItem } from '../support/table.ts';
import { mapLimit } from '../support/wait.ts';

configureInProcessHandlers();

const LINKS = 30;
const VISITS = 300;

afterEach(() => vi.restoreAllMocks());

async function setUp() {
  const { linkFromItem } = await import('../../lib/db/entities/link.ts');
  const { newVisitItem } = await import('../../lib/db/entities/visit.ts');
  const campaign = await createCampaign({ name: 'rollup replay' });
  const links: LinkBody[] = await mapLimit(Array.from({ length: LINKS }), 6, (_, i) =>
    createLink(campaign.id, { referrer_id: `ref-${i % 10}` }),
  );
  const items = await Promise.all(links.map(async (l) => linkFromItem((await linkItem(l.referral_code))!)));
  const at = new Date().toISOString();
  const base = 10n ** 20n;
  // Visit n lands on link n mod LINKS; every third is a returning (not unique) visitor.
  const records = Array.from({ length: VISITS }, (_, n) => {
    const { item } = newVisitItem(
      items[n % LINKS]!,
      { id: 8_000_000_000_000_000 + n, at, action_type: 'visit', metadata: {}, referred_user: null },
      n % 3 !== 0,
    );
    return {
      eventName: 'INSERT',
      dynamodb: {
        NewImage: marshall(item, { removeUndefinedValues: true }),
        SequenceNumber: String(base + BigInt(n)),
      },
    };
  });
  const perLink = links.map(
    (_, i) => Array.from({ length: VISITS }, (_, n) => n).filter((n) => n % LINKS === i).length,
  );
  const unique = Array.from({ length: VISITS }, (_, n) => n).filter((n) => n % 3 !== 0).length;
  return { campaignId: campaign.id, links, records, perLink, unique, shard: `test-${randomUUID()}` };
}

async function expectCountedOnce(s: Awaited<ReturnType<typeof setUp>>) {
  const res = await api('GET', `/api/v1/analytics/${s.campaignId}`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.totals).toMatchObject({ visits: VISITS, unique_visits: s.unique, bot_visits: 0 });
  const clicks = await Promise.all(
    s.links.map(async (l) => Number((await linkItem(l.referral_code))?.total_clicks)),
  );
  expect(clicks).toEqual(s.perLink);
  const top = await api(
    'GET',
    `/api/v1/analytics/${s.campaignId}/top?by=referral_link&metric=visits&limit=100`,
  );
  expect(top.body).toHaveLength(LINKS);
  expect(top.body.reduce((sum: number, r: { value: number }) => sum + r.value, 0)).toBe(VISITS);
  const referrers = await api(
    'GET',
    `/api/v1/analytics/${s.campaignId}/top?by=referrer&metric=visits&limit=100`,
  );
  expect(referrers.body.map((r: { value: number }) => r.value)).toEqual(Array(10).fill(VISITS / 10));
}

describe('rollups: exactly once under replayed stream batches', () => {
  it('a batch handed again, whole, from a later record, or with other boundaries, counts once', async () => {
    const { applyRollups } = await import('../../lib/analytics/rollups.ts');
    const s = await setUp();
    // The batch spans several transactions (100 items each): a few hundred distinct items.
    expect(await applyRollups(s.records.slice(0, 120), s.shard)).toBe(120);
    expect(await applyRollups(s.records, s.shard)).toBe(VISITS - 120);
    expect(await applyRollups(s.records.slice(60), s.shard)).toBe(0);
    expect(await applyRollups(s.records, s.shard)).toBe(0);
    await expectCountedOnce(s);
  });

  it('a consumer that dies between two transactions of a batch: the batch again counts the rest once', async () => {
    const { applyRollups } = await import('../../lib/analytics/rollups.ts');
    const s = await setUp();
    const transactions = await killAtTransaction(3);
    await expect(applyRollups(s.records, s.shard)).rejects.toThrow('killed');
    expect(transactions()).toBe(3);
    vi.restoreAllMocks();
    const applied = await applyRollups(s.records, s.shard);
    expect(applied).toBeGreaterThan(0);
    expect(applied).toBeLessThan(VISITS);
    await expectCountedOnce(s);
  });

  it("actions by type: each day's map of types is created once and raised after, whatever the consumer believes", async () => {
    const { applyRollups, resetTypesMapBelief } = await import('../../lib/analytics/rollups.ts');
    const { newActionItem } = await import('../../lib/db/entities/action.ts');
    const { linkFromItem } = await import('../../lib/db/entities/link.ts');
    const { seriesKey } = await import('../../lib/db/entities/analytics.ts');
    const campaign = await createCampaign({ name: 'rollup types' });
    const link = await createLink(campaign.id, { referrer_id: 'ref-types' });
    let stored = linkFromItem((await linkItem(link.referral_code))!);
    const shard = `test-${randomUUID()}`;
    const base = 10n ** 20n;
    let n = 0;
    const actions = (types: string[]) =>
      types.map((action_type) => {
        const { item } = newActionItem(stored, {
          id: 9_000_000_000_000_000 + n,
          at: new Date().toISOString(),
          action_type,
          metadata: {},
          referred_user: null,
        });
        return {
          eventName: 'INSERT',
          dynamodb: {
            NewImage: marshall(item, { removeUndefinedValues: true }),
            SequenceNumber: String(base + BigInt(n++)),
          },
        };
      });
    const day = new Date().toISOString().slice(0, 10);
    const scopes = [
      { kind: 'campaign' as const },
      { kind: 'link' as const, linkId: link.id },
      { kind: 'referrer' as const, referrerId: 'ref-types' },
    ].map((scope) => seriesKey(stored.tenant, campaign.id, scope, day));

    // A new container creates the maps; the next batch raises them (its belief now right).
    resetTypesMapBelief();
    expect(await applyRollups(actions(['purchase', 'share', '__proto__']), shard)).toBe(3);
    expect(await applyRollups(actions(['purchase', 'sign up', 'constructor', '__proto__']), shard)).toBe(4);
    // A restarted container believes there is no map: the update fails, and is tried as a raise.
    resetTypesMapBelief();
    expect(await applyRollups(actions(['purchase']), shard)).toBe(1);
    // A container that believes in maps that are not there (another link's first action today):
    // those updates fail, and are tried as creations.
    const other = await createLink(campaign.id, { referrer_id: 'ref-types-2' });
    const otherStored = linkFromItem((await linkItem(other.referral_code))!);
    const otherKeys = [
      { kind: 'link' as const, linkId: other.id },
      { kind: 'referrer' as const, referrerId: 'ref-types-2' },
    ].map((scope) => seriesKey(stored.tenant, campaign.id, scope, day));
    resetTypesMapBelief([...scopes, ...otherKeys]);
    stored = otherStored;
    expect(await applyRollups(actions(['share']), shard)).toBe(1);

    // Types named like an object's own properties are types like any other (built from JSON: an
    // own `__proto__`).
    const expected = JSON.parse('{"purchase":3,"share":2,"sign up":1,"__proto__":2,"constructor":1}');
    const res = await api('GET', `/api/v1/analytics/${campaign.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.totals).toMatchObject({ actions: 9 });
    expect(res.body.totals.actions_by_type).toEqual(expected);
    expect(res.body.series.at(-1).actions_by_type).toEqual(expected);
    // By hour, from the hours' own counts: the same.
    const hours = await api('GET', `/api/v1/analytics/${campaign.id}?granularity=hour`);
    expect(hours.body.totals.actions_by_type).toEqual(expected);
    const byLink = await api('GET', `/api/v1/analytics/${campaign.id}?referral_link_id=${link.id}`);
    expect(byLink.body.totals.actions).toBe(8);
    expect(byLink.body.totals.actions_by_type).toEqual({ ...expected, share: 1 });
    const byOther = await api('GET', `/api/v1/analytics/${campaign.id}?referrer_id=ref-types-2`);
    expect(byOther.body.totals).toMatchObject({ actions: 1, actions_by_type: { share: 1 } });
  });

  it('another shard has its own checkpoint: the same records there count again (as they would be other records)', async () => {
    const { applyRollups } = await import('../../lib/analytics/rollups.ts');
    const s = await setUp();
    const few = s.records.slice(0, 3);
    expect(await applyRollups(few, s.shard)).toBe(3);
    expect(await applyRollups(few, `${s.shard}-other`)).toBe(3);
    expect(await applyRollups(few, s.shard)).toBe(0);
  });
});
