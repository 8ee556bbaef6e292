/**
 * Part 2: latency through the local gateway against the floor (the DynamoDB requests the stack
 * made for one request, recorded by the proxy and replayed straight to DynamoDB: `floor.ts`). Floor iterations are interleaved with the
 * stack requests (one after every `floorEvery` requests, before or after it in turn), so both see
 * the same background load; the floor's spread is narrow, so a third as many samples suffice.
 */
import type { CountingProxy } from './counting-proxy.ts';
import type { EndpointCase } from './endpoints.ts';
import type { BenchClient } from './http-client.ts';
import { percentile } from './stats.ts';

export interface LatencyRow {
  key: string;
  label: string;
  n: number;
  floorN: number;
  floorOps: string;
  /** Operations DynamoDB refused on replay (a condition the recorded request made false). */
  floorRefused: string[];
  auth: boolean;
  stack: { p50: number; p99: number };
  floor: { p50: number; p99: number };
  ratioP50: number;
  /** Id-block reservations per request over the run (the handlers', amortised). */
  idBlocksPerRequest: number;
  /**
   * Every DynamoDB call of the stack during the run per request, the authorizer's and the
   * stream polls excepted: the request's own calls plus background work it set off (webhook
   * deliveries' campaign reads, referred users' action items written by the stream consumer, a
   * deleted campaign's purge) and id blocks.
   */
  stackCallsPerRequest: number;
}

export async function measureLatency(
  proxy: CountingProxy,
  client: BenchClient,
  cases: EndpointCase[],
  n: number,
  floorEvery: number,
  onProgress?: (row: LatencyRow) => void,
): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  for (const endpoint of cases) {
    await endpoint.prepare(n);
    const stack: number[] = [];
    const floor: number[] = [];
    const before = await proxy.snapshot();
    for (let i = 0; i < n; i++) {
      const runStack = async () => {
        const spec = endpoint.request();
        const t = performance.now();
        const res = await client.send(spec);
        stack.push(performance.now() - t);
        if (res.status !== endpoint.status) {
          throw new Error(
            `${endpoint.label}: expected ${endpoint.status}, got ${res.status} ${res.body.slice(0, 200)}`,
          );
        }
      };
      const runFloor = async () => {
        if (!endpoint.floor) return;
        const t = performance.now();
        await endpoint.floor.run();
        floor.push(performance.now() - t);
      };
      if (i % floorEvery !== 0) await runStack();
      else if ((i / floorEvery) % 2 === 0) {
        await runStack();
        await runFloor();
      } else {
        await runFloor();
        await runStack();
      }
    }
    const after = await proxy.snapshot();
    const delta = (prefixes: string[]) =>
      Object.entries(after.counts)
        .filter(([k]) => prefixes.some((p) => k.startsWith(p)))
        .reduce((a, [k, v]) => a + v - (before.counts[k] ?? 0), 0);
    const idBlocks = delta(['idblock:']);
    const stackCalls = delta(['request:', 'idblock:', 'webhook:', 'action:']);
    const row: LatencyRow = {
      key: endpoint.key,
      label: endpoint.label,
      n,
      floorN: floor.length,
      floorOps: endpoint.floor?.ops ?? 'none (no DynamoDB call)',
      floorRefused: endpoint.floor?.refused ?? [],
      auth: endpoint.auth,
      stack: { p50: percentile(stack, 50), p99: percentile(stack, 99) },
      floor: { p50: percentile(floor, 50), p99: percentile(floor, 99) },
      ratioP50: percentile(stack, 50) / percentile(floor, 50),
      idBlocksPerRequest: idBlocks / n,
      stackCallsPerRequest: stackCalls / n,
    };
    rows.push(row);
    onProgress?.(row);
  }
  return rows;
}
