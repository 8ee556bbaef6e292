/**
 * The floor of an endpoint: the DynamoDB requests the stack made for one of its requests, as the
 * counting proxy recorded them (operation and body), replayed through a bare AWS SDK client (the
 * low-level `DynamoDBClient`, given the recorded wire input as is, so no marshalling) with
 * keep-alive, in the same order and with the same parallelism (calls whose recorded spans
 * overlapped are sent together). So the floor is, by construction, the same DynamoDB operations
 * through the same SDK without our code: no handler, no middleware, no gateway. (The SDK stays in
 * the floor because every function needs it; the latency goal was set against an SDK floor.)
 *
 * A replayed write meets the state its first run left behind, so a write guarded by a condition
 * (a Put of a new item, a Delete of an item now gone) is refused on replay: DynamoDB still reads
 * the item and evaluates the condition, the same round trip, but writes nothing. A transaction's
 * ClientRequestToken is dropped on replay, so DynamoDB evaluates it again rather than answering
 * from its idempotency record. The report says which operations were refused.
 */
import { Agent } from 'node:http';
import * as sdk from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { RecordedCall } from './counting-proxy.ts';

type AnyCommand = new (input: unknown) => Parameters<sdk.DynamoDBClient['send']>[0];

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
  const client = new sdk.DynamoDBClient({
    endpoint: proxyUrl,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    // The proxy tells the floor's calls apart by this user agent and never counts them as the stack's.
    customUserAgent: 'bench-floor',
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: sockets }) }),
  });
  const send = async (call: RecordedCall): Promise<{ op: string; status: number }> => {
    const Command = (sdk as unknown as Record<string, AnyCommand | undefined>)[`${call.op}Command`];
    if (!Command) throw new Error(`no SDK command for ${call.op}`);
    const input = JSON.parse(call.op === 'TransactWriteItems' ? withoutToken(call.body) : call.body);
    try {
      await client.send(new Command(input));
      return { op: call.op, status: 200 };
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === undefined) throw err;
      return { op: call.op, status };
    }
  };
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
