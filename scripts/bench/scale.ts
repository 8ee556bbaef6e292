/**
 * Part 6: a campaign of many links written into the table: its first and last page timed beside
 * their floors, then its purge timed from the DELETE's 204 until no item of it remains.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { encodeCursor } from '../../lib/db/cursor.ts';
import { campaignLinksPartition, isLinkItem, linkKey, linkOrder } from '../../lib/db/entities/link.ts';
import { campaignItems, getItems } from '../../tools/table.ts';
import { waitUntil } from '../../tools/wait.ts';
import { timeWithFloors } from './floor.ts';
import { type BenchPart, checks, rows } from './report.ts';
import { settings } from './settings.ts';
import { ms, pageVerdict, timed } from './stats.ts';
import { campaignWithWrittenLinks } from './traffic.ts';

export const scalePart: BenchPart = {
  name: 'scale',
  title: '6. Scale: a campaign with many links',
  async run({ env }) {
    const { tenant, table } = env;
    const n = settings.scaleLinks;
    const { id, links, createdMs, loadSeconds } = await campaignWithWrittenLinks(env, 'scale', n, false);
    const firstId = links[0]!.id;
    // The last page starts after the item before it.
    const path = `/api/v1/campaign_referral_links/${id}?limit=100`;
    const before = { sortKey: linkOrder(createdMs + n - 101, firstId + n - 101), code: links[n - 101]!.code };
    const lastPath = `${path}&cursor=${encodeURIComponent(encodeCursor({ tenant, campaignId: id }, before))}`;
    const check = await env.client.send({ method: 'GET', path: lastPath });
    const page = JSON.parse(check.body) as Array<{ id: number }>;
    const lastIds = Array.from({ length: 100 }, (_, i) => firstId + n - 100 + i).join();
    const noNext = check.headers['x-next-cursor'] === undefined;
    const lastPageOk = check.status === 200 && page.map((l) => l.id).join() === lastIds && noNext;
    const get = (p: string) => env.client.send({ method: 'GET', path: p });
    const pages = Object.entries({ first: path, last: lastPath }).map(([key, path]) => ({ key, path }));
    const { p } = await timeWithFloors(env.proxy, get, pages, settings.pageSamples);

    // Delete, then watch the purge until neither the link list nor the campaign's partition holds an item.
    const remove = () => env.client.send({ method: 'DELETE', path: `/api/v1/campaign?id=${id}` });
    const [deleted, deleteMs] = await timed(remove);
    if (deleted.status !== 204) throw new Error(`DELETE of the scale campaign: ${deleted.status}`);
    const purgeStart = performance.now();
    const firstLink = {
      ...{ TableName: table.name, IndexName: 'GSI2', KeyConditionExpression: 'GSI2PK = :pk', Limit: 1 },
      ExpressionAttributeValues: { ':pk': campaignLinksPartition(tenant, id) },
    };
    const anyLeft = async () =>
      (await table.db.send(new QueryCommand(firstLink))).Items?.length ||
      (await campaignItems(tenant, id, '', table)).length;
    const gone = await waitUntil(async () => !(await anyLeft()), settings.purgeTimeoutSeconds * 1000, 500);
    const seconds = (performance.now() - purgeStart) / 1000;
    // Exact check: every link key read back; a code's reservation is no link.
    const keys = links.map((l) => linkKey(l.code));
    const remaining = (await getItems(keys, table)).filter((i) => i && isLinkItem(i)).length;
    const [ratio, floorRatio] = [p('last') / p('first'), p('last', 'floor') / p('first', 'floor')];
    const verdict = pageVerdict(ratio, floorRatio);
    const finished = gone && remaining === 0;
    const count = n.toLocaleString('en-US');
    const p50p95 = (k: string) => `${ms(p(k))} ms (${ms(p(k, 'gateway', 95))})`;
    const purge = finished
      ? `${seconds.toFixed(1)} s (${(n / seconds).toFixed(0)} items/s; every link key read back: 0 left)`
      : `not finished after ${seconds.toFixed(0)} s: ${remaining} links left`;
    return {
      body: [
        `${count} links written straight into the table as \`newLinkItem\` builds them for \`createLink\` (BatchWriteItem, ${loadSeconds.toFixed(1)} s). First and last page of the campaign’s list (limit 100) timed ${settings.pageSamples} times each, interleaved; the last page through a cursor built by \`encodeCursor\`. The floor is each page’s DynamoDB requests, recorded and replayed (as in part 2).`,
        rows(`
measure | through the gateway | floor (DynamoDB requests replayed)
first page p50 (p95) | ${p50p95('first')} | ${ms(p('first', 'floor'))} ms
last page p50 (p95) | ${p50p95('last')} | ${ms(p('last', 'floor'))} ms
last / first at p50 | ${ratio.toFixed(2)} (${verdict}) | ${floorRatio.toFixed(2)}
last page holds the last 100 links, no next cursor | ${lastPageOk ? 'yes' : 'NO'} |
DELETE of the campaign answered 204 in | ${ms(deleteMs)} ms |
from the 204 until no item of it remains | ${purge} |`),
      ],
      summary: `Scale (${count} links): first page ${ms(p('first'))} ms, last page ${ms(p('last'))} ms; purge ${finished ? `${seconds.toFixed(1)} s` : `unfinished (${remaining} left)`}.`,
      checks: checks(`
the last page holds the last 100 links, no next cursor | ${lastPageOk} | true | ${lastPageOk}
the last page's p50 against the first's | ${ratio.toFixed(2)}× (${verdict}; the floor ${floorRatio.toFixed(2)}×) | same within noise | ${verdict === 'same within noise'}
the purge removes every link | ${purge} | within ${settings.purgeTimeoutSeconds} s | ${finished}`),
    };
  },
};
