/**
 * The counting proxy (run as a child process by `counting-proxy.ts`): a node:http server between
 * the local stack and DynamoDB Local that forwards every request unchanged and counts it by its
 * `X-Amz-Target` operation, so the bench counts round trips without trusting the handlers.
 *
 * Each request is also put in a category by what it touches, never by who sent it (except the
 * bench's own floor client, which marks its user agent):
 * - `floor`   the bench's floor operations;
 * - `admin`   table management (DescribeTable at start-up);
 * - `apikey`  GetItem of an `APIKEY#` key: the authorizer (a separate, cached Lambda in AWS);
 * - `idblock` UpdateItem of a `SEQ#` key: an id-block reservation (one per 100 ids);
 * - `stream`  DynamoDB Streams calls: the local stream poller, not a request;
 * - `webhook` GetItem projecting `webhook_url`: the webhook delivery's campaign read;
 * - `action`  TransactWriteItems that puts an action item (`A#` sort key) without updating a
 *             link: the stream consumer writing a referred user's action from the link update
 *             that recorded it (every request's transaction also updates the link);
 * - `request` everything else.
 * Calls DynamoDB answered with an error are also counted as `failed:<operation>`.
 *
 * While recording is on, every request (headers, body, when it arrived and when its answer was
 * complete) is also kept, so the bench can replay an endpoint's DynamoDB requests as its floor.
 */
import { Agent, createServer, request } from 'node:http';

const target = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
const counts = new Map<string, number>();
let lastActivity = Date.now();
let recording: RecordedCall[] | undefined;

export interface RecordedCall {
  category: string;
  op: string;
  headers: Record<string, string>;
  body: string;
  /** performance.now() at arrival and when the answer was complete: overlapping calls ran in parallel. */
  start: number;
  end: number;
}

interface DynamoKey {
  PK?: { S?: string };
}

const ADMIN = new Set([
  'DescribeTable',
  'CreateTable',
  'ListTables',
  'UpdateTimeToLive',
  'DescribeTimeToLive',
]);

function categorize(op: string, service: string, body: Buffer, userAgent: string): string {
  if (userAgent.includes('bench-floor')) return 'floor';
  if (service.startsWith('DynamoDBStreams')) return 'stream';
  if (ADMIN.has(op)) return 'admin';
  if (op === 'TransactWriteItems') return materializesAction(body) ? 'action' : 'request';
  if (op !== 'GetItem' && op !== 'UpdateItem') return 'request';
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { Key?: DynamoKey; ProjectionExpression?: string };
    const pk = parsed.Key?.PK?.S ?? '';
    if (op === 'GetItem' && pk.startsWith('APIKEY#')) return 'apikey';
    if (op === 'UpdateItem' && pk.startsWith('SEQ#')) return 'idblock';
    if (op === 'GetItem' && parsed.ProjectionExpression?.includes('webhook_url')) return 'webhook';
  } catch {
    // Not JSON (another protocol): counted as a request.
  }
  return 'request';
}

function materializesAction(body: Buffer): boolean {
  try {
    const { TransactItems = [] } = JSON.parse(body.toString('utf8')) as {
      TransactItems?: Array<{ Put?: { Item?: { SK?: { S?: string } } }; Update?: unknown }>;
    };
    return (
      !TransactItems.some((i) => i.Update) && TransactItems.some((i) => i.Put?.Item?.SK?.S?.startsWith('A#'))
    );
  } catch {
    return false;
  }
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const amzTarget = String(req.headers['x-amz-target'] ?? 'unknown.unknown');
    const dot = amzTarget.indexOf('.');
    const service = dot === -1 ? amzTarget : amzTarget.slice(0, dot);
    const op = dot === -1 ? amzTarget : amzTarget.slice(dot + 1);
    const category = categorize(op, service, body, String(req.headers['user-agent'] ?? ''));
    const key = `${category}:${op}`;
    const call: RecordedCall | undefined = recording && {
      category,
      op,
      headers: Object.fromEntries(
        Object.entries(req.headers).filter(
          ([h]) => h.startsWith('x-amz') || h === 'authorization' || h === 'content-type',
        ),
      ) as Record<string, string>,
      body: body.toString('utf8'),
      start: performance.now(),
      end: Number.NaN,
    };
    if (call) recording?.push(call);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (category !== 'stream' && category !== 'floor') lastActivity = Date.now();
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent,
      },
      (up) => {
        const status = up.statusCode ?? 502;
        // Failed calls (e.g. a transaction cancelled by a conflicting one, then retried).
        if (status >= 400) counts.set(`failed:${op}`, (counts.get(`failed:${op}`) ?? 0) + 1);
        res.writeHead(status, up.headers);
        if (call) up.on('end', () => (call.end = performance.now()));
        up.pipe(res);
      },
    );
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
    upstream.end(body);
  });
});
server.keepAliveTimeout = 60_000;

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.send?.({ type: 'ready', port });
});

process.on('message', (message: { type: string; id: number }) => {
  if (message.type === 'record') recording = [];
  else if (message.type === 'recorded') {
    process.send?.({ type: 'recorded', id: message.id, calls: recording ?? [] });
    recording = undefined;
  } else if (message.type === 'snapshot') {
    process.send?.({ type: 'snapshot', id: message.id, counts: Object.fromEntries(counts), lastActivity });
  } else if (message.type === 'stop') {
    server.close();
    server.closeAllConnections();
    agent.destroy();
    process.disconnect?.();
  }
});
// The parent went away: do not linger.
process.on('disconnect', () => process.exit(0));
