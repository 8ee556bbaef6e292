import type { TestProject } from 'vitest/node';
import { type LocalStack, type LocalStackSettings, startLocalStack } from '../../lib/local/stack.ts';

export const TENANT_A = { tenant: 'tenant-a', key: 'test-key-tenant-a-0000000000000001' };
export const TENANT_B = { tenant: 'tenant-b', key: 'test-key-tenant-b-0000000000000002' };

let stack: LocalStack | undefined;

/** Where a stack answers: what a test file needs of it (`run-stack.ts`). */
export interface StackEndpoints {
  baseUrl: string;
  dynamodbEndpoint: string;
  tableName: string;
  queueEndpoint: string;
  /** The queue URLs the stack's handlers send to, for handlers a test loads in its own process. */
  queueUrls: Pick<
    LocalStack['queue'],
    'webhookQueueUrl' | 'webhookRetryQueueUrl' | 'webhookDlqUrl' | 'purgeQueueUrl'
  >;
}

/** What `stack` answers at, as `runStack()` gives it to the files. */
export function endpointsOf(stack: LocalStack): StackEndpoints {
  const { webhookQueueUrl, webhookRetryQueueUrl, webhookDlqUrl, purgeQueueUrl } = stack.queue;
  return {
    baseUrl: stack.baseUrl,
    dynamodbEndpoint: stack.dynamodbEndpoint,
    tableName: stack.tableName,
    queueEndpoint: stack.queue.endpoint,
    queueUrls: { webhookQueueUrl, webhookRetryQueueUrl, webhookDlqUrl, purgeQueueUrl },
  };
}

const NEVER_REACHED = { rateLimit: 1_000_000, burstLimit: 1_000_000 };

/** The settings of the run's stack, and of a file's stack of its own (`own-stack.ts`). */
export const TEST_STACK_SETTINGS = {
  port: 0,
  dataDir: 'memory',
  devApiKeys: `${TENANT_A.tenant}:${TENANT_A.key},${TENANT_B.tenant}:${TENANT_B.key}`,
  webhookRetryDelays: '1,1,1',
  // Files run in parallel and fire hundreds of requests at single routes; the deployed figures
  // would throttle some of them. The limits are still counted on every request, just never
  // reached; test/emulator/gateway-throttling.test.ts runs a gateway with small ones.
  throttles: { redirect: NEVER_REACHED, api: NEVER_REACHED, docs: NEVER_REACHED },
  // Test stacks are found through the run, not through .data/local-stack.json, which belongs to
  // a developer's `npm start` of this checkout.
  stateFile: false,
  // The counting consumer as fast as the contract allows (the deployed windows are pinned by
  // test/infra/purge.test.ts): batches gathered for 0.2 s, sums written once 0.5 s old, in
  // tumbling windows of 2 s, rankings merged at once.
  rollupBatchingWindowMs: 200,
  rollupTumblingWindowSeconds: 2,
  analyticsFlushAgeMs: 500,
  analyticsBoardAgeMs: 0,
} satisfies LocalStackSettings;

/** Starts the local stack once for the whole integration run, exactly as `npm start` does. */
export async function setup(project: TestProject) {
  // The run's handlers log in this process: errors only, so that the webhook tests' refused
  // deliveries (warnings on `npm start`) do not fill the output of `npm test`.
  process.env.LOG_LEVEL ??= 'ERROR';
  stack = await startLocalStack(TEST_STACK_SETTINGS);
  project.provide('stack', endpointsOf(stack));
}

export async function teardown() {
  await stack?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The integration run's shared stack; a file reads it through `runStack()`. */
    stack: StackEndpoints;
  }
}
