/** An endpoint's floor: its DynamoDB requests as recorded, replayed through a bare SDK client in order. */
import { Agent } from 'node:http';
import * as sdk from '@aws-sdk/client-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { RecordedCall } from '../../lib/local/dynamodb-counter.ts';
import { interleaved, percentile } from './stats.ts';

type Item = Record<string, sdk.AttributeValue>;
type AnyCommand = new (input: unknown) => Parameters<sdk.DynamoDBClient['send']>[0];
/** A recorded call sent again as recorded, its transaction's ClientRequestToken dropped: DynamoDB's answer. */
export function sendRecorded(client: sdk.DynamoDBClient, { op, body }: RecordedCall) {
  const { ClientRequestToken: _, ...input } = JSON.parse(body);
  const Command = (sdk as unknown as Record<string, AnyCommand>)[`${op}Command`]!;
  return client.send(new Command(input)) as Promise<{ Items?: Item[]; Item?: Item }>;
}

/** A call in words: its operation, with its index, transaction items, keys and ReturnValues. */
function describe(call: RecordedCall): string {
  if (call.category === 'apikey') return 'GetItem(api key)';
  const b = JSON.parse(call.body);
  // BatchGetItem names keys per table, BatchWriteItem lists its requests.
  const perTable = Object.values<{ Keys: unknown[] } | unknown[]>(b.RequestItems ?? {});
  const batch = perTable.reduce((n: number, t) => n + (Array.isArray(t) ? t.length : t.Keys.length), 0);
  const details = [
    b.IndexName,
    b.TransactItems?.map((i: object) => Object.keys(i)[0]).join(', '),
    b.RequestItems && `${batch} ${call.op === 'BatchWriteItem' ? 'writes' : 'keys'}`,
    b.ReturnValues !== 'NONE' && b.ReturnValues,
  ].filter(Boolean);
  return details.length ? `${call.op}(${details.join(', ')})` : call.op;
}

/** `ops`: what the floor issues (`→` between steps, `‖` between parallel calls); `run`: one replay, the operations refused. */
export type Floor = { ops: string; run(): Promise<string[]> };
/** The floor of the request's own calls (the authorizer's included; background work and id blocks not). */
export function replayFloor(recorded: RecordedCall[], proxyUrl: string): Floor | undefined {
  const steps: RecordedCall[][] = [];
  let stepEnd = Number.NEGATIVE_INFINITY;
  const own = recorded.filter((c) => c.category === 'request' || c.category === 'apikey');
  for (const call of own.sort((a, b) => a.start - b.start)) {
    const overlaps = call.start < stepEnd;
    if (overlaps) steps.at(-1)!.push(call);
    else steps.push([call]);
    stepEnd = overlaps ? Math.max(stepEnd, call.end) : call.end;
  }
  if (!steps.length) return undefined;
  const requestHandler = new NodeHttpHandler({ httpAgent: new Agent({ keepAlive: true, maxSockets: 64 }) });
  const client = new sdk.DynamoDBClient({
    ...{ endpoint: proxyUrl, region: 'us-east-1', maxAttempts: 1, requestHandler },
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    customUserAgent: 'bench-floor', // the proxy never counts these calls as the stack's
  });
  // An error DynamoDB answered (a condition refused) is the floor's answer; any other is the bench's.
  const refused = (call: RecordedCall) => (err: { $metadata?: { httpStatusCode?: number } }) => {
    if (err.$metadata?.httpStatusCode === undefined) throw err;
    return [call.op];
  };
  const send = (call: RecordedCall) => sendRecorded(client, call).then(() => [], refused(call));
  return {
    ops: steps.map((s) => s.map(describe).join(' ‖ ')).join(' → '),
    async run() {
      const refused: string[] = [];
      for (const step of steps) refused.push(...(await Promise.all(step.map(send))).flat());
      return refused;
    },
  };
}

type Recorder = { url: string; recording(run: () => Promise<unknown>): Promise<RecordedCall[]> };
type Send = (path: string) => Promise<unknown>;
type Choose = (calls: RecordedCall[]) => RecordedCall[];
type Paths = ReadonlyArray<{ key: string; path: string }>;
/** Each path recorded, then timed `n` times interleaved: through the gateway, as its floor, and `alone`. */
export async function timeWithFloors(proxy: Recorder, send: Send, paths: Paths, n: number, alone?: Choose) {
  const recorded: Record<string, RecordedCall[]> = {};
  const runs: Record<string, () => Promise<unknown>> = {};
  for (const { key, path } of paths) {
    recorded[key] = await proxy.recording(() => send(path));
    runs[`${key}:gateway`] = () => send(path);
    runs[`${key}:floor`] = replayFloor(recorded[key], proxy.url)!.run;
    if (alone) runs[`${key}:alone`] = replayFloor(alone(recorded[key]), proxy.url)!.run;
  }
  const times = await interleaved(runs, n);
  const p = (key: string, what: 'gateway' | 'floor' | 'alone' = 'gateway', q = 50) =>
    percentile(times[`${key}:${what}`]!, q);
  return { recorded, p };
}
