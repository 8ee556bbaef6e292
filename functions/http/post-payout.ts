import { storedAnswer } from '../../lib/db/idempotency.ts';
import { createPayout } from '../../lib/db/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { CreatePayout } from '../../lib/operations/compiled.ts';

/** Endpoint 31: record a payment made elsewhere of a recipient's approved rewards. */
export const handler = httpHandler(
  { ...CreatePayout, storedAnswers: storedAnswer },
  async ({ tenant, body, idempotency }) => ({
    status: 201,
    body: await createPayout(
      tenant,
      {
        campaignId: body.campaign_id,
        recipient: body.recipient,
        recipientId: body.recipient_id,
        reference: body.reference ?? null,
        nowMs: Date.now(),
      },
      idempotency,
    ),
  }),
);
