/**
 * A pass-through proxy in front of DynamoDB Local that answers a transaction only once it is on
 * disk.
 *
 * DynamoDB Local (2026-01-16 build) runs every SQLite statement on one job queue, and waits for
 * each statement's job before it answers: except the COMMIT of a transaction, which
 * `SQLiteDBAccess.commitTransaction` puts on the queue without waiting for it. The 200 can leave before the COMMIT has run, and a `kill -9` in between loses a
 * transaction its caller was told about (measured: about one in a few hundred under load). No
 * setting changes that. The queue is first in, first out, so a read sent after the 200 runs after
 * the COMMIT: after a TransactWriteItems the proxy sends one (a GetItem, on the table the
 * transaction wrote, of a key no item has) and answers the caller when it returns. Single-item
 * writes and batches are durable when answered and pass straight through; the service sends no
 * PartiQL transactions.
 */
import { Agent, createServer, type IncomingHttpHeaders, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tableDefinition } from '../table-definition.ts';

const TRANSACT_WRITE = 'DynamoDB_20120810.TransactWriteItems';

export interface DynamoProxy {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startDynamoCommitProxy(target: string, host = '127.0.0.1'): Promise<DynamoProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  const send = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const req = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method,
          path,
          agent,
          headers: { ...headers, host: upstream.host, 'content-length': String(body.length) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  /** A consistent read that DynamoDB Local queues behind every COMMIT queued before it. */
  const barrier = async (headers: IncomingHttpHeaders, tableName: string) => {
    const key = {
      [tableDefinition.partitionKey]: { S: '#commit-barrier' },
      [tableDefinition.sortKey]: { S: '#' },
    };
    await send(
      'POST',
      '/',
      {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': 'DynamoDB_20120810.GetItem',
        ...(headers.authorization ? { authorization: headers.authorization } : {}),
      },
      Buffer.from(JSON.stringify({ TableName: tableName, Key: key, ConsistentRead: true })),
    );
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const target = String(req.headers['x-amz-target'] ?? '');
      const { host: _host, connection: _connection, ...headers } = req.headers;
      send(req.method ?? 'POST', req.url ?? '/', headers, body)
        .then(async (answer) => {
          const table =
            target === TRANSACT_WRITE && answer.status === 200 ? transactionTable(body) : undefined;
          if (table) await barrier(headers, table);
          const { connection: _c, 'transfer-encoding': _te, ...answerHeaders } = answer.headers;
          res.writeHead(answer.status, { ...answerHeaders, 'content-length': String(answer.body.length) });
          res.end(answer.body);
        })
        .catch((err: unknown) => {
          // The caller's SDK retries a 5xx, as it would a dropped connection.
          res.writeHead(503, { 'content-type': 'application/x-amz-json-1.0' });
          res.end(
            JSON.stringify({
              __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable',
              message: `DynamoDB Local unreachable: ${err instanceof Error ? err.message : String(err)}`,
            }),
          );
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}

/** The first table a TransactWriteItems names (the local stack writes one table). */
function transactionTable(body: Buffer): string | undefined {
  try {
    const input = JSON.parse(body.toString('utf8')) as {
      TransactItems?: Array<Record<string, { TableName?: string } | undefined>>;
    };
    for (const item of input.TransactItems ?? []) {
      for (const op of Object.values(item)) if (op?.TableName) return op.TableName;
    }
  } catch {
    // not JSON: DynamoDB Local refused it
  }
  return undefined;
}
