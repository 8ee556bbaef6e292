/**
 * A local stack of a test file's own, started in its worker (the handlers load there) before its
 * tests and stopped after them, with the run's settings and tenants (global-setup.ts). Every
 * helper of this folder then goes to it (`run-stack.ts`): `api`, `baseUrl`, the records, the
 * table reads, the in-process handlers.
 *
 * For a file whose work would change what the run's shared stack does for the files running beside
 * it: thousands of items and their purge, full-table scans, a storm of failing deliveries, a
 * setting the handlers read at load, or simply thousands of requests. DynamoDB Local answers one
 * request at a time (measured: 1,000 transactions took as long 8 at a time as one by one), so a
 * file that sends thousands delays every other file's requests, past the handlers' 4 s attempt
 * timeout on a busy machine (they answer 503); on a stack of its own it also runs on another core.
 */
import { afterAll, beforeAll } from 'vitest';
import { type LocalStack, type LocalStackSettings, startLocalStack } from '../../lib/local/stack.ts';
import { endpointsOf, TEST_STACK_SETTINGS } from './global-setup.ts';
import { useStack } from './run-stack.ts';
import { inStartSlot } from './start-slots.ts';

export interface OwnStack {
  /** The running stack; set once the file's `beforeAll` has run. */
  readonly stack: LocalStack;
}

export function stackOfItsOwn(settings: Partial<LocalStackSettings> = {}): OwnStack {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    // Warnings for what a file provokes on purpose (refused deliveries) would fill the output.
    process.env.LOG_LEVEL = 'ERROR';
    stack = await inStartSlot(() => startLocalStack({ ...TEST_STACK_SETTINGS, ...settings }));
    useStack(endpointsOf(stack));
  }, 120_000);
  afterAll(async () => {
    useStack(undefined);
    await stack?.stop();
  });
  return {
    get stack() {
      if (!stack) throw new Error('the stack of this file is not started yet (use it in a hook or a test)');
      return stack;
    },
  };
}
