/**
 * The DynamoDB call counter: a pass-through node:http proxy in front of DynamoDB Local that counts
 * every request by its `X-Amz-Target` operation, so round trips are counted on the wire, never by
 * the handlers. `test/integration/round-trips.test.ts` (the route budgets) and `npm run bench`
 * (calls per endpoint, and its floors) both count with it.
 *
 * Each request is put in a category by what it touches, never by who sent it (except the bench's
 * floor replays, which mark their user agent):
 * - `floor`   the bench's floor replays;
 * - `admin`   table management (DescribeTable at start-up);
 * - `apikey`  GetItem of an `APIKEY#` key: the authorizer (a separate, cached Lambda in AWS);
 * - `idblock` UpdateItem of a `SEQ#` key: an id-block reservation (one per 100 ids);
 * - `stream`  DynamoDB Streams calls: the local stream poller, not a request;
 * - `webhook` GetItem projecting `webhook_url`: the webhook delivery's campaign read;
 * - `action`  TransactWriteItems that puts an action item (`A#` sort key) without updating a
 *             link: the stream consumer writing a referred user's action from the link update
 *             that recorded it (every request's transaction also updates the link);
 * - `feed`    the stream consumer writing the events feed: a read or a transaction of a feed
 *             counter (`EVSEQ`), a batch of event lookups (`#EVT#` partitions);
 * - `rollup`  the stream consumer's counting (`lib/analytics/`): a write under a high-water mark
 *             (`hw_` attributes), any write of an analytics item (`AN#`), a read of the type
 *             registry, a strongly consistent read of a board, the window's marks (`WINDOW#`),
 *             parked work (`PARKED`), its eventually consistent batch read of campaigns, its
 *             batch read of links' all-time counts (`an_v` projected);
 * - `request` everything else: what a route's budget counts.
 * Calls DynamoDB answered with an error are also counted as `failed:<operation>`.
 *
 * While recording is on, every request (headers, body, when it arrived and when its answer was
 * complete) is also kept, so the bench can replay an endpoint's DynamoDB requests as its floor.
 *
 * While item tracking is on, every item a successful request reads or writes by key is counted by
 * its key and by how it was touched (`itemAccesses`): the bench's hot-item and cost figures.
 * Queries and scans touch items by range, not by key, and are not counted per item.
 */
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Counts = Record<string, number>;

export interface RecordedCall {
  category: string;
  op: string;
  headers: Record<string, string>;
  body: string;
  /** performance.now() at arrival and when the answer was complete: overlapping calls ran in parallel. */
  start: number;
  end: number;
}

/**
 * How a request touched an item by key: `GetItem`, `PutItem`, `UpdateItem`, `DeleteItem` (standard
 * calls), `BatchGetItem`, `BatchWriteItem:Put`, `BatchWriteItem:Delete`, `TransactWriteItems:Put`,
 * `…:Update`, `…:Delete`, `…:ConditionCheck`, `TransactGetItems:Get`; reads strongly consistent
 * end in ` (consistent)`. An update ends in the attributes its expression writes, sorted, as
 * ` [a b c]` (what decides whether it rewrites an index copy: `updatedAttributes`).
 */
export type Access = string;

/** One item's accesses while tracking was on: its key and a count per kind of access. */
export interface ItemAccesses {
  pk: string;
  sk: string;
  counts: Record<Access, number>;
}

export interface DynamoCounter {
  endpoint: string;
  /** Counts by `category:operation`, and when the last call that was not a stream poll or a floor came. */
  snapshot(): { counts: Counts; lastActivity: number };
  /** Keep every request from now until `recorded()`, which returns them. */
  record(): void;
  recorded(): RecordedCall[];
  /** Count every item touched by key, from now until `tracked()`, which returns the counts. */
  track(): void;
  tracked(): ItemAccesses[];
  stop(): Promise<void>;
}

const ADMIN = new Set([
  'DescribeTable',
  'CreateTable',
  'ListTables',
  'UpdateTimeToLive',
  'DescribeTimeToLive',
]);

