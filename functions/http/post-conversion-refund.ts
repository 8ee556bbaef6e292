import { refundConversion } from '../../lib/db/conversions.ts';
import { storedAnswer } from '../../lib/db/idempotency.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { RefundConversion } from '../../lib/operations/compiled.ts';

/** Endpoint 24: refund part or all of what is left of a conversion. */
export const handler = httpHandler(
  { ...RefundConversion, storedAnswers: storedAnswer },
  async ({ tenant, body, path, idempotency }) => ({
    status: 200,
    body: await refundConversion(tenant, path.id, body.amount, idempotency),
  }),
);
