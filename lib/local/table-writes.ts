/**
 * Tells the local stack's stream pollers that a write to their DynamoDB has just been answered, so
 * an idle poller can wait long between reads of an empty stream and still read a new record at
 * once (as the local queue's long poll wakes on a message).
 *
 * Every DynamoDB call of this process (the handlers', the stream consumers', a test's) goes
 * through `node:http`, whose diagnostics channel reports each answered request: no client or
 * handler knows about this. A write made by another process (a test worker writing the shared
 * stack's table, the `npm run` scripts) wakes nobody; the poller's idle interval bounds how late
 * it is read (`stream-poller.ts`).
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest } from 'node:http';

const WRITES = new Set(
  [
    'PutItem',
    'UpdateItem',
    'DeleteItem',
    'BatchWriteItem',
    'TransactWriteItems',
    'ExecuteStatement',
    'BatchExecuteStatement',
    'ExecuteTransaction',
  ].map((op) => `DynamoDB_20120810.${op}`),
);

/** Listeners by the `host:port` of the DynamoDB endpoint they watch. */
const listeners = new Map<string, Set<() => void>>();
let subscribed = false;

function onAnswered(message: unknown): void {
  const request = (message as { request?: ClientRequest }).request;
  if (!request || listeners.size === 0) return;
  if (!WRITES.has(String(request.getHeader('x-amz-target') ?? ''))) return;
  const wanted = listeners.get(String(request.getHeader('host') ?? ''));
  if (wanted) for (const listener of wanted) listener();
}

/**
 * Calls `listener` after every write to `endpoint` this process sends is answered (a failed one
 * too: a spurious wake costs one read). Returns the function that stops it.
 */
export function onTableWrite(endpoint: string, listener: () => void): () => void {
  if (!subscribed) {
    subscribe('http.client.response.finish', onAnswered);
    subscribed = true;
  }
  const host = new URL(endpoint).host;
  const set = listeners.get(host) ?? new Set();
  set.add(listener);
  listeners.set(host, set);
  return () => {
    set.delete(listener);
    if (set.size === 0 && listeners.get(host) === set) listeners.delete(host);
  };
}
