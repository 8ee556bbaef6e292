/**
 * The rewards' scheduled release (contract, "Rewards": `pending` becomes `approved` when its hold
 * ends, without anyone polling). In AWS an EventBridge rule runs it every minute
 * (`infra/rewards.ts`); locally the local stack runs it on a timer (`lib/local/stack.ts`). Each run
 * releases every due reward, a page of the due index at a time, until none is left or its time is
 * nearly up (the next run goes on). Runs may overlap: each release is conditioned on the reward
 * still being `pending`, so none is released twice.
 */
import type { Context } from 'aws-lambda';
import { withDeadline } from '../../lib/aws/deadline.ts';
import { releaseDueRewards } from '../../lib/db/rewards.ts';
import { logger } from '../../lib/observability/logger.ts';

/** Time kept back from the function's timeout for the last page to finish. */
const SAFETY_MS = 10_000;

export async function handler(_event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>) {
  const deadline = Date.now() + Math.max(5_000, (context?.getRemainingTimeInMillis() ?? 60_000) - SAFETY_MS);
  return withDeadline(deadline, async () => {
    let released = 0;
    for (let more = true; more && Date.now() < deadline; ) {
      const page = await releaseDueRewards(Date.now());
      released += page.released;
      more = page.more;
    }
    if (released > 0) logger.info('rewards released', { released });
    return { released };
  });
}
