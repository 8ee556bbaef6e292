/**
 * The local stream poller with a tumbling window (`tumblingWindowSeconds`), as Lambda runs a stream
 * mapping with `TumblingWindowInSeconds`: each invocation carries its window and the state the
 * window's last successful invocation returned, each window ends with a final invocation, a
 * failure keeps the previous state, and the state survives a kill of the poller with its
 * checkpoint. On tables of their own (with a stream) in the run's DynamoDB Local.
 *
 * The handlers here keep in their state the keys of the records they acknowledged, so the state a
 * window ends with says which records it counted: each exactly once, or the test fails.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  type StreamBatchResponse,
  type StreamHandler,
  type StreamPoller,
  type StreamWindowEvent,
  startStreamPoller,
} from '../../lib/local/stream-poller.ts';
import { eventually } from '../../tools/wait.ts';
import { itemKey, keyOf, streamTables } from '../support/stream-table.ts';

const endpoint = inject('dynamodbEndpoint');
const tables = streamTables(endpoint);
const dir = mkdtempSync(join(tmpdir(), 'stream-windows-'));
const pollers: StreamPoller[] = [];
afterAll(async () => {
  await Promise.all(pollers.map((p) => p.stop()));
  rmSync(dir, { recursive: true, force: true });
});

type State = { keys: string[]; blob?: string };

type Outcome = 'ok' | 'partial' | 'thrown' | 'no-state' | 'abandoned';

interface Call {
  poller: string;
  at: number;
  window: { start: string; end: string };
  given: State;
  final: boolean;
  early: boolean;
  keys: string[];
  outcome: Outcome;
  failedAt?: number;
  returned?: State;
}

type Decision = 'ok' | 'throw' | 'no-state' | { failAt: string } | { hold: Promise<void> };

/** A handler that records each call and answers as `decide` says (default: success). */
function recording(
  poller: string,
  calls: Call[],
  decide: (call: Call) => Decision = () => 'ok',
): StreamHandler {
  return async (event) => {
    const { Records, window, state, isFinalInvokeForWindow, isWindowTerminatedEarly } =
      event as StreamWindowEvent<State>;
    const call: Call = {
      poller,
      at: Date.now(),
      window,
      given: { keys: [], ...(state as Partial<State>) },
      final: isFinalInvokeForWindow,
      early: isWindowTerminatedEarly,
      keys: Records.map(keyOf),
      outcome: 'ok',
    };
    const decision = decide(call);
    const success = (): StreamBatchResponse<State> => {
      call.returned = { keys: [...call.given.keys, ...call.keys] };
      return { batchItemFailures: [], state: call.returned };
    };
    if (typeof decision === 'object' && 'hold' in decision) {
      call.outcome = 'abandoned';
      calls.push(call);
      await decision.hold;
      return success();
    }
    calls.push(call);
    if (decision === 'throw') {
      call.outcome = 'thrown';
      throw new Error('handler failed');
    }
    if (decision === 'no-state') {
      call.outcome = 'no-state';
      return { batchItemFailures: [] };
    }
    if (typeof decision === 'object') {
      call.outcome = 'partial';
      call.failedAt = call.keys.indexOf(decision.failAt);
      return { batchItemFailures: [{ itemIdentifier: Records[call.failedAt]!.dynamodb!.SequenceNumber! }] };
    }
    return success();
  };
}

/** The keys acknowledged by the calls whose outcome the poller recorded, in order. */
const acknowledged = (calls: readonly Call[]) =>
  calls.flatMap((c) =>
    c.outcome === 'ok' ? c.keys : c.outcome === 'partial' ? c.keys.slice(0, c.failedAt) : [],
  );

/** The calls by window, in order. */
function byWindow(calls: readonly Call[]): Call[][] {
  const windows = new Map<string, Call[]>();
  for (const c of calls) windows.set(c.window.start, [...(windows.get(c.window.start) ?? []), c]);
  return [...windows.values()];
}

