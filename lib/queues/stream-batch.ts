/**
 * What a table-stream event source mapping hands its function and what it expects back, with
 * `ReportBatchItemFailures` and, when the mapping has one, a tumbling window (`TumblingWindowInSeconds`).
 * The same in AWS and on the local stack, whose stream poller (`lib/local/stream-poller.ts`)
 * keeps exactly these rules. Types only: a handler imports nothing at run time from here.
 */
import type { DynamoDBRecord } from 'aws-lambda';

/** What a function carries from one invocation of a window to the next: any JSON object. */
export type WindowState = Record<string, unknown>;

/** A tumbling window: `[start, end)`, ISO 8601 times, aligned to multiples of its length since the epoch. */
export interface StreamWindow {
  start: string;
  end: string;
}

/**
 * One invocation's batch: records of one shard, in stream order, at most the mapping's batch size,
 * and only those that match one of the mapping's filters (when it has any).
 *
 * The window fields are present exactly when the mapping has a tumbling window (`StreamWindowEvent`).
 */
export interface StreamBatchEvent<S extends WindowState = WindowState> {
  Records: DynamoDBRecord[];
  /** The shard the records come from. */
  shardId: string;
  /** The stream's ARN. */
  eventSourceARN: string;
  /**
   * The window every record of this batch belongs to (a batch never mixes windows): the window of
   * its `dynamodb.ApproximateCreationDateTime`. A window that is over is never opened again: a
   * record read after its window was closed joins the next window. (DynamoDB Local gives that time
   * to the minute only; the local poller estimates the second, `lib/local/stream-records.ts`.)
   */
  window?: StreamWindow;
  /**
   * The `state` returned by the last successful invocation of this window; `{}` on the window's
   * first invocation (and after a window terminated early, see `isWindowTerminatedEarly`).
   */
  state?: S;
  /**
   * True on the window's last invocation: the window is over (a later record came, the shard
   * ended, or the clock passed its end with everything read), and this invocation carries the
   * window's records still to hand over, possibly none. Only once it succeeds does the next
   * window begin, with `{}`. Its returned `state` is dropped (but must be present).
   */
  isFinalInvokeForWindow?: boolean;
  /**
   * True on a final invocation made because the window's state grew past 1 MB (serialised as
   * JSON): it carries no records and that state, for the function to flush it. The same window
   * then goes on with `{}`.
   */
  isWindowTerminatedEarly?: boolean;
}

/** The event of a mapping with a tumbling window: the window fields are always there. */
export type StreamWindowEvent<S extends WindowState = WindowState> = StreamBatchEvent<S> &
  Required<
    Pick<StreamBatchEvent<S>, 'window' | 'state' | 'isFinalInvokeForWindow' | 'isWindowTerminatedEarly'>
  >;

/**
 * A function's answer.
 *
 * - `batchItemFailures`: the sequence numbers of failed records. The invocation then failed: the
 *   records before the lowest one named count as done, and that record and every later one come
 *   again (after a pause, until they succeed) in a batch of the same window. An identifier that is
 *   not a record of the batch, like a thrown error, fails the whole batch.
 * - `state` (a mapping with a tumbling window): required, a JSON object; without it the whole
 *   invocation failed (Lambda's rule). The records come again with the `state` the failed
 *   invocation was given: a failed invocation's `state` is dropped, even when records before the
 *   first failure count as done.
 */
export interface StreamBatchResponse<S extends WindowState = WindowState> {
  batchItemFailures?: Array<{ itemIdentifier: string }>;
  state?: S;
}
