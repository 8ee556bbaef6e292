/**
 * The floor of an endpoint: the DynamoDB requests the stack made for one of its requests, as the
 * counting proxy recorded them, replayed through a bare AWS SDK client (the low-level client given
 * the recorded wire input as is) with keep-alive, in the same order and parallelism: the same
 * DynamoDB operations through the same SDK without our code (every function needs the SDK, and the
 * latency goal was set against an SDK floor). A write guarded by a condition that the recorded
 * run made false is refused on replay: the same round trip, no write (the report names them). A
 * transaction's ClientRequestToken is dropped, so DynamoDB evaluates it again instead of answering
 * from its idempotency record.
 */
import { Agent } from 'node:http';
import * as sdk from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';

type AnyCommand = new (input: unknown) => Parameters<sdk.DynamoDBClient['send']>[0];

/** The calls a request makes itself (the authorizer's included; background work and id blocks not). */
const OWN = new Set(['request', 'apikey']);

/** A call in words: its operation, with its index, transaction items, keys and ReturnValues. */
function describe(call: RecordedCall): string {
  if (call.category === 'apikey') return 'GetItem(api key)';
  const b = JSON.parse(call.body);
  // BatchGetItem names keys per table, BatchWriteItem lists its requests.
  const batch = Object.values<{ Keys: unknown[] } | unknown[]>(b.RequestItems ?? {}).reduce(
    (n: number, t) => n + (Array.isArray(t) ? t.length : t.Keys.length),
    0,
  );
  const details = [
    b.IndexName,
    b.TransactItems?.map((i: object) => Object.keys(i)[0]).join(', '),
    b.RequestItems && `${batch} ${call.op === 'BatchWriteItem' ? 'writes' : 'keys'}`,
    b.ReturnValues !== 'NONE' && b.ReturnValues,
  ].filter(Boolean);
  return details.length ? `${call.op}(${details.join(', ')})` : call.op;
}

export interface Floor {
  /** What the floor issues, in words: `→` between steps, `‖` between parallel calls. */
  ops: string;
  /** One replay; resolves with the operations DynamoDB refused (a condition the recorded run made false). */
  run(): Promise<string[]>;
}

export function replayFloor(recorded: RecordedCall[], proxyUrl: string): Floor | undefined {
  const steps: RecordedCall[][] = [];
  let stepEnd = Number.NEGATIVE_INFINITY;
  for (const call of recorded.filter((c) => OWN.has(c.category)).sort((a, b) => a.start - b.start)) {
    const overlaps = call.start < stepEnd;
    if (overlaps) steps.at(-1)!.push(call);
    else steps.push([call]);
    stepEnd = overlaps ? Math.max(stepEnd, call.end) : call.end;
  }
  if (!steps.length) return undefined;
  const client = new sdk.DynamoDBClient({
    endpoint: proxyUrl,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    // The proxy tells the floor's calls apart by this user agent and never counts them as the stack's.
    customUserAgent: 'bench-floor',
    maxAttempts: 1,
    requestHandler: new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) }),
  });
  /** One call as recorded, its transaction's ClientRequestToken dropped; its operation if refused. */
  const send = async ({ op, body }: RecordedCall) => {
    const Command = (sdk as unknown as Record<string, AnyCommand>)[`${op}Command`]!;
    const { ClientRequestToken: _, ...input } = JSON.parse(body);
    try {
      await client.send(new Command(input));
      return [];
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === undefined)
        throw err;
      return [op];
    }
  };
  return {
    ops: steps.map((s) => s.map(describe).join(' ‖ ')).join(' → '),
    async run() {
      const refused: string[] = [];
      for (const step of steps) refused.push(...(await Promise.all(step.map(send))).flat());
      return refused;
    },
  };
}
