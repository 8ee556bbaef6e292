import { describe, expect, it } from 'vitest';
import { batchResponse, messageIdOf, processRecords, sequenceNumberOf } from '../../lib/queues/batch.ts';

const messages = (...ids: string[]) => ids.map((messageId) => ({ messageId }));
const streamRecords = (...seqs: string[]) => seqs.map((SequenceNumber) => ({ dynamodb: { SequenceNumber } }));

describe('partial batch responses', () => {
  it('names each failed item once', () => {
    expect(batchResponse(['2', '1', '2'])).toEqual({
      batchItemFailures: [{ itemIdentifier: '2' }, { itemIdentifier: '1' }],
    });
    expect(batchResponse([])).toEqual({ batchItemFailures: [] });
  });

  it('reports SQS messages whose handler threw or asked for a retry, in the batch order, and logs the errors', async () => {
    const errors: string[] = [];
    const response = await processRecords(
      messages('m-1', 'm-2', 'm-3', 'm-4'),
      async ({ messageId }) => {
        // The later failure finishes first: the response still follows the batch.
        if (messageId === 'm-1') await new Promise((r) => setTimeout(r, 20));
        if (messageId === 'm-1') throw new Error('boom');
        if (messageId === 'm-3') return 'retry';
      },
      {
        itemIdOf: messageIdOf,
        onError: (err, record) => errors.push(`${record.messageId}: ${(err as Error).message}`),
      },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-3' }]);
    expect(errors).toEqual(['m-1: boom']);
  });

  it('handles every SQS message at once', async () => {
    let running = 0;
    let most = 0;
    await processRecords(
      messages('a', 'b', 'c'),
      async () => {
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 10));
        running--;
      },
      { itemIdOf: messageIdOf },
    );
    expect(most).toBe(3);
  });

  it('in order (a stream shard): one record at a time, stopping at the first failure and reporting it alone', async () => {
    const seen: string[] = [];
    const response = await processRecords(
      streamRecords('10', '11', '12', '13'),
      async (record) => {
        const seq = sequenceNumberOf(record);
        seen.push(seq);
        if (seq === '11' || seq === '13') throw new Error('send failed');
      },
      { itemIdOf: sequenceNumberOf, order: 'in-order' },
    );
    expect(seen).toEqual(['10', '11']);
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: '11' }] });
  });

  it('reports nothing when every record succeeds', async () => {
    for (const order of ['in-order', 'parallel'] as const) {
      expect(
        await processRecords(streamRecords('1', '2'), async () => {}, { itemIdOf: sequenceNumberOf, order }),
      ).toEqual({ batchItemFailures: [] });
    }
  });
});
