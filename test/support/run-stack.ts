/**
 * The stack a test file's requests, table reads and in-process handlers go to: the integration
 * run's shared stack (its global setup, test/support/global-setup.ts), or one the file started for
 * itself (`own-stack.ts`), which then stands in for it in every helper of this folder. Each file
 * runs in a worker process of its own, so the choice is the file's alone.
 */
import { inject } from 'vitest';
import type { StackEndpoints } from './global-setup.ts';

let own: StackEndpoints | undefined;

export function runStack(): StackEndpoints {
  return own ?? inject('stack');
}

/** From now on in this file, `runStack()` is `stack` (undefined: the run's shared stack again). */
export function useStack(stack: StackEndpoints | undefined): void {
  own = stack;
}
