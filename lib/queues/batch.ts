/**
 * Partial batch responses (`ReportBatchItemFailures`) for every SQS and table-stream consumer:
 * which records of a batch Lambda must hand out again. SQS retries exactly the messages named; a
 * stream mapping retries from the lowest sequence number named, with every later record.
 *
 * A few lines of our own rather than `@aws-lambda-powertools/batch`: each function bundle is
 * measured against a bare-SDK floor (`npm run bench`, `test/unit/bundle-size.test.ts`), and the
 * Powertools processor would add a dependency and its record-type dispatch to five bundles to do
 * what `processRecords` does here. It would also not fit two of the consumers, which fail records
 * in groups (the webhook consumer's SendMessageBatch calls) or must stop at the first failure (a
 * stream shard's order). Nothing here imports anything, so it costs the bundles a few hundred bytes.
 */

export interface BatchResponse {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** The SQS message id: what a queue consumer reports. */
export const messageIdOf = (record: { readonly messageId: string }): string => record.messageId;

/** The stream record's sequence number: what a stream consumer reports. */
export const sequenceNumberOf = (record: {
  readonly dynamodb?: { readonly SequenceNumber?: string };
}): string => record.dynamodb?.SequenceNumber ?? '';

/** The response that asks Lambda to retry these items (message ids or sequence numbers) once each. */
export function batchResponse(failedItemIds: Iterable<string>): BatchResponse {
  return { batchItemFailures: [...new Set(failedItemIds)].map((itemIdentifier) => ({ itemIdentifier })) };
}

/** What a record handler may return: `'retry'` fails the record without an error being thrown. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler with nothing to report just returns.
export type RecordOutcome = void | 'retry';

export interface ProcessRecordsOptions<R> {
  /** How a record is named in the response: `messageIdOf` (SQS) or `sequenceNumberOf` (streams). */
  readonly itemIdOf: (record: R) => string;
  /**
   * `'in-order'` (a stream shard): one record at a time, stopping at the first failure, which is
   * reported alone; Lambda retries from it and the later records come again with it, so none is
   * handled ahead of an earlier one. `'parallel'` (the default; independent SQS messages): every
   * record at once, each failure reported, in the batch's order.
   */
  readonly order?: 'in-order' | 'parallel';
  /** Called with what a record's handler threw, before the record is reported as failed. */
  readonly onError?: (error: unknown, record: R) => void;
}

/**
 * Runs `handle` on each record and reports the ones whose handler threw or returned `'retry'`.
 */
export async function processRecords<R>(
  records: readonly R[],
  handle: (record: R) => Promise<RecordOutcome>,
  options: ProcessRecordsOptions<R>,
): Promise<BatchResponse> {
  const succeeded = async (record: R): Promise<boolean> => {
    try {
      return (await handle(record)) !== 'retry';
    } catch (err) {
      options.onError?.(err, record);
      return false;
    }
  };
  if (options.order === 'in-order') {
    for (const record of records) {
      if (!(await succeeded(record))) return batchResponse([options.itemIdOf(record)]);
    }
    return batchResponse([]);
  }
  const results = await Promise.all(records.map(succeeded));
  return batchResponse(records.filter((_, i) => !results[i]).map(options.itemIdOf));
}
