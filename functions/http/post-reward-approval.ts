import { storedAnswer } from '../../lib/db/idempotency.ts';
import { approveRewardById, changeReward } from '../../lib/db/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { ApproveReward } from '../../lib/operations/compiled.ts';

/** Endpoint 28: a reward in review goes to its hold; a pending one is approved now. */
export const handler = httpHandler(
  { ...ApproveReward, storedAnswers: storedAnswer },
  async ({ tenant, path, idempotency }) => ({
    status: 200,
    body: await changeReward(() => approveRewardById(tenant, path.id, Date.now(), idempotency)),
  }),
);