/** Every window's calls chain their states, and the window ends with one successful final call. */
function expectWindowsKept(calls: readonly Call[], lengthMs: number) {
  const recorded = calls.filter((c) => c.outcome !== 'abandoned');
  for (const window of byWindow(recorded)) {
    const start = Date.parse(window[0]!.window.start);
    expect(start % lengthMs, 'aligned to multiples of the length since the epoch').toBe(0);
    expect(Date.parse(window[0]!.window.end) - start).toBe(lengthMs);
    let state: State = { keys: [] };
    for (const call of window) {
      expect(call.given, `state given to a call of ${call.window.start}`).toEqual(state);
      if (call.outcome === 'ok') state = call.early ? { keys: [] } : call.returned!;
    }
    const finals = window.filter((c) => c.final && c.outcome === 'ok');
    expect(finals).toHaveLength(1);
    expect(finals[0], 'the final call is the last').toBe(window.at(-1));
    expect(finals[0]!.at, 'a window ends after its end').toBeGreaterThanOrEqual(
      Date.parse(finals[0]!.window.end),
    );
  }
}

/** What the windows ended with: each final call's state and records, in order. */
const counted = (calls: readonly Call[]) =>
  calls.filter((c) => c.final && c.outcome === 'ok').flatMap((c) => [...c.given.keys, ...c.keys]);

/** Waits for the start of the next window of `lengthMs`, so a few writes fall into one window. */
const nextWindowStart = (lengthMs: number) =>
  new Promise((r) => setTimeout(r, lengthMs - (Date.now() % lengthMs) + 50));

const allEnded = (calls: readonly Call[]) =>
  byWindow(calls.filter((c) => c.outcome !== 'abandoned')).every((w) =>
    w.some((c) => c.final && c.outcome === 'ok' && !c.early),
  );

