/**
 * Part 6: a campaign with many links (default 100,000). The links are written straight into the
 * table in the exact item shape `createLink` writes (ids reserved from the same id sequence, so
 * they can never collide with ids the API hands out), then:
 * - the first and the last page of its list (limit 100) are timed, through the gateway and as
 *   the DynamoDB requests the stack made for each, recorded and replayed (the floor, `floor.ts`);
 *   the last page is reached with a cursor built by `encodeCursor`;
 * - the campaign is deleted, and the time from the 204 until no item of it remains is measured
 *   (the background purge; each link is left as its code's reservation), then checked item by item.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatchGetCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { encodeCursor } from '../../lib/db/cursor.ts';
import { campaignKey } from '../../lib/db/entities/campaign.ts';
import { campaignLinksPartition, linkKey, linkOrder, newLinkItem } from '../../lib/db/entities/link.ts';
import { sequenceKey } from '../../lib/db/entities/sequence.ts';
import { projectRoot } from './bundles.ts';
import { waitQuiet } from './calls.ts';
import { batchPut } from './endpoints.ts';
import type { BenchEnvironment } from './environment.ts';
import { replayFloor } from './floor.ts';
import { percentile, sleep } from './stats.ts';

export interface ScaleResult {
  links: number;
  loadSeconds: number;
  pages: {
    samples: number;
    first: { p50: number; p95: number };
    last: { p50: number; p95: number };
    floorFirst: { p50: number };
    floorLast: { p50: number };
    ratio: number;
    lastPageOk: boolean;
  };
  deleteMs: number;
  purge:
    | { available: true; seconds: number; itemsPerSecond: number; remaining: number; finished: boolean }
    | { available: false; reason: string; remaining: number };
}

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** Where the local stack would wire the purge worker (a static hint for the report). */
function purgeWiredLocally(): boolean {
  const dir = join(projectRoot, 'lib', 'local');
  if (!existsSync(dir)) return false;
  return readdirSync(dir).some(
    (f) => f.endsWith('.ts') && readFileSync(join(dir, f), 'utf8').includes('purge'),
  );
}