export function categorize(op: string, service: string, body: string, userAgent = ''): string {
  if (userAgent.includes('bench-floor')) return 'floor';
  if (service.startsWith('DynamoDBStreams')) return 'stream';
  if (ADMIN.has(op)) return 'admin';
  try {
    const parsed = JSON.parse(body) as {
      Key?: { PK?: { S?: string }; SK?: { S?: string } };
      Item?: { PK?: { S?: string }; SK?: { S?: string } };
      ConsistentRead?: boolean;
      ExpressionAttributeNames?: Record<string, string>;
      ProjectionExpression?: string;
      TransactItems?: Array<{
        Put?: { Item?: { PK?: { S?: string }; SK?: { S?: string } } };
        Update?: { Key?: { PK?: { S?: string } } };
      }>;
      RequestItems?: Record<
        string,
        | Array<{ PutRequest?: { Item?: { PK?: { S?: string } } } }>
        | {
            Keys?: Array<{ SK?: { S?: string } }>;
            ConsistentRead?: boolean;
            ProjectionExpression?: string;
            ExpressionAttributeNames?: Record<string, string>;
          }
      >;
    };
    const pk = parsed.Key?.PK?.S ?? '';
    const items = parsed.TransactItems ?? [];
    const batch = Object.values(parsed.RequestItems ?? {})[0];
    if (op === 'GetItem' && parsed.Key?.SK?.S === 'EVSEQ') return 'feed';
    if (op === 'TransactWriteItems' && items.some((i) => i.Put?.Item?.SK?.S === 'EVSEQ')) return 'feed';
    if (
      op === 'BatchWriteItem' &&
      Array.isArray(batch) &&
      batch.length > 0 &&
      batch.every((r) => r.PutRequest?.Item?.PK?.S?.includes('#EVT#'))
    )
      return 'feed';
    const sk = parsed.Key?.SK?.S ?? parsed.Item?.SK?.S ?? '';
    const anyPk = pk || parsed.Item?.PK?.S || '';
    if (Object.values(parsed.ExpressionAttributeNames ?? {}).some((n) => n.startsWith('hw_')))
      return 'rollup';
    if ((op === 'UpdateItem' || op === 'PutItem') && sk.startsWith('AN#')) return 'rollup';
    if (op === 'GetItem' && (sk === 'AN#TYPES' || (sk.startsWith('AN#TOP#') && parsed.ConsistentRead)))
      return 'rollup';
    if (anyPk.startsWith('WINDOW#') || anyPk === 'PARKED') return 'rollup';
    if (op === 'BatchGetItem' && batch && !Array.isArray(batch)) {
      const keys = batch.Keys ?? [];
      if (keys.length > 0 && keys.every((k) => k.SK?.S === 'CAMPAIGN') && batch.ConsistentRead === false)
        return 'rollup';
      if (batch.ProjectionExpression && Object.values(batch.ExpressionAttributeNames ?? {}).includes('an_v'))
        return 'rollup';
    }
    if (op === 'GetItem' && pk.startsWith('APIKEY#')) return 'apikey';
    if (op === 'UpdateItem' && pk.startsWith('SEQ#')) return 'idblock';
    if (op === 'GetItem' && parsed.ProjectionExpression?.includes('webhook_url')) return 'webhook';
    if (
      op === 'TransactWriteItems' &&
      !items.some((i) => i.Update) &&
      items.some((i) => i.Put?.Item?.SK?.S?.startsWith('A#'))
    )
      return 'action';
  } catch {
    // Not JSON (another protocol): counted as a request.
  }
  return 'request';
}

type WireKey = Record<string, { S?: string }> | undefined;
interface WireRequest {
  Key?: WireKey;
  Item?: WireKey;
  ConsistentRead?: boolean;
  RequestItems?: Record<
    string,
    | Array<{ PutRequest?: { Item?: WireKey }; DeleteRequest?: { Key?: WireKey } }>
    | { Keys?: WireKey[]; ConsistentRead?: boolean }
  >;
  TransactItems?: Array<Record<string, WireUpdate & { Key?: WireKey; Item?: WireKey }>>;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}

interface WireUpdate {
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
}

/**
 * The top-level attributes an update expression writes (SET, ADD, REMOVE, DELETE), names resolved.
 * Written here rather than taken from a library: no maintained package parses update expressions,
 * and only the first element of each action's path is needed.
 */
