/**
 * A webhook receiver on 127.0.0.1 that records every request, for the tests and the benchmark
 * (scripts/bench/webhooks.ts). Test tooling: nothing in lib/ or functions/ imports it.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** `Date.now()` when the body had fully arrived. */
  receivedAt: number;
  /** `performance.now()` then, for sub-millisecond timing (the bench's direct-POST floor). */
  at: number;
}

/**
 * How to answer the n-th request (0-based); default 200 with an empty body. `delayMs` holds the
 * answer back, `until` until the promise settles (a test holds an attempt in flight while it
 * changes what the next one will find); `hang-up` closes the connection without answering;
 * `silence` never answers.
 */
export type Responder = (
  request: ReceivedRequest,
  index: number,
) =>
  | {
      status: number;
      headers?: Record<string, string>;
      body?: string;
      delayMs?: number;
      until?: Promise<unknown>;
    }
  | 'hang-up'
  | 'silence'
  | undefined;

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(respond?: Responder): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: (r: ReceivedRequest[]) => void }> = [];
  const server = createServer((req, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
        at: performance.now(),
      };
      const index = requests.push(request) - 1;
      const answer = respond?.(request, index) ?? { status: 200 };
      if (answer === 'hang-up') req.socket.destroy();
      else if (answer !== 'silence') {
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body ?? '');
        };
        if (answer.until) void answer.until.finally(send);
        else if (answer.delayMs) setTimeout(send, answer.delayMs).unref();
        else send();
      }
      for (const w of [...waiters]) {
        if (requests.length >= w.count) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(requests.slice());
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    waitFor(count, timeoutMs = 20_000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const waiter = {
          count,
          resolve: (r: ReceivedRequest[]) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(
            new Error(`expected ${count} webhook requests, got ${requests.length} within ${timeoutMs} ms`),
          );
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
