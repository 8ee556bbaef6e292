/**
 * The bench's settings, its own stack (DynamoDB Local in memory, the counting proxy in front of it,
 * the local stack pointed at the proxy, on its own free port) and what every part is given.
 */
import { randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { type IdKind, lastIdOf, sequenceKey } from '../../lib/db/entities/sequence.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { LOCAL_TABLE_NAME, startLocalStack } from '../../lib/local/stack.ts';
import type { Table } from '../../tools/table.ts';
import { startCountingProxy } from './counting-proxy.ts';
import type { EndpointCase, Fixtures } from './endpoints.ts';
import { benchClient } from './http-client.ts';
import type { Block } from './report.ts';

export const quick = process.env.BENCH_QUICK === '1';
const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] || fallback);
  if (!(v > 0)) throw new Error(`${name} must be a positive number, got "${process.env[name]}"`);
  return v;
};
export const settings = {
  latencyRequests: num('BENCH_LATENCY_N', quick ? 200 : 1000),
  latencyFloorEvery: 4,
  loadSeconds: num('BENCH_LOAD_SECONDS', quick ? 5 : 20),
  loadFloorSeconds: 5,
  loadConnections: 32,
  /** Each of the hot-link part's four runs (one link, spread, spread, one link). */
  hotlinkSeconds: num('BENCH_HOTLINK_SECONDS', quick ? 4 : 10),
  hotlinkSpreadLinks: quick ? 50 : 100,
  delaySamples: quick ? 20 : 100,
  scaleLinks: num('BENCH_SCALE_LINKS', quick ? 10_000 : 100_000),
  /** Events (visits, each with its feed item) of the analytics part's campaign of `scaleLinks` links. */
  events: num('BENCH_EVENTS', quick ? 20_000 : 1_000_000),
  coldStartPairs: quick ? 8 : 20,
  webhookLatencyEvents: quick ? 50 : 200,
  webhookBacklog: quick ? 300 : 2000,
  webhookPaceMs: 25,
  isolationSeconds: quick ? 20 : 25,
  isolationPaceMs: 200,
  isolationBacklog: quick ? 50 : 100,
  outageSeconds: quick ? 5 : 10,
  pageSamples: num('BENCH_PAGE_SAMPLES', quick ? 10 : 30),
  purgeTimeoutSeconds: quick ? 60 : 180,
};

export type BenchEnvironment = Awaited<ReturnType<typeof startBenchEnvironment>>;

/** What a part is given: the stack and the endpoint cases (part 1 makes them), earlier parts' data. */
export interface Context {
  env: BenchEnvironment;
  fixtures: Fixtures;
  cases: EndpointCase[];
  data: Record<string, unknown>;
}

/** A part's section, its summary line, the goals it missed (falsy: none) and the figures it keeps for results.json and later parts. */
export interface Outcome {
  body: Array<Block | false>;
  summary: string;
  findings: Array<string | false | undefined>;
  data?: unknown;
}

/** One part of the bench: the name `BENCH_PARTS` knows, its section's title, and how it measures. */
export interface BenchPart {
  name: string;
  title: string;
  /** Whether it needs the local stack (every part but the cold start). */
  stack: boolean;
  run(ctx: Context): Promise<Outcome>;
}

export async function startBenchEnvironment() {
  const tenant = 'bench';
  const apiKey = `bench_${randomBytes(24).toString('base64url')}`;
  const dynamo = await startDynamoLocal(undefined);
  const stoppers: Array<() => unknown> = [() => dynamo.stop()];
  const stop = async () => {
    for (const s of stoppers.reverse()) await Promise.resolve(s()).catch(() => undefined);
  };
  try {
    await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
    const proxy = await startCountingProxy(dynamo.endpoint);
    stoppers.push(() => proxy.stop());
    const stack = await startLocalStack({
      port: 0,
      dataDir: 'memory',
      devApiKeys: `${tenant}:${apiKey}`,
      dynamodbEndpoint: proxy.url,
      // Measured against the handlers and DynamoDB, not the per-route limits of a deployed stage.
      throttles: false,
    });
    stoppers.push(() => stack.stop());
    // The table straight through DynamoDB Local, never counted: bulk writes and checks.
    const table: Table = {
      db: createDocumentClient(dynamo.endpoint, undefined, 30_000),
      name: stack.tableName,
    };
    const client = benchClient(stack.baseUrl, apiKey);
    stoppers.push(
      () => client.close(),
      () => table.db.destroy(),
    );
    return { dynamo, proxy, stack, tenant, apiKey, table, client, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Reserve `n` ids of a kind, as a function reserves its block: the first of them. */
export async function reserveIds(env: { table: Table }, kind: IdKind, n: number): Promise<number> {
  const { Attributes } = await env.table.db.send(
    new UpdateCommand({
      TableName: env.table.name,
      Key: sequenceKey(kind),
      UpdateExpression: 'ADD last_id :n SET #type = :type',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':n': n, ':type': 'sequence' },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return lastIdOf(Attributes) - n + 1;
}

/**
 * Wait until the webhook pipeline and the purge are idle: no DynamoDB call but stream polls for a
 * second (every delivery reads its campaign, every purge step queries the table).
 */
export const waitPipelineIdle = (env: BenchEnvironment) => env.proxy.quiet(1_000, 60_000);