describe('the local stream poller with a tumbling window', () => {
  it('carries the state across a window, ends each window with a final call, and starts the next with {}', async () => {
    const table = await tables.create();
    const calls: Call[] = [];
    const poller = startStreamPoller({
      endpoint,
      tableName: table,
      handler: recording('p', calls),
      batchSize: 1,
      intervalMs: 50,
      tumblingWindowSeconds: 2,
    });
    pollers.push(poller);
    await nextWindowStart(2_000);
    for (let n = 0; n < 5; n++) await tables.put(table, n);
    const first = [0, 1, 2, 3, 4].map(itemKey);
    await eventually('every window ended', () =>
      acknowledged(calls).length === 5 && allEnded(calls) ? true : undefined,
    );
    await tables.put(table, 5);
    await eventually('the last window ended', () =>
      acknowledged(calls).length === 6 && allEnded(calls) ? true : undefined,
    );
    expect(acknowledged(calls)).toEqual([...first, itemKey(5)]);
    expectWindowsKept(calls, 2_000);
    expect(counted(calls)).toEqual([...first, itemKey(5)]);
    // Five records, one per call: some window had two, and its second call got the first's state.
    expect(calls.some((c) => c.given.keys.length > 0)).toBe(true);
    const last = calls.filter((c) => c.keys.includes(itemKey(5)))[0]!;
    const before = calls.filter((c) => c.keys.some((k) => first.includes(k)));
    expect(Date.parse(last.window.start)).toBeGreaterThanOrEqual(
      Math.max(...before.map((c) => Date.parse(c.window.end))),
    );
  });

  it('keeps the previous state after a failure and hands the records again from the failed one', async () => {
    const table = await tables.create();
    const calls: Call[] = [];
    let failures = 0;
    const poller = startStreamPoller({
      endpoint,
      tableName: table,
      handler: recording('p', calls, (call) => {
        if (!call.keys.includes(itemKey(3)) || failures > 2) return 'ok';
        failures++;
        return failures === 1 ? { failAt: itemKey(3) } : failures === 2 ? 'throw' : 'no-state';
      }),
      batchSize: 3,
      batchingWindowMs: 300,
      intervalMs: 50,
      tumblingWindowSeconds: 10,
    });
    pollers.push(poller);
    await nextWindowStart(10_000);
    for (let n = 0; n < 6; n++) await tables.put(table, n);
    await eventually('all six acknowledged', () => (acknowledged(calls).length === 6 ? true : undefined));
    expect(acknowledged(calls)).toEqual([0, 1, 2, 3, 4, 5].map(itemKey));
    const withFailed = calls.filter((c) => c.keys.includes(itemKey(3)));
    expect(withFailed.map((c) => c.outcome)).toEqual(['partial', 'thrown', 'no-state', 'ok']);
    for (const retry of withFailed.slice(1)) {
      expect(retry.keys[0], 'from the first failed record').toBe(itemKey(3));
      expect(retry.window).toEqual(withFailed[0]!.window);
      expect(retry.given, 'the state before the failure').toEqual(withFailed[0]!.given);
    }
  });

  it('ends a window early when its state passes 1 MB, and goes on in that window with {}', async () => {
    const table = await tables.create();
    const calls: Call[] = [];
    const big = 'x'.repeat(1024 * 1024);
    const handler = recording('p', calls);
    const poller = startStreamPoller({
      endpoint,
      tableName: table,
      handler: async (event) => {
        const response = (await handler(event)) as StreamBatchResponse<State>;
        // The first call grows the state past 1 MB.
        return calls.length === 1 ? { ...response, state: { ...response.state!, blob: big } } : response;
      },
      batchSize: 1,
      intervalMs: 50,
      tumblingWindowSeconds: 20,
      checkpointFile: join(dir, `${table}.json`),
    });
    pollers.push(poller);
    await nextWindowStart(20_000);
    for (let n = 0; n < 2; n++) await tables.put(table, n);
    await eventually('both acknowledged', () => (acknowledged(calls).length === 2 ? true : undefined));
    const [first, early, next] = calls;
    expect(first).toMatchObject({ keys: [itemKey(0)], final: false });
    expect(early).toMatchObject({ keys: [], final: true, early: true, window: first!.window });
    expect(early!.given).toEqual({ keys: [itemKey(0)], blob: big });
    expect(next).toMatchObject({
      keys: [itemKey(1)],
      final: false,
      given: { keys: [] },
      window: first!.window,
    });
  });

  it('resumes the window with the state that matches its checkpoint after the poller is killed', async () => {
    const table = await tables.create();
    const checkpointFile = join(dir, `${table}.json`);
    const calls: Call[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const settings = {
      endpoint,
      tableName: table,
      batchSize: 2,
      intervalMs: 50,
      tumblingWindowSeconds: 4,
      checkpointFile,
    };
    // The first poller's third call with records never ends while it runs: it is killed then.
    const first = startStreamPoller({
      ...settings,
      handler: recording('p1', calls, (call) =>
        call.keys.length > 0 && calls.filter((c) => c.keys.length > 0).length >= 2 ? { hold: held } : 'ok',
      ),
    });
    pollers.push(first);
    await nextWindowStart(4_000);
    for (let n = 0; n < 6; n++) await tables.put(table, n);
    await eventually('a call in flight', () =>
      calls.some((c) => c.outcome === 'abandoned') ? true : undefined,
    );
    first.kill();
    // It succeeds, but after the kill: nothing records it, as after a kill -9.
    release();
    const lastOfFirst = calls.filter((c) => c.outcome === 'ok').at(-1)!;
    const second = startStreamPoller({ ...settings, handler: recording('p2', calls) });
    pollers.push(second);
    await eventually('all six acknowledged and every window ended', () =>
      acknowledged(calls).length === 6 && allEnded(calls) ? true : undefined,
    );
    const keys = [0, 1, 2, 3, 4, 5].map(itemKey);
    expect(acknowledged(calls), 'no record lost, none acknowledged twice').toEqual(keys);
    expect(counted(calls), 'the windows count each record once').toEqual(keys);
    expectWindowsKept(calls, 4_000);
    const resumed = calls.find((c) => c.poller === 'p2')!;
    if (lastOfFirst.final) {
      expect(resumed.given).toEqual({ keys: [] });
      expect(Date.parse(resumed.window.start)).toBeGreaterThanOrEqual(Date.parse(lastOfFirst.window.end));
    } else {
      expect(resumed.window).toEqual(lastOfFirst.window);
      expect(resumed.given).toEqual(lastOfFirst.returned);
    }
    // What the killed call held comes again, from the first record after the checkpoint.
    const abandoned = calls.find((c) => c.outcome === 'abandoned')!;
    expect(calls.filter((c) => c.poller === 'p2').flatMap((c) => c.keys)[0]).toBe(abandoned.keys[0]);
  });
});