export async function measureScale(
  env: BenchEnvironment,
  options: { links: number; pageSamples: number; purgeTimeoutSeconds: number },
): Promise<ScaleResult> {
  const { tenant, tableName: T, directDb: db } = env;
  const n = options.links;
  const campaign = await env.client.expect<{ id: string; url: string }>(
    { method: 'POST', path: '/api/v1/campaign', body: { url: 'https://example.com/big', name: 'Scale' } },
    201,
  );
  const campaignId = campaign.id;

  // Reserve n ids from the link sequence, exactly as a function reserves a block.
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: T,
      Key: sequenceKey('link'),
      UpdateExpression: 'ADD last_id :n SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':n': n, ':type': 'sequence' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const firstId = Number(Attributes?.last_id) - n + 1;
  const runTag = Date.now().toString(36).toUpperCase();
  const baseMs = Date.now() - n;
  const codeOf = (i: number) => {
    let x = i;
    let s = '';
    do {
      s = CODE_ALPHABET[x % 32] + s;
      x = Math.floor(x / 32);
    } while (x > 0);
    return `S${runTag}${s}`;
  };
  const sortKeyOf = (i: number) => linkOrder(baseMs + i, firstId + i);
  const itemOf = (i: number) =>
    newLinkItem({
      tenant,
      campaignId,
      campaignUrl: campaign.url,
      id: firstId + i,
      code: codeOf(i),
      referrerId: null,
      now: new Date(baseMs + i),
    });
  const loadStart = performance.now();
  const CHUNK = 5_000;
  for (let i = 0; i < n; i += CHUNK) {
    await batchPut(
      db,
      T,
      Array.from({ length: Math.min(CHUNK, n - i) }, (_, k) => itemOf(i + k)),
      16,
    );
  }
  const loadSeconds = (performance.now() - loadStart) / 1000;

  // First and last page, interleaved; the last page starts after the item before it.
  const path = `/api/v1/campaign_referral_links/${campaignId}?limit=100`;
  const before = n - 101;
  const cursor = encodeCursor({ tenant, campaignId }, { sortKey: sortKeyOf(before), code: codeOf(before) });
  const lastPath = `${path}&cursor=${encodeURIComponent(cursor)}`;
  const check = await env.client.send({ method: 'GET', path: lastPath });
  const lastPage = JSON.parse(check.body) as Array<{ id: number }>;
  const lastPageOk =
    check.status === 200 &&
    lastPage.length === 100 &&
    lastPage[0]?.id === firstId + n - 100 &&
    lastPage[99]?.id === firstId + n - 1 &&
    check.headers['x-next-cursor'] === undefined;
  const firstTimes: number[] = [];
  const lastTimes: number[] = [];
  const floorFirst: number[] = [];
  const floorLast: number[] = [];
  /** Each page's floor: its DynamoDB requests, recorded from one request and replayed. */
  const recordPage = async (pagePath: string) => {
    await waitQuiet(env.proxy);
    env.proxy.record();
    await env.client.send({ method: 'GET', path: pagePath });
    const floor = replayFloor(await env.proxy.recorded(), env.proxy.url);
    if (!floor) throw new Error(`${pagePath}: no DynamoDB request recorded`);
    return floor;
  };
  const firstFloor = await recordPage(path);
  const lastFloor = await recordPage(lastPath);
  const timed = async (list: number[], f: () => Promise<unknown>) => {
    const t = performance.now();
    await f();
    list.push(performance.now() - t);
  };
  for (let i = 0; i < options.pageSamples; i++) {
    await timed(firstTimes, () => env.client.send({ method: 'GET', path }));
    await timed(lastTimes, () => env.client.send({ method: 'GET', path: lastPath }));
    await timed(floorFirst, firstFloor.run);
    await timed(floorLast, lastFloor.run);
  }

  // Delete, then watch the purge: the oldest link goes first (the purge pages its list in order).
  const tDelete = performance.now();
  const deleted = await env.client.send({ method: 'DELETE', path: `/api/v1/campaign?id=${campaignId}` });
  const deleteMs = performance.now() - tDelete;
  if (deleted.status !== 204)
    throw new Error(`DELETE of the scale campaign: ${deleted.status} ${deleted.body}`);
  const purgeStart = performance.now();
  const anyLeft = async () => {
    const links = await db.send(
      new QueryCommand({
        TableName: T,
        IndexName: 'GSI2',
        KeyConditionExpression: 'GSI2PK = :pk',
        ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, campaignId) },
        Limit: 1,
      }),
    );
    const records = await db.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': campaignKey(tenant, campaignId).PK },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return (links.Items?.length ?? 0) + (records.Items?.length ?? 0) > 0;
  };
  const isLink = (item: Record<string, unknown> | undefined) => item?.type === 'link';
  const firstLinkGone = async () =>
    !isLink(
      (await db.send(new GetCommand({ TableName: T, Key: linkKey(codeOf(0)), ConsistentRead: true }))).Item,
    );
  /** Exact check: every link key read back (BatchGetItem, 100 at a time); a reservation is no link. */
  const remaining = async () => {
    let found = 0;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next; i < n; i = next) {
          next += 100;
          const Keys = Array.from({ length: Math.min(100, n - i) }, (_, k) => linkKey(codeOf(i + k)));
          let pending: Array<Record<string, unknown>> = Keys;
          while (pending.length > 0) {
            const out = await db.send(new BatchGetCommand({ RequestItems: { [T]: { Keys: pending } } }));
            found += out.Responses?.[T]?.filter(isLink).length ?? 0;
            pending = (out.UnprocessedKeys?.[T]?.Keys as typeof pending | undefined) ?? [];
          }
        }
      }),
    );
    return found;
  };

  const noProgressLimit = 30_000;
  let purge: ScaleResult['purge'];
  for (;;) {
    const elapsed = performance.now() - purgeStart;
    if (!(await anyLeft())) {
      const seconds = (performance.now() - purgeStart) / 1000;
      const left = await remaining();
      purge = {
        available: true,
        seconds,
        itemsPerSecond: n / seconds,
        remaining: left,
        finished: left === 0,
      };
      break;
    }
    if (elapsed > noProgressLimit && !(await firstLinkGone())) {
      purge = {
        available: false,
        reason: purgeWiredLocally()
          ? `no item removed within ${noProgressLimit / 1000} s of the 204`
          : `the local stack does not run the purge worker (functions/queue/purge-campaign.ts) yet: no item removed within ${noProgressLimit / 1000} s`,
        remaining: await remaining(),
      };
      break;
    }
    if (elapsed > options.purgeTimeoutSeconds * 1000) {
      const left = await remaining();
      const seconds = elapsed / 1000;
      purge = {
        available: true,
        seconds,
        itemsPerSecond: (n - left) / seconds,
        remaining: left,
        finished: false,
      };
      break;
    }
    await sleep(500);
  }

  return {
    links: n,
    loadSeconds,
    pages: {
      samples: options.pageSamples,
      first: { p50: percentile(firstTimes, 50), p95: percentile(firstTimes, 95) },
      last: { p50: percentile(lastTimes, 50), p95: percentile(lastTimes, 95) },
      floorFirst: { p50: percentile(floorFirst, 50) },
      floorLast: { p50: percentile(floorLast, 50) },
      ratio: percentile(lastTimes, 50) / percentile(firstTimes, 50),
      lastPageOk,
    },
    deleteMs,
    purge,
  };
}
