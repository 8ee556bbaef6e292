/**
 * Table stream -> action items, for actions recorded on their link's item (see
 * `lib/db/actions.ts`). Apart from `stream.ts` because it needs the table (and its client), which
 * tools that only enqueue or deliver do not.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { materializeLinkAction } from '../db/actions.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { isLinkActionRecord, type StreamRecordLike, safeNumber } from './stream.ts';

const logger = rootLogger.createChild();

/**
 * Write the action item of every link-action record (see `materializeLinkAction`), in parallel.
 * Returns the sequence numbers of records that could not be written, for the caller to retry; a
 * record whose action item exists already, or whose campaign is gone, is done.
 */
export async function materializeStreamRecords(
  records: readonly StreamRecordLike[],
): Promise<{ written: number; failedSequenceNumbers: string[] }> {
  let written = 0;
  const failed: string[] = [];
  await Promise.all(
    records.filter(isLinkActionRecord).map(async (record) => {
      try {
        const image = record.dynamodb!.NewImage as Record<string, AttributeValue>;
        const link = unmarshall(image, { wrapNumbers: safeNumber });
        if ((await materializeLinkAction(link)) === 'written') written++;
      } catch (err) {
        logger.warn('action item write failed', { error: (err as Error).message, records: 1 });
        failed.push(record.dynamodb?.SequenceNumber ?? '');
      }
    }),
  );
  return { written, failedSequenceNumbers: failed };
}