export function updatedAttributes(update: WireUpdate): string[] {
  const names = new Set<string>();
  const text = update.UpdateExpression ?? '';
  // Clauses start with their keyword; each holds comma-separated actions (commas inside the
  // parentheses of a function such as if_not_exists are not separators).
  for (const clause of text.split(/(?<=^|\s)(?=(?:SET|ADD|REMOVE|DELETE)\s)/i)) {
    const body = clause.replace(/^\s*(SET|ADD|REMOVE|DELETE)\s+/i, '');
    let depth = 0;
    let start = 0;
    const actions: string[] = [];
    for (let i = 0; i <= body.length; i++) {
      const c = body[i];
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if ((c === ',' && depth === 0) || i === body.length) {
        actions.push(body.slice(start, i));
        start = i + 1;
      }
    }
    for (const action of actions) {
      const path = action.trim().split(/[\s=]/)[0] ?? '';
      const first = path.split(/[.[]/)[0] ?? '';
      if (!first) continue;
      names.add(first.startsWith('#') ? (update.ExpressionAttributeNames?.[first] ?? first) : first);
    }
  }
  return [...names].sort();
}

/** An update's access with what it wrote; without an expression, unknown: the bare access. */
const withAttributes = (access: string, update: WireUpdate) =>
  update.UpdateExpression === undefined ? access : `${access} [${updatedAttributes(update).join(' ')}]`;

/**
 * The items a request touches by key, and how (`Access`), from its wire body: the table's keys
 * `PK` and `SK`. Requests that touch no item by key (Query, Scan, table management) give none;
 * so does a body that is not JSON.
 */
export function itemAccessesOf(op: string, body: string): Array<{ pk: string; sk: string; access: Access }> {
  let req: WireRequest;
  try {
    req = JSON.parse(body) as WireRequest;
  } catch {
    return [];
  }
  const out: Array<{ pk: string; sk: string; access: Access }> = [];
  const add = (key: WireKey, access: Access, consistent?: boolean) => {
    const pk = key?.PK?.S;
    const sk = key?.SK?.S;
    if (pk !== undefined && sk !== undefined)
      out.push({ pk, sk, access: consistent ? `${access} (consistent)` : access });
  };
  switch (op) {
    case 'GetItem':
      add(req.Key, op, req.ConsistentRead);
      break;
    case 'UpdateItem':
      add(req.Key, withAttributes(op, req));
      break;
    case 'DeleteItem':
      add(req.Key, op);
      break;
    case 'PutItem':
      add(req.Item, op);
      break;
    case 'BatchGetItem':
      for (const table of Object.values(req.RequestItems ?? {}))
        if (!Array.isArray(table)) for (const key of table.Keys ?? []) add(key, op, table.ConsistentRead);
      break;
    case 'BatchWriteItem':
      for (const table of Object.values(req.RequestItems ?? {}))
        if (Array.isArray(table))
          for (const w of table) {
            if (w.PutRequest) add(w.PutRequest.Item, `${op}:Put`);
            if (w.DeleteRequest) add(w.DeleteRequest.Key, `${op}:Delete`);
          }
      break;
    case 'TransactWriteItems':
    case 'TransactGetItems':
      for (const t of req.TransactItems ?? [])
        for (const [kind, spec] of Object.entries(t))
          add(
            spec.Key ?? spec.Item,
            kind === 'Update' ? withAttributes(`${op}:${kind}`, spec) : `${op}:${kind}`,
          );
      break;
  }
  return out;
}

/** `after - before`, dropping zeroes. */
export function diffCounts(before: Counts, after: Counts): Counts {
  const out: Counts = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

/** The `request:` calls of a diff, by operation: what a route's budget counts. */
export function requestOps(counts: Counts): Record<string, number> {
  const ops: Record<string, number> = {};
  for (const [key, n] of Object.entries(counts))
    if (key.startsWith('request:')) ops[key.slice('request:'.length)] = n;
  return ops;
}

export async function startDynamoCounter(target: string, host = '127.0.0.1'): Promise<DynamoCounter> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const counts = new Map<string, number>();
  const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  let lastActivity = Date.now();
  let recording: RecordedCall[] | undefined;
  let tracking: Map<string, ItemAccesses> | undefined;
  const track = (op: string, body: string) => {
    if (!tracking) return;
    for (const { pk, sk, access } of itemAccessesOf(op, body)) {
      const key = `${pk}\u0000${sk}`;
      const entry = tracking.get(key) ?? { pk, sk, counts: {} };
      entry.counts[access] = (entry.counts[access] ?? 0) + 1;
      tracking.set(key, entry);
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const amzTarget = String(req.headers['x-amz-target'] ?? 'unknown.unknown');
      const dot = amzTarget.indexOf('.');
      const op = amzTarget.slice(dot + 1);
      const text = body.toString('utf8');
      const category = categorize(op, amzTarget.slice(0, Math.max(dot, 0)), text, req.headers['user-agent']);
      bump(`${category}:${op}`);
      if (category !== 'stream' && category !== 'floor') lastActivity = Date.now();
      const call: RecordedCall | undefined = recording && {
        category,
        op,
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(
            ([h]) => h.startsWith('x-amz') || h === 'authorization' || h === 'content-type',
          ),
        ) as Record<string, string>,
        body: text,
        start: performance.now(),
        end: Number.NaN,
      };
      if (call) recording?.push(call);
      const forward = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
          agent,
        },
        (up) => {
          const status = up.statusCode ?? 502;
          // Failed calls (e.g. a transaction cancelled by a conflicting one, then retried).
          if (status >= 400) bump(`failed:${op}`);
          // Only what DynamoDB did: a failed call touched no item (unprocessed batch items aside).
          else if (category !== 'stream' && category !== 'floor') track(op, text);
          res.writeHead(status, up.headers);
          if (call) up.on('end', () => (call.end = performance.now()));
          up.pipe(res);
        },
      );
      forward.on('error', (err) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(err));
      });
      forward.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    endpoint: `http://${host}:${(server.address() as AddressInfo).port}`,
    snapshot: () => ({ counts: Object.fromEntries(counts), lastActivity }),
    record: () => {
      recording = [];
    },
    recorded: () => {
      const calls = recording ?? [];
      recording = undefined;
      return calls;
    },
    track: () => {
      tracking = new Map();
    },
    tracked: () => {
      const items = [...(tracking?.values() ?? [])];
      tracking = undefined;
      return items;
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      agent.destroy();
      await closed;
    },
  };
}
