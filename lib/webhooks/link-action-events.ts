/**
 * Table stream -> the events of actions committed on their link's item (`lib/db/actions.ts`).
 * Pure (no table access), apart from `link-actions.ts`, which writes their items.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { newActionItem } from '../db/entities/action.ts';
import { linkActionFromItem, linkFromItem } from '../db/entities/link.ts';
import { logger as rootLogger } from '../observability/logger.ts';
import { isLinkActionRecord, isRewardEventRecord, type StreamRecordLike, safeNumber } from './stream.ts';

const logger = rootLogger.createChild();

/**
 * The records the feed and the webhook queue read: each link-action record stands for the INSERT
 * of the action item it becomes (the same item `materializeLinkAction` writes, event included),
 * at the link record's place in the stream, so an action's event is fed in the order its link
 * committed it, among the other events of that link, and one stream hop sooner. The INSERT of the
 * item written later is marked (`EVENT_FROM_LINK`) and is no event record (`isEventRecord`), so
 * the event is fed once. A link image that cannot be read is passed on as it is (and so skipped).
 * A reward's MODIFY that carries an event (a change of state) stands for that event too.
 */
export function eventRecordsOf(records: readonly StreamRecordLike[]): StreamRecordLike[] {
  return records.map((record) => {
    // A reward's change of state is the event its new image carries, as an INSERT would be.
    if (isRewardEventRecord(record)) return { ...record, eventName: 'INSERT' };
    if (!isLinkActionRecord(record)) return record;
    try {
      const image = record.dynamodb!.NewImage as Record<string, AttributeValue>;
      const link = unmarshall(image, { wrapNumbers: safeNumber });
      const { item } = newActionItem(linkFromItem(link), linkActionFromItem(link));
      return {
        eventName: 'INSERT',
        dynamodb: {
          NewImage: marshall(item, { removeUndefinedValues: true }),
          SequenceNumber: record.dynamodb!.SequenceNumber,
        },
      };
    } catch (err) {
      logger.warn('link action record unreadable', { error: (err as Error).message, records: 1 });
      return record;
    }
  });
}
