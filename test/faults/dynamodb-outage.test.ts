/**
 * DynamoDB paused under load (its JVM stopped with SIGSTOP, as a hung or overloaded endpoint
 * looks), with a client that retries every keyed write after a 5xx, a 409 in progress or a dropped
 * connection, as the contract tells clients to. During the pause every answer is a 503 with
 * `Retry-After` (or the 201 of a write that got through just before or after it), none is a 500,
 * none waits long; afterwards every counter equals the number of distinct keys that got a 2xx, and
 * every committed record's event reaches the webhook receiver exactly once per `webhook-id`.
 * The harness (`tools/outage.ts`) is the one `npm run bench` reports from, so both measure the same thing.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { measureOutage, type OutageResult } from '../../tools/outage.ts';
import { waitUntil } from '../../tools/wait.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../tools/webhook-receiver.ts';
import { inStartSlot } from '../support/start-slots.ts';

const API_KEY = 'fault-key-000000000000000000000001';
let dir: string;
let stack: LocalStack;
let receiver: WebhookReceiver;
let jvm: number;

/** The pid of the DynamoDB Local JVM whose command line names `dataDir`. */
function jvmFor(dataDir: string): number {
  const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
  const line = ps
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.includes(dataDir) && /\bjava\b/.test(l));
  if (!line) throw new Error(`no DynamoDB Local JVM for ${dataDir}`);
  return Number(line.split(/\s+/, 1)[0]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'referrals-outage-'));
  stack = await inStartSlot(() =>
    startLocalStack({
      port: 0,
      dataDir: dir,
      devApiKeys: `fault:${API_KEY}`,
      webhookRetryDelays: '1,1,1',
      throttles: false,
    }),
  );
  jvm = jvmFor(dir);
  receiver = await startWebhookReceiver();
}, 120_000);

afterAll(async () => {
  if (jvm) {
    try {
      process.kill(jvm, 'SIGCONT');
    } catch {
      // gone already
    }
  }
  await receiver?.close();
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('DynamoDB paused for 8 s under keyed writes', () => {
  let result: OutageResult;

  beforeAll(async () => {
    result = await measureOutage({
      baseUrl: stack.baseUrl,
      apiKey: API_KEY,
      pause: () => {
        process.kill(jvm, 'SIGSTOP');
      },
      resume: () => {
        process.kill(jvm, 'SIGCONT');
      },
      pauseMs: 8_000,
      ratePerSecond: 15,
      webhookUrl: receiver.url,
    });
    console.log(`outage: ${JSON.stringify(result)}`);
  }, 150_000);

  it('answers 503 with Retry-After while paused, never a 500, each within about 7 s', () => {
    expect(result.duringOutage['503'] ?? 0).toBeGreaterThan(0);
    expect(Object.keys(result.duringOutage).filter((s) => s !== '503' && s !== '201' && s !== '409')).toEqual(
      [],
    );
    expect(result.retryAfterValues).toEqual(['1']);
    // The handler's 5 s deadline, plus the authorizer's 2 s (it runs on every local request), and
    // a little for a busy machine.
    expect(result.slowestAnswerDuringOutageMs).toBeLessThan(8_000);
  });

  it('recovers within seconds of DynamoDB answering again', () => {
    expect(result.recoveryMs).toBeLessThan(15_000);
  });

  it('counts every keyed write exactly once: counters equal the keys that got a 2xx', () => {
    expect(result.replays).toBeGreaterThanOrEqual(0);
    expect(result.clicks.counted).toBe(result.clicks.expected);
    expect(result.referrals.counted).toBe(result.referrals.expected);
  });

  it("sends each committed record's event, one webhook-id per record", async () => {
    const expected = result.clicks.expected + result.referrals.expected;
    const ids = () => new Set(receiver.requests.map((r) => String(r.headers['webhook-id'])));
    await waitUntil(() => ids().size >= expected, 60_000, 250);
    expect(ids().size).toBe(expected);
  }, 70_000);
});
