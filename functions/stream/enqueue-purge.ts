/**
 * Table stream consumer: when a campaign item is removed (DELETE /campaign), put a purge job for
 * its partition on the purge queue. The event source mapping's filter passes only REMOVEs of
 * `CAMPAIGN` items; a failed send is reported per record so Lambda retries it, and a duplicate
 * job is harmless because purging is idempotent.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { createSqsClient } from '../../lib/aws/clients.ts';
import { config } from '../../lib/config.ts';
import { parseCampaignPartition } from '../../lib/db/purge.ts';
import { processRecords, sequenceNumberOf } from '../../lib/queues/batch.ts';

const sqs = createSqsClient();
const queueUrl = config.purgeQueueUrl;

/**
 * The stream filter of the event source mapping. It lives in a module without side effects
 * (`lib/db/purge-filter.ts`) so that the CDK code can import it without running this module's
 * top level, which needs PURGE_QUEUE_URL.
 */
export { PURGE_RECORD_FILTER } from '../../lib/db/purge-filter.ts';

export const handler = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
  processRecords(
    event.Records,
    async (record) => {
      const pk = record.dynamodb?.Keys?.PK?.S;
      // The local poller has no filter: skip what the mapping's filter would have dropped.
      if (record.eventName !== 'REMOVE' || record.dynamodb?.Keys?.SK?.S !== 'CAMPAIGN' || !pk) return;
      if (!parseCampaignPartition(pk)) return;
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ pk }) }));
    },
    // Lambda retries from the first failure; later records come again with it.
    { itemIdOf: sequenceNumberOf, order: 'in-order' },
  );
