import { storedAnswer } from '../../lib/db/idempotency.ts';
import { changeReward, voidRewardById } from '../../lib/db/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { VoidReward } from '../../lib/operations/compiled.ts';

/** Endpoint 29: void an unpaid reward (with its following adjustments), or forgive a clawback. */
export const handler = httpHandler(
  { ...VoidReward, storedAnswers: storedAnswer },
  async ({ tenant, path, body, idempotency }) => ({
    status: 200,
    body: await changeReward(() => voidRewardById(tenant, path.id, body.reason, idempotency)),
  }),
);
