import type { TestProject } from 'vitest/node';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.ts';

export const TENANT_A = { tenant: 'tenant-a', key: 'test-key-tenant-a-0000000000000001' };
export const TENANT_B = { tenant: 'tenant-b', key: 'test-key-tenant-b-0000000000000002' };

let stack: LocalStack | undefined;

const NEVER_REACHED = { rateLimit: 1_000_000, burstLimit: 1_000_000 };

/** Starts the local stack once for the whole integration run, exactly as `npm start` does. */
export async function setup(project: TestProject) {
  // The run's handlers log in this process: errors only, so that the webhook tests' refused
  // deliveries (warnings on `npm start`) do not fill the output of `npm test`.
  process.env.LOG_LEVEL ??= 'ERROR';
  stack = await startLocalStack({
    port: 0,
    dataDir: 'memory',
    devApiKeys: `${TENANT_A.tenant}:${TENANT_A.key},${TENANT_B.tenant}:${TENANT_B.key}`,
    webhookRetryDelays: '1,1,1',
    // Files run in parallel and fire hundreds of requests at single routes; the deployed figures
    // would throttle some of them. The limits are still counted on every request, just never
    // reached; test/integration/throttling.test.ts runs a gateway with small ones.
    throttles: { redirect: NEVER_REACHED, api: NEVER_REACHED, docs: NEVER_REACHED },
    // The counting consumer as fast as the contract allows (the deployed windows are pinned by
    // test/infra/purge.test.ts): batches gathered for 0.2 s, sums written once 0.5 s old, in
    // tumbling windows of 2 s, rankings merged at once.
    rollupBatchingWindowMs: 200,
    rollupTumblingWindowSeconds: 2,
    analyticsFlushAgeMs: 500,
    analyticsBoardAgeMs: 0,
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('dynamodbEndpoint', stack.dynamodbEndpoint);
  project.provide('tableName', stack.tableName);
  project.provide('queueEndpoint', stack.queue.endpoint);
}

export async function teardown() {
  await stack?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    dynamodbEndpoint: string;
    tableName: string;
    queueEndpoint: string;
  }
}
