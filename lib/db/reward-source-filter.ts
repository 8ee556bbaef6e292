/**
 * Which table stream records make or change rewards (`lib/db/reward-sources.ts`): signups and
 * conversions (their INSERTs), and refunds (a conversion's MODIFY to a refunded status; the write
 * of its `reward_ids`, which leaves a sale `completed`, passes no filter). Plain data with no
 * imports, shared by the CDK mapping (`infra/rewards.ts`) and the local stream poller.
 */
export const REWARD_SOURCE_FILTERS = [
  { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['referred_user', 'conversion'] } } } },
  {
    eventName: ['MODIFY'],
    dynamodb: {
      NewImage: { type: { S: ['conversion'] }, status: { S: ['partially_refunded', 'refunded'] } },
    },
  },
] as const;

/**
 * No batching window: a reward shows within a second of its signup or sale. 100 records a batch:
 * each is a few DynamoDB calls in its campaign's turn, well within the function's timeout.
 */
export const REWARD_STREAM_BATCHING = { batchSize: 100 } as const;
