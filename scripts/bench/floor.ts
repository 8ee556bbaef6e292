/**
 * The floor of an endpoint: the DynamoDB requests the stack made for one of its requests, as the
 * counting proxy recorded them (operation, headers, body), replayed byte for byte straight to
 * DynamoDB Local over a bare keep-alive HTTP client, in the same order and with the same
 * parallelism (calls whose recorded spans overlapped are sent together). So the floor is, by
 * construction, the same DynamoDB operations without our code: no SDK, no handler, no gateway.
 *
 * A replayed write meets the state its first run left behind, so a write guarded by a condition
 * (a Put of a new item, a Delete of an item now gone) is refused on replay: DynamoDB still reads
 * the item and evaluates the condition, the same round trip, but writes nothing. A transaction's
 * ClientRequestToken is dropped on replay, so DynamoDB evaluates it again rather than answering
 * from its idempotency record. The report says which operations were refused.
 */
import { Agent, request } from 'node:http';
import type { RecordedCall } from './counting-proxy.ts';

export interface Floor {
  /** What the floor issues, in words: `→` between steps, `‖` between parallel calls. */
  ops: string;
  /** Operations DynamoDB refused on replay (a condition the first run made false). */
  refused: string[];
  /** One replay; resolves with the number of calls DynamoDB answered with an error. */
  run(): Promise<number>;
}

/** The calls a request makes itself (the authorizer's included; background work and id blocks not). */
const OWN = new Set(['request', 'apikey']);

function describe(call: RecordedCall): string {
  if (call.category === 'apikey') return 'GetItem(api key)';
  const b = JSON.parse(call.body) as {
    IndexName?: string;
    TransactItems?: Array<Record<string, unknown>>;
    RequestItems?: Record<string, { Keys?: unknown[] }>;
    ReturnValues?: string;
  };
  const details = [
    b.IndexName,
    b.TransactItems?.map((i) => Object.keys(i)[0]).join(', '),
    b.RequestItems && `${Object.values(b.RequestItems).reduce((a, t) => a + (t.Keys?.length ?? 0), 0)} keys`,
    b.ReturnValues && b.ReturnValues !== 'NONE' ? b.ReturnValues : undefined,
  ].filter(Boolean);
  return details.length ? `${call.op}(${details.join(', ')})` : call.op;
}

function withoutToken(body: string): string {
  const { ClientRequestToken: _, ...rest } = JSON.parse(body) as Record<string, unknown>;
  return JSON.stringify(rest);
}

export function replayFloor(recorded: RecordedCall[], proxyUrl: string, sockets = 64): Floor | undefined {
  const calls = recorded.filter((c) => OWN.has(c.category)).sort((a, b) => a.start - b.start);
  if (!calls.length) return undefined;
  const steps: RecordedCall[][] = [];
  let stepEnd = Number.NEGATIVE_INFINITY;
  for (const call of calls) {
    if (call.start < stepEnd) {
      steps.at(-1)!.push(call);
      stepEnd = Math.max(stepEnd, call.end);
    } else {
      steps.push([call]);
      stepEnd = call.end;
    }
  }
  const url = new URL(proxyUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: sockets });
  const send = (call: RecordedCall) =>
    new Promise<{ op: string; status: number }>((resolve, reject) => {
      const body = Buffer.from(call.op === 'TransactWriteItems' ? withoutToken(call.body) : call.body);
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/',
          // The proxy tells the floor's calls apart by this user agent and never counts them as the stack's.
          headers: { ...call.headers, 'user-agent': 'bench-floor', 'content-length': body.length },
          agent,
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ op: call.op, status: res.statusCode ?? 0 }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const refused = new Set<string>();
  let first = true;
  return {
    ops: steps.map((s) => s.map(describe).join(' ‖ ')).join(' → '),
    get refused() {
      return [...refused];
    },
    async run() {
      let failed = 0;
      for (const step of steps) {
        for (const answer of await Promise.all(step.map(send))) {
          if (answer.status < 400) continue;
          failed++;
          if (first) refused.add(answer.op);
        }
      }
      first = false;
      return failed;
    },
  };
}
