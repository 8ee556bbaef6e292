import { recipientBalance } from '../../lib/db/rewards.ts';
import { httpHandler } from '../../lib/http/handler.ts';
import { GetBalance } from '../../lib/operations/compiled.ts';

/** Endpoint 30: one recipient's rewards summed by state, in the campaign's currency. */
export const handler = httpHandler(GetBalance, async ({ tenant, path, query }) => ({
  status: 200,
  body: await recipientBalance(
    tenant,
    path.campaign_id,
    query.recipient === 'referred_user' ? 'referred_user' : 'referrer',
    path.recipient_id,
  ),
}));
