/**
 * Part 2: latency through the local gateway beside the floor (the DynamoDB requests the stack made
 * for one request, replayed through a bare SDK client: `floor.ts`). A floor run comes after or
 * before every `latencyFloorEvery`-th request, in turn, so both see the same background load; the
 * floor's spread is narrow, so fewer samples suffice.
 */
import type { EndpointCase } from './endpoints.ts';
import { type BenchEnvironment, type BenchPart, settings } from './environment.ts';
import { chart } from './report.ts';
import { ms, percentile, yes } from './stats.ts';

const GOAL = 1.25;

async function measure(env: BenchEnvironment, c: EndpointCase, n: number) {
  await c.prepare(n);
  const stack: number[] = [];
  const floor: number[] = [];
  const runStack = async () => {
    const spec = c.request();
    const t = performance.now();
    const res = await env.client.send(spec);
    stack.push(performance.now() - t);
    if (res.status !== c.status)
      throw new Error(`${c.label}: expected ${c.status}, got ${res.status} ${res.body}`);
  };
  const runFloor = async () => {
    const t = performance.now();
    if (c.floor) floor.push(await c.floor.run().then(() => performance.now() - t));
  };
  const every = settings.latencyFloorEvery;
  const before = (await env.proxy.snapshot()).counts;
  for (let i = 0; i < n; i++) {
    if (i % every) await runStack();
    else if ((i / every) % 2) await runFloor().then(runStack);
    else await runStack().then(runFloor);
  }
  const after = (await env.proxy.snapshot()).counts;
  const perRequest = (...categories: string[]) =>
    Object.entries(after)
      .filter(([k]) => categories.includes(k.split(':')[0]!))
      .reduce((a, [k, v]) => a + v - (before[k] ?? 0), 0) / n;
  return {
    key: c.key,
    label: c.label,
    n,
    floorN: floor.length,
    floorOps: `${c.floor?.ops ?? 'none (no DynamoDB call)'}${c.refused.length ? ` (refused on replay: ${c.refused.join(', ')})` : ''}`,
    p50: percentile(stack, 50),
    p99: percentile(stack, 99),
    floorP50: percentile(floor, 50),
    floorP99: percentile(floor, 99),
    /** Id-block reservations per request over the run (the handlers', amortised). */
    idBlocks: perRequest('idblock'),
    /** Every stack DynamoDB call per request, background work it set off and id blocks included. */
    stackCalls: perRequest('request', 'idblock', 'webhook', 'action', 'feed', 'rollup'),
  };
}
export type LatencyRow = Awaited<ReturnType<typeof measure>>;

export const latencyPart: BenchPart = {
  name: 'latency',
  title: '2. Latency through the local gateway vs the DynamoDB floor',
  stack: true,
  async run({ env, cases }) {
    const rows: LatencyRow[] = [];
    for (const c of cases.filter((x) => x.timed)) {
      rows.push(await measure(env, c, settings.latencyRequests));
      console.log(`   ${c.label}: p50 ${ms(rows.at(-1)!.p50)} ms, floor ${ms(rows.at(-1)!.floorP50)} ms`);
    }
    const ratio = (r: LatencyRow) => r.p50 / r.floorP50;
    const measured = rows.filter((r) => r.floorN > 0);
    const over = measured.filter((r) => ratio(r) > GOAL);
    const ratios = measured.map(ratio);
    const ids = rows.filter((r) => r.idBlocks > 0);
    return {
      body: [
        `${settings.latencyRequests} sequential requests per endpoint over one keep-alive connection, after a warm-up, through the local gateway (payload 2.0 event, authorizer, middy handler, validation, serialisation). The floor is the DynamoDB requests the stack made for one request of the endpoint (the local authorizer’s api-key GetItem included), recorded by the counting proxy and replayed as recorded through a bare AWS SDK client with keep-alive (\`scripts/bench/floor.ts\`): the same operations, keys, item sizes, consistency and order (calls that overlapped are sent together), without our code. A replayed write meets the state the recorded one left, so a write guarded by a condition (a new item’s Put, a Delete of an item now gone) is refused: the same round trip (DynamoDB reads the item and evaluates the condition), no write; the floor column names them. Floor runs are interleaved with the requests (one per ${settings.latencyFloorEvery}) so both see the same background load, and both go through the proxy. The second table names the requests each floor replays, and counts every stack DynamoDB call during the run per request, background work it set off and id blocks included.`,
        [
          ['endpoint', 'n (floor n)', 'p50 ms', 'floor p50', 'ratio p50', `≤ ${GOAL}`, 'p99 ms', 'floor p99'],
          ...rows.map((r) => [
            r.label,
            `${r.n} (${r.floorN})`,
            ms(r.p50),
            ms(r.floorP50),
            r.floorN ? ratio(r).toFixed(2) : 'n/a',
            r.floorN ? yes(ratio(r) <= GOAL) : '—',
            ms(r.p99),
            ms(r.floorP99),
          ]),
        ],
        [
          ['endpoint', 'floor: DynamoDB requests replayed', 'stack calls/request'],
          ...rows.map((r) => [r.label, r.floorOps, r.stackCalls.toFixed(2)]),
        ],
        chart(
          'p50 latency: bars through the gateway, line the floor',
          'ms',
          rows.map((r) => [r.key, r.p50, r.floorP50]),
        ),
        ids.length > 0 &&
          `Id-block reservations: ${ids.map((r) => `${r.label} ${r.idBlocks.toFixed(3)}`).join(', ')} per request.`,
      ],
      summary: `Latency p50 vs floor: ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}× (goal ≤ ${GOAL}); ${measured.length - over.length} of ${measured.length} endpoints meet it.`,
      findings: [
        over.length > 0 &&
          `Latency: p50 over ${GOAL}× the floor for ${over.map((r) => `${r.label} (${ratio(r).toFixed(2)}×, ${ms(r.p50)} vs ${ms(r.floorP50)} ms)`).join('; ')}.`,
      ],
      data: rows,
    };
  },
};
