/**
 * Part 6: a campaign with many links (default 100,000), written straight into the table as
 * `newLinkItem` builds them (ids reserved from the link sequence, so they never collide with the
 * API's). Its first and last page (limit 100; the last through a cursor built by `encodeCursor`)
 * are timed through the gateway and as the DynamoDB requests the stack made for each, recorded and
 * replayed (the floor, `floor.ts`); then the campaign is deleted and the time from the 204 until
 * no item of it remains is measured (the background purge), and every link key read back.
 */
import { BatchGetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { encodeCursor } from '../../lib/db/cursor.ts';
import {
  campaignLinksPartition,
  isLinkItem,
  linkKey,
  linkOrder,
  newLinkItem,
} from '../../lib/db/entities/link.ts';
import { campaignItems, putItems } from '../../tools/table.ts';
import { mapLimit, waitUntil } from '../../tools/wait.ts';
import { type BenchPart, reserveIds, settings } from './environment.ts';
import { replayFloor } from './floor.ts';
import { ms, pageVerdict, percentile } from './stats.ts';

const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export const scalePart: BenchPart = {
  name: 'scale',
  title: '6. Scale: a campaign with many links',
  stack: true,
  async run({ env }) {
    const { tenant, table } = env;
    const n = settings.scaleLinks;
    const body = { url: 'https://example.com/big', name: 'Scale' };
    const campaign = await env.client.call<{ id: string; url: string }>('POST', '/api/v1/campaign', body);
    const firstId = await reserveIds(env, 'link', n);
    const tag = `S${Date.now().toString(36).toUpperCase()}`;
    const baseMs = Date.now() - n;
    const codeOf = (i: number): string => (i < 32 ? tag : codeOf(Math.floor(i / 32))) + CODE_ALPHABET[i % 32];
    const itemOf = (i: number) =>
      newLinkItem({
        tenant,
        campaignId: campaign.id,
        campaignUrl: campaign.url,
        id: firstId + i,
        code: codeOf(i),
        referrerId: null,
        now: new Date(baseMs + i),
      });
    const loadStart = performance.now();
    await putItems(
      Array.from({ length: n }, (_, i) => itemOf(i)),
      table,
    );
    const loadSeconds = (performance.now() - loadStart) / 1000;

    // The last page starts after the item before it.
    const path = `/api/v1/campaign_referral_links/${campaign.id}?limit=100`;
    const position = { sortKey: linkOrder(baseMs + n - 101, firstId + n - 101), code: codeOf(n - 101) };
    const lastPath = `${path}&cursor=${encodeURIComponent(encodeCursor({ tenant, campaignId: campaign.id }, position))}`;
    const check = await env.client.send({ method: 'GET', path: lastPath });
    const page = JSON.parse(check.body) as Array<{ id: number }>;
    const lastPageOk =
      check.status === 200 &&
      page.length === 100 &&
      page[0]?.id === firstId + n - 100 &&
      page[99]?.id === firstId + n - 1 &&
      check.headers['x-next-cursor'] === undefined;
    const get = (p: string) => () => env.client.send({ method: 'GET', path: p });
    const recordFloor = async (p: string) => {
      await env.proxy.quiet();
      await env.proxy.record();
      await get(p)();
      return replayFloor(await env.proxy.recorded(), env.proxy.url)!.run;
    };
    const runs = [get(path), get(lastPath), await recordFloor(path), await recordFloor(lastPath)];
    const times = runs.map(() => [] as number[]);
    for (let s = 0; s < settings.pageSamples; s++) {
      for (const [i, run] of runs.entries()) {
        const t = performance.now();
        await run();
        times[i]!.push(performance.now() - t);
      }
    }

    // Delete, then watch the purge until neither the link list nor the campaign's partition holds an item.
    const tDelete = performance.now();
    const deleted = await env.client.send({ method: 'DELETE', path: `/api/v1/campaign?id=${campaign.id}` });
    const deleteMs = performance.now() - tDelete;
    if (deleted.status !== 204) throw new Error(`DELETE of the scale campaign: ${deleted.status}`);
    const purgeStart = performance.now();
    const firstLink = {
      TableName: table.name,
      IndexName: 'GSI2',
      KeyConditionExpression: 'GSI2PK = :pk',
      ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, campaign.id) },
      Limit: 1,
    };
    const anyLeft = async () =>
      (await table.db.send(new QueryCommand(firstLink))).Items?.length ||
      (await campaignItems(tenant, campaign.id, '', table)).length;
    const gone = await waitUntil(async () => !(await anyLeft()), settings.purgeTimeoutSeconds * 1000, 500);
    const seconds = (performance.now() - purgeStart) / 1000;
    // Exact check: every link key read back, 100 per BatchGetItem; a code's reservation is no link.
    const chunks = Array.from({ length: Math.ceil(n / 100) }, (_, c) =>
      Array.from({ length: Math.min(100, n - c * 100) }, (_, k) => linkKey(codeOf(c * 100 + k))),
    );
    const found = await mapLimit(chunks, 8, async (keys) => {
      let pending: Array<Record<string, unknown>> = keys;
      let count = 0;
      while (pending.length) {
        const out = await table.db.send(
          new BatchGetCommand({ RequestItems: { [table.name]: { Keys: pending } } }),
        );
        count += out.Responses?.[table.name]?.filter(isLinkItem).length ?? 0;
        pending = out.UnprocessedKeys?.[table.name]?.Keys ?? [];
      }
      return count;
    });
    const remaining = found.reduce((a, b) => a + b, 0);

    const [first, last, floorFirst, floorLast] = times.map((t) => percentile(t, 50)) as [
      number,
      number,
      number,
      number,
    ];
    const [ratio, floorRatio] = [last / first, floorLast / floorFirst];
    const verdict = pageVerdict(ratio, floorRatio);
    const finished = gone && remaining === 0;
    const links = n.toLocaleString('en-US');
    const p50p95 = (i: number) => `${ms(percentile(times[i]!, 50))} ms (${ms(percentile(times[i]!, 95))})`;
    return {
      body: [
        `${links} links written straight into the table as \`newLinkItem\` builds them for \`createLink\` (BatchWriteItem, ${loadSeconds.toFixed(1)} s). First and last page of the campaign’s list (limit 100) timed ${settings.pageSamples} times each, interleaved; the last page through a cursor built by \`encodeCursor\`. The floor is each page’s DynamoDB requests, recorded and replayed (as in part 2).`,
        [
          ['measure', 'through the gateway', 'floor (DynamoDB requests replayed)'],
          ['first page p50 (p95)', p50p95(0), `${ms(floorFirst)} ms`],
          ['last page p50 (p95)', p50p95(1), `${ms(floorLast)} ms`],
          ['last / first at p50', `${ratio.toFixed(2)} (${verdict})`, floorRatio.toFixed(2)],
          ['last page holds the last 100 links, no next cursor', lastPageOk ? 'yes' : 'NO'],
          ['DELETE of the campaign answered 204 in', `${ms(deleteMs)} ms`],
          [
            'from the 204 until no item of it remains',
            finished
              ? `${seconds.toFixed(1)} s (${(n / seconds).toFixed(0)} items/s; every link key read back: 0 left)`
              : `not finished after ${seconds.toFixed(0)} s: ${remaining} links left`,
          ],
        ],
      ],
      summary: `Scale (${links} links): first page ${ms(first)} ms, last page ${ms(last)} ms; purge ${finished ? `${seconds.toFixed(1)} s` : `unfinished (${remaining} left)`}.`,
      findings: [
        !lastPageOk && 'Scale: the last page did not hold the last 100 links, or still had a next cursor.',
        verdict !== 'same within noise' &&
          `Scale: the last page's p50 is ${ratio.toFixed(2)}× the first page's; the floor shows ${floorRatio.toFixed(2)}× (${verdict === 'DIFFERENT' ? 'so the difference is in our code' : 'so it is DynamoDB Local’s own'}).`,
        !finished && `Scale: the purge left ${remaining} links after ${seconds.toFixed(0)} s.`,
      ],
      data: { first, last, floorFirst, floorLast, deleteMs, purgeSeconds: seconds, remaining },
    };
  },
};
