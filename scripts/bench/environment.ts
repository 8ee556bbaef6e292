/**
 * The bench's own stack: DynamoDB Local (in memory), the counting proxy in front of it, and the
 * local stack (gateway, handlers, queue, pollers) pointed at the proxy, on its own free port.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDocumentClient } from '../../lib/aws/clients.ts';
import { ensureTable, type RunningDynamo, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { LOCAL_TABLE_NAME, type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { type CountingProxy, startCountingProxy } from './counting-proxy.ts';
import { BenchClient } from './http-client.ts';

export interface BenchEnvironment {
  dynamo: RunningDynamo;
  proxy: CountingProxy;
  stack: LocalStack;
  tableName: string;
  tenant: string;
  apiKey: string;
  /** Document client straight to DynamoDB Local: bulk loading and checks, never counted. */
  directDb: DynamoDBDocumentClient;
  client: BenchClient;
  stop(): Promise<void>;
}

export async function startBenchEnvironment(): Promise<BenchEnvironment> {
  const tenant = 'bench';
  const apiKey = `bench_${randomBytes(24).toString('base64url')}`;
  const dynamo = await startDynamoLocal(undefined);
  const stoppers: Array<() => Promise<void>> = [() => dynamo.stop()];
  const stopAll = async () => {
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
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
      // Throughput is measured against the handlers and DynamoDB, not against the per-route limits
      // a deployed stage would apply (the local gateway mirrors them by default).
      throttles: false,
    });
    stoppers.push(() => stack.stop());
    const directDb = createDocumentClient(dynamo.endpoint, undefined, 30_000);
    const client = new BenchClient(stack.baseUrl, apiKey);
    stoppers.push(async () => {
      client.close();
      directDb.destroy();
    });
    return {
      dynamo,
      proxy,
      stack,
      tableName: stack.tableName,
      tenant,
      apiKey,
      directDb,
      client,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
