import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marshall } from '@aws-sdk/util-dynamodb';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import { signingSecretsOf } from '../../lib/db/entities/campaign.ts';
import { eventAttributes } from '../../lib/domain/webhook-events.ts';
import {
  attemptDelivery,
  type DeliveryDeps,
  deliverFirstAttempts,
  deliverRetries,
  type QueueRecord,
} from '../../lib/webhooks/deliver.ts';
import {
  FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN,
  firstAttemptIds,
  retryMessage,
} from '../../lib/webhooks/lanes.ts';
import { parseWebhookMessage, type WebhookMessage, webhookBodyText } from '../../lib/webhooks/message.ts';
import {
  DEFAULT_RETRY_DELAYS,
  MAX_VISIBILITY_SECONDS,
  maxAttempts,
  nextDelaySeconds,
  parseRetryAfter,
  retryDelaysFrom,
} from '../../lib/webhooks/schedule.ts';
import { signDelivery } from '../../lib/webhooks/sign.ts';
import {
  enqueueStreamRecords,
  isEventRecord,
  isLinkActionRecord,
  messageFromStreamRecord,
} from '../../lib/webhooks/stream.ts';
import { EVENT_RECORD_FILTER, LINK_ACTION_RECORD_FILTER } from '../../lib/webhooks/stream-filter.ts';
import { verifyDelivery } from '../../lib/webhooks/verify.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const message = (overrides: Partial<WebhookMessage> = {}): WebhookMessage => ({
  ...eventAttributes(
    'action.created',
    42,
    'acme',
    '3f0c6f0e-8a51-4f57-9d7a-2a0f7cbbf0d1',
    {
      id: 42,
      action_type: 'visit',
      metadata: { user_agent: 'curl/8' },
    },
    new Date('2026-11-22T10:00:00.000Z'),
  ),
  ...overrides,
});

describe('retry schedule', () => {
  it('is the contract schedule: 11 retries, 12 attempts, about 3.2 days', () => {
    expect(DEFAULT_RETRY_DELAYS).toEqual([
      5, 300, 1800, 7200, 18000, 36000, 43200, 43200, 43200, 43200, 43200,
    ]);
    expect(maxAttempts(DEFAULT_RETRY_DELAYS)).toBe(12);
    const days = DEFAULT_RETRY_DELAYS.reduce((a, b) => a + b, 0) / 86400;
    expect(days).toBeGreaterThan(3.1);
    expect(days).toBeLessThan(3.3);
  });

  it('jitters each delay by ±20 % and caps at 12 h', () => {
    expect(nextDelaySeconds(1, DEFAULT_RETRY_DELAYS, { random: () => 0 })).toBe(4);
    expect(nextDelaySeconds(1, DEFAULT_RETRY_DELAYS, { random: () => 1 })).toBe(6);
    expect(nextDelaySeconds(2, DEFAULT_RETRY_DELAYS, { random: () => 0.5 })).toBe(300);
    expect(nextDelaySeconds(2, DEFAULT_RETRY_DELAYS, { random: () => 0 })).toBe(240);
    expect(nextDelaySeconds(6, DEFAULT_RETRY_DELAYS, { random: () => 1 })).toBe(43200);
    expect(nextDelaySeconds(7, DEFAULT_RETRY_DELAYS, { random: () => 1 })).toBe(MAX_VISIBILITY_SECONDS);
    expect(nextDelaySeconds(7, DEFAULT_RETRY_DELAYS, { random: () => 0 })).toBe(34560);
    for (let i = 0; i < 200; i++) {
      const d = nextDelaySeconds(3, DEFAULT_RETRY_DELAYS)!;
      expect(d).toBeGreaterThanOrEqual(1440);
      expect(d).toBeLessThanOrEqual(2160);
    }
  });

  it('has no delay after the last attempt', () => {
    expect(nextDelaySeconds(11, DEFAULT_RETRY_DELAYS)).toBeDefined();
    expect(nextDelaySeconds(12, DEFAULT_RETRY_DELAYS)).toBeUndefined();
    expect(nextDelaySeconds(4, [1, 1, 1])).toBeUndefined();
  });

  it('honours Retry-After within [0.8 x delay, 12 h]', () => {
    const d = DEFAULT_RETRY_DELAYS;
    expect(nextDelaySeconds(2, d, { retryAfterSeconds: 1000 })).toBe(1000);
    expect(nextDelaySeconds(2, d, { retryAfterSeconds: 1 })).toBe(240);
    expect(nextDelaySeconds(2, d, { retryAfterSeconds: 10 * 86400 })).toBe(43200);
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sun, 22 Nov 2026 10:05:00 GMT', now)).toBe(300);
    expect(parseRetryAfter('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('reads WEBHOOK_RETRY_DELAYS, whose length is the number of retries', () => {
    expect(retryDelaysFrom(undefined)).toBe(DEFAULT_RETRY_DELAYS);
    expect(retryDelaysFrom('')).toBe(DEFAULT_RETRY_DELAYS);
    expect(retryDelaysFrom('1, 1,2')).toEqual([1, 1, 2]);
    expect(maxAttempts(retryDelaysFrom('1,1,2'))).toBe(4);
    expect(() => retryDelaysFrom('1,x')).toThrow(/WEBHOOK_RETRY_DELAYS/);
    expect(() => retryDelaysFrom('1,,2')).not.toThrow(); // an empty entry is 0 s
    expect(() => retryDelaysFrom('-1')).toThrow();
    expect(() => retryDelaysFrom('50000')).toThrow();
  });
});

describe('signing', () => {
  it('signs per Standard Webhooks: the package verifies it, and rejects tampering', () => {
    const key = secret();
    const now = new Date();
    const signed = signDelivery(message(), key, now);
    expect(signed.headers['webhook-id']).toBe('evt_action_42_3f0c6f0e-8a51-4f57-9d7a-2a0f7cbbf0d1');
    expect(signed.headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(signed.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(signed.headers['content-type']).toBe('application/json');
    expect(signed.body).toBe(webhookBodyText(message()));

    expect(new Webhook(key).verify(signed.body, signed.headers)).toEqual(JSON.parse(signed.body));
    expect(verifyDelivery(key, signed.body, signed.headers)).toEqual(JSON.parse(signed.body));
    expect(() => new Webhook(key).verify(signed.body.replace('visit', 'vIsit'), signed.headers)).toThrow();
    expect(() =>
      new Webhook(key).verify(signed.body, { ...signed.headers, 'webhook-id': 'evt_other' }),
    ).toThrow();
    expect(() => new Webhook(secret()).verify(signed.body, signed.headers)).toThrow();
  });

  it('keeps webhook-id across attempts and stamps each attempt with its own time', () => {
    const key = secret();
    const first = signDelivery(message(), key, new Date('2026-11-22T10:00:00Z'));
    const retry = signDelivery(message(), key, new Date('2026-11-22T10:00:05Z'));
    expect(retry.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(Number(retry.headers['webhook-timestamp']) - Number(first.headers['webhook-timestamp'])).toBe(5);
    expect(retry.headers['webhook-signature']).not.toBe(first.headers['webhook-signature']);
  });

  it('builds the contract body {type, timestamp, campaign_id, data}, with data exactly as stored', () => {
    const m = message();
    expect(JSON.parse(webhookBodyText(m))).toEqual({
      type: 'action.created',
      timestamp: m.event_time,
      campaign_id: m.campaign_id,
      data: { id: 42, action_type: 'visit', metadata: { user_agent: 'curl/8' } },
    });
    // Odd metadata (deep nesting, big integers, keys JavaScript treats specially) is sent as stored.
    const data = `{"id":1,"metadata":{"__proto__":{"":1},"n":123456789012345678901234567890,"d":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    const body = webhookBodyText({ ...m, event_json: data });
    expect(body.endsWith(`"data":${data}}`)).toBe(true);
    expect(Object.keys(JSON.parse(body).data.metadata)).toEqual(['__proto__', 'n', 'd']);
  });
});

describe('queue messages', () => {
  it('round-trips an event and names what a malformed one lacks', () => {
    const m = message();
    expect(parseWebhookMessage(JSON.stringify(m))).toEqual({ ok: true, message: m });
    expect(parseWebhookMessage('nope')).toEqual({ ok: false, error: 'message body is not JSON' });
    for (const event_json of ['[]', 'null', '{', 5]) {
      const bad = parseWebhookMessage(JSON.stringify({ ...m, event_type: 'x', event_json }));
      expect(bad).toEqual({ ok: false, error: 'message lacks event_type, event_json' });
    }
  });

  it('reads a message written before the data was stored as text (event_data as an object)', () => {
    const { event_json, ...rest } = message();
    const legacy = parseWebhookMessage(JSON.stringify({ ...rest, event_data: JSON.parse(event_json) }));
    expect(legacy).toEqual({ ok: true, message: message() });
  });
});

describe('stream records', () => {
  const item = { PK: 'T#acme#C#c1', SK: 'A#42', type: 'action', ...message() };
  const record = (eventName: string, image: Record<string, unknown>, seq = '100') => ({
    eventName,
    dynamodb: { NewImage: marshall(image, { removeUndefinedValues: true }), SequenceNumber: seq },
  });

  it('turns an event item INSERT into the queue message, unmarshalled', () => {
    const r = record('INSERT', item);
    expect(isEventRecord(r)).toBe(true);
    expect(messageFromStreamRecord(r)).toEqual(message());
  });

  it('skips every other record, as the event source filter does', () => {
    expect(messageFromStreamRecord(record('MODIFY', item))).toBeUndefined();
    expect(messageFromStreamRecord(record('REMOVE', item))).toBeUndefined();
    expect(
      messageFromStreamRecord(record('INSERT', { PK: 'T#a#C#c', SK: 'CAMPAIGN', type: 'campaign' })),
    ).toBe(undefined);
    expect(messageFromStreamRecord({ eventName: 'INSERT' })).toBeUndefined();
    expect(EVENT_RECORD_FILTER).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { event_type: { S: [{ exists: true }] } } },
    });
  });

  it('knows a link write that recorded an action, as the second filter does', () => {
    const link = { PK: 'LINK#ABCD2345', SK: 'LINK', type: 'link', total_clicks: 3 };
    const action = {
      id: 7,
      at: '2026-01-01T00:00:00.000Z',
      action_type: 'signup',
      metadata: {},
      referred_user: null,
    };
    expect(isLinkActionRecord(record('MODIFY', { ...link, last_action: action }))).toBe(true);
    // A link write that carries no action (every other write removes it), a new link, a purge.
    expect(isLinkActionRecord(record('MODIFY', link))).toBe(false);
    expect(isLinkActionRecord(record('INSERT', { ...link, last_action: action }))).toBe(false);
    expect(isLinkActionRecord({ eventName: 'REMOVE' })).toBe(false);
    // Neither kind is the other: an action item's INSERT is an event, not a link action.
    expect(isLinkActionRecord(record('INSERT', item))).toBe(false);
    expect(isEventRecord(record('MODIFY', { ...link, last_action: action }))).toBe(false);
    expect(LINK_ACTION_RECORD_FILTER).toEqual({
      eventName: ['MODIFY'],
      dynamodb: { NewImage: { last_action: { M: { id: { N: [{ exists: true }] } } } } },
    });
  });

  it('sends in batches of 10 and reports failed records by sequence number', async () => {
    const sent: Array<{ Entries: Array<{ Id: string; MessageBody: string }> }> = [];
    let call = 0;
    const sqs = {
      send: async (command: { input: (typeof sent)[number] }) => {
        call++;
        sent.push(command.input);
        if (call === 2) throw new Error('throttled');
        return call === 3 ? { Failed: [{ Id: '1', Code: 'InternalError' }] } : {};
      },
    };
    const records = Array.from({ length: 25 }, (_, i) =>
      record('INSERT', { ...item, event_id: `evt_${i}` }, String(1000 + i)),
    );
    records.push(record('MODIFY', item, '2000'));
    const result = await enqueueStreamRecords(records, sqs as never, 'https://queue');
    expect(sent.map((b) => b.Entries.length)).toEqual([10, 10, 5]);
    expect(JSON.parse(sent[0]!.Entries[0]!.MessageBody)).toEqual({ ...message(), event_id: 'evt_0' });
    // The first-attempt queue is FIFO: each event in one of its campaign's groups, deduplicated by id.
    expect(sent[0]!.Entries[0]).toMatchObject({
      MessageGroupId: expect.stringMatching(new RegExp(`^${message().campaign_id}#\\d$`)),
      MessageDeduplicationId: 'evt_0',
    });
    expect(result.failedSequenceNumbers.sort()).toEqual(
      [...Array.from({ length: 10 }, (_, i) => String(1010 + i)), '1021'].sort(),
    );
    expect(result.sent).toBe(14);
  });
});

describe('lanes', () => {
  it("spreads a campaign's events over its first-attempt groups, the same event always in the same one", () => {
    const groups = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const m = message({ event_id: `evt_action_${i}` });
      const ids = firstAttemptIds(m, JSON.stringify(m));
      expect(ids).toEqual(firstAttemptIds(m, 'another body'));
      expect(ids.MessageDeduplicationId).toBe(`evt_action_${i}`);
      groups.add(ids.MessageGroupId);
    }
    expect([...groups].sort()).toEqual(
      Array.from(
        { length: FIRST_ATTEMPT_GROUPS_PER_CAMPAIGN },
        (_, i) => `${message().campaign_id}#${i}`,
      ).sort(),
    );
  });

  it('still gives an unreadable event valid ids, so that delivery can dead-letter it', () => {
    const ids = firstAttemptIds({ campaign_id: 'no spaces allowed' } as never, '{"broken":true}');
    expect(ids.MessageGroupId).toMatch(/^unreadable#\d$/);
    expect(ids.MessageDeduplicationId).toMatch(/^[0-9a-f]{64}$/);
  });

  it('delays a retry-lane message by at most 15 minutes and records when a longer one is due', () => {
    const m = message();
    expect(retryMessage('{}', m, 1, 5, 0)).toEqual({
      MessageBody: '{}',
      MessageGroupId: m.campaign_id,
      DelaySeconds: 5,
      MessageAttributes: { attempts: { DataType: 'Number', StringValue: '1' } },
    });
    expect(retryMessage('{}', m, 1, 7200, 1_000)).toMatchObject({
      DelaySeconds: 900,
      MessageAttributes: { due_at: { DataType: 'Number', StringValue: String(1_000 + 7_200_000) } },
    });
  });
});

describe('delivery', () => {
  const receiver = receiversClosedAfterAll();

  /** A stand-in for SQS: the commands the handler sends are what these tests check. */
  function fakeSqs(fail?: (name: string) => boolean) {
    const commands: Array<{ name: string; input: Record<string, unknown> }> = [];
    return {
      commands,
      client: {
        send: async (command: { constructor: { name: string }; input: Record<string, unknown> }) => {
          commands.push({ name: command.constructor.name, input: command.input });
          if (fail?.(command.constructor.name)) throw new Error('SQS unavailable');
          return {};
        },
      },
    };
  }

  function setup(
    url: string | undefined,
    overrides: Partial<DeliveryDeps> = {},
    options: { slowLane?: boolean; failSqs?: (name: string) => boolean } = {},
  ) {
    const sqs = fakeSqs(options.failSqs);
    const key = secret();
    const flags: Array<[string, boolean]> = [];
    const deps: DeliveryDeps = {
      sqs: sqs.client as never,
      retryQueueUrl: 'https://sqs/retry',
      dlqUrl: 'https://sqs/dlq',
      delays: DEFAULT_RETRY_DELAYS,
      allowPrivate: true,
      loadTarget: async () => (url ? { url, secret: key, slowLane: options.slowLane } : undefined),
      setSlowLane: async (_tenant, _campaign, flagged, slow) => {
        flags.push([flagged, slow]);
      },
      random: () => 0.5,
      ...overrides,
    };
    return { deps, sqs, key, flags };
  }

  const recordOf = (
    body: string,
    receiveCount = 1,
    messageId = 'm-1',
    attributes: Record<string, string> = {},
  ): QueueRecord => ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount) },
    messageAttributes: Object.fromEntries(
      Object.entries(attributes).map(([k, v]) => [k, { stringValue: v, dataType: 'Number' }]),
    ),
  });
  /** A retry-lane message after `attempts` attempts, received `receiveCount` times there. */
  const retryRecordOf = (attempts: number, receiveCount: number, messageId = 'm-1') =>
    recordOf(JSON.stringify(message()), receiveCount, messageId, { attempts: String(attempts) });
  const sentTo = (sqs: ReturnType<typeof fakeSqs>, url: string) =>
    sqs.commands.filter((c) => c.name === 'SendMessageCommand' && c.input.QueueUrl === url);

  describe('first-attempt lane', () => {
    it('acknowledges a 2xx and sends a verifiable request', async () => {
      const rx = await receiver(() => ({ status: 202 }));
      const { deps, sqs, key, flags } = setup(`${rx.url}/in?x=1`);
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result).toEqual({
        batchItemFailures: [],
        counts: { delivered: 1, dropped: 0, failed: 0, deadLettered: 0, moved: 0 },
      });
      expect(sqs.commands).toEqual([]);
      expect(flags).toEqual([]);
      const [req] = rx.requests;
      expect(req!.path).toBe('/in?x=1');
      expect(req!.headers['user-agent']).toMatch(/referral-api-webhooks/);
      expect(verifyDelivery(key, req!.body, req!.headers)).toEqual(JSON.parse(webhookBodyText(message())));
    });

    it('hands a failure to the retry lane, due after the first delay, and puts the endpoint in the slow lane', async () => {
      const rx = await receiver(() => ({ status: 500 }));
      const { deps, sqs, flags } = setup(rx.url);
      const body = JSON.stringify(message());
      const result = await deliverFirstAttempts([recordOf(body)], deps);
      // Acknowledged: nothing waits in the FIFO group for a retry.
      expect(result.batchItemFailures).toEqual([]);
      expect(result.counts.failed).toBe(1);
      expect(sqs.commands).toEqual([
        {
          name: 'SendMessageCommand',
          input: {
            QueueUrl: 'https://sqs/retry',
            MessageBody: body,
            MessageGroupId: message().campaign_id,
            DelaySeconds: 5,
            MessageAttributes: { attempts: { DataType: 'Number', StringValue: '1' } },
          },
        },
      ]);
      expect(flags).toEqual([[rx.url, true]]);
    });

    it('honours a Retry-After beyond SQS’s 15-minute delay by recording when the retry is due', async () => {
      const rx = await receiver(
        (_r, i) =>
          [
            { status: 429, headers: { 'retry-after': '600' } },
            { status: 503, headers: { 'retry-after': '3600' } },
          ][i],
      );
      const { deps, sqs } = setup(rx.url);
      const before = Date.now();
      for (const id of ['a', 'b'])
        await deliverFirstAttempts([recordOf(JSON.stringify(message()), 1, id)], deps);
      const [short, long] = sentTo(sqs, 'https://sqs/retry').map((c) => c.input);
      expect(short).toMatchObject({ DelaySeconds: 600 });
      expect(short!.MessageAttributes).not.toHaveProperty('due_at');
      expect(long).toMatchObject({ DelaySeconds: 900 });
      const due = Number(
        (long!.MessageAttributes as Record<string, { StringValue: string }>).due_at!.StringValue,
      );
      expect(due - before).toBeGreaterThanOrEqual(3600_000);
      expect(due - Date.now()).toBeLessThanOrEqual(3600_000);
    });

    it('hands a campaign in the slow lane to the retry lane without an attempt', async () => {
      const rx = await receiver();
      const { deps, sqs, flags } = setup(rx.url, {}, { slowLane: true });
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(result.counts.moved).toBe(1);
      expect(rx.requests).toHaveLength(0);
      expect(sentTo(sqs, 'https://sqs/retry').map((c) => c.input)).toMatchObject([
        { DelaySeconds: 0, MessageAttributes: { attempts: { StringValue: '0' } } },
      ]);
      expect(flags).toEqual([]);
    });

    it('puts an endpoint that answers 2xx, but slowly, in the slow lane', async () => {
      const rx = await receiver();
      let now = 0;
      const { deps, flags } = setup(rx.url, {
        clock: () => {
          now += 1_500;
          return now;
        },
      });
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.counts.delivered).toBe(1);
      expect(flags).toEqual([]);
      const slower = setup(rx.url, {
        clock: () => {
          now += 2_500;
          return now;
        },
      });
      await deliverFirstAttempts([recordOf(JSON.stringify(message()))], slower.deps);
      expect(slower.flags).toEqual([[rx.url, true]]);
    });

    it('hands the event to the retry lane when the campaign cannot be read', async () => {
      const { deps, sqs } = setup('http://127.0.0.1:9', {
        loadTarget: async () => {
          throw new Error('ProvisionedThroughputExceeded');
        },
      });
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(sentTo(sqs, 'https://sqs/retry').map((c) => c.input)).toMatchObject([
        { DelaySeconds: 5, MessageAttributes: { attempts: { StringValue: '0' } } },
      ]);
    });

    it('leaves the message on its queue when the retry lane cannot take it', async () => {
      const rx = await receiver(() => ({ status: 500 }));
      const { deps } = setup(rx.url, {}, { failSqs: (name) => name === 'SendMessageCommand' });
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    });

    it('dead-letters at once when the schedule has no retries', async () => {
      const rx = await receiver(() => ({ status: 500 }));
      const { deps, sqs } = setup(rx.url, { delays: [] });
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.counts.deadLettered).toBe(1);
      expect(sentTo(sqs, 'https://sqs/retry')).toEqual([]);
      expect(JSON.parse(sentTo(sqs, 'https://sqs/dlq')[0]!.input.MessageBody as string)).toMatchObject({
        dead_letter: { error: 'HTTP 500', attempts: 1 },
      });
    });

    it('dead-letters a malformed message at once', async () => {
      const { deps, sqs } = setup('http://127.0.0.1:9');
      const result = await deliverFirstAttempts([recordOf('{"event_id":"x"}')], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(JSON.parse(sqs.commands[0]!.input.MessageBody as string)).toMatchObject({
        raw_body: '{"event_id":"x"}',
        dead_letter: { attempts: 1 },
      });
    });

    it('drops the event when the campaign is gone or has no webhook_url', async () => {
      const { deps, sqs } = setup(undefined);
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(result.counts.dropped).toBe(1);
      expect(sqs.commands).toEqual([]);
    });

    it('stops on 410 without retrying or dead-lettering', async () => {
      const rx = await receiver(() => ({ status: 410 }));
      const { deps, sqs } = setup(rx.url);
      const result = await deliverFirstAttempts([recordOf(JSON.stringify(message()))], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(sqs.commands).toEqual([]);
    });
  });

  describe('retry lane', () => {
    it('numbers the attempt from the attempts before the lane plus its receives, and backs off a failure', async () => {
      const rx = await receiver(() => ({ status: 500 }));
      const { deps, sqs } = setup(rx.url, {}, { slowLane: true });
      // Attempt 2 (1 before + 1 receive) failed: the next delay is the schedule's second, 5 min.
      const result = await deliverRetries([retryRecordOf(1, 1)], deps);
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
      expect(result.counts.failed).toBe(1);
      expect(sqs.commands).toEqual([
        {
          name: 'ChangeMessageVisibilityCommand',
          input: { QueueUrl: 'https://sqs/retry', ReceiptHandle: 'rh-m-1', VisibilityTimeout: 300 },
        },
      ]);
      // A first attempt handed over from the slow lane (0 before) is attempt 1: 5 s.
      await deliverRetries([retryRecordOf(0, 1, 'm-2')], deps);
      expect(sqs.commands[1]!.input.VisibilityTimeout).toBe(5);
      // A message without the attribute (sent before the lanes) counts its receives alone.
      await deliverRetries([recordOf(JSON.stringify(message()), 2, 'm-3')], deps);
      expect(sqs.commands[2]!.input.VisibilityTimeout).toBe(300);
    });

    it('honours Retry-After on 429 and 503, not on other statuses', async () => {
      const rx = await receiver(
        (_r, i) =>
          [
            { status: 429, headers: { 'retry-after': '900' } },
            { status: 503, headers: { 'retry-after': '1' } },
            { status: 500, headers: { 'retry-after': '900' } },
          ][i],
      );
      const { deps, sqs } = setup(rx.url);
      for (const id of ['a', 'b', 'c']) await deliverRetries([retryRecordOf(1, 1, id)], deps);
      expect(sqs.commands.map((c) => c.input.VisibilityTimeout)).toEqual([900, 240, 300]);
    });

    it('counts a lookup that takes over 3 s as a failed attempt, retried on the schedule', async () => {
      vi.useFakeTimers();
      try {
        const { deps, sqs } = setup('https://hooks.customer.test/in', {
          allowPrivate: false,
          resolve: () => new Promise(() => undefined),
        });
        const pending = deliverRetries([retryRecordOf(1, 1)], deps);
        await vi.advanceTimersByTimeAsync(3000);
        expect((await pending).batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
        expect(sqs.commands).toEqual([
          {
            name: 'ChangeMessageVisibilityCommand',
            input: { QueueUrl: 'https://sqs/retry', ReceiptHandle: 'rh-m-1', VisibilityTimeout: 300 },
          },
        ]);
        const attempt = attemptDelivery(
          message(),
          { url: 'https://hooks.customer.test/in', secret: secret() },
          { allowPrivate: false, resolve: () => new Promise(() => undefined) },
        );
        await vi.advanceTimersByTimeAsync(3000);
        expect(await attempt).toEqual({
          outcome: 'failed',
          error: 'destination refused: host hooks.customer.test did not resolve within 3 seconds',
        });
      } finally {
        vi.useRealTimers();
      }
    });

    it('dead-letters after the last attempt and acknowledges the message', async () => {
      const rx = await receiver(() => ({ status: 500 }));
      const { deps, sqs } = setup(rx.url, { delays: [1, 1] });
      const result = await deliverRetries([retryRecordOf(1, 2)], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(result.counts.deadLettered).toBe(1);
      expect(sqs.commands).toHaveLength(1);
      expect(sqs.commands[0]!.name).toBe('SendMessageCommand');
      expect(sqs.commands[0]!.input.QueueUrl).toBe('https://sqs/dlq');
      expect(JSON.parse(sqs.commands[0]!.input.MessageBody as string)).toMatchObject({
        ...message(),
        dead_letter: { error: 'HTTP 500', status: 500, attempts: 3 },
      });
    });

    it('puts a message back, as a new one, until it is due', async () => {
      const rx = await receiver();
      const { deps, sqs } = setup(rx.url);
      const due = Date.now() + 2 * 3600_000;
      const record = recordOf(JSON.stringify(message()), 1, 'm-1', { attempts: '1', due_at: String(due) });
      const result = await deliverRetries([record], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(rx.requests).toHaveLength(0);
      const [resent] = sentTo(sqs, 'https://sqs/retry').map((c) => c.input);
      expect(resent).toMatchObject({
        DelaySeconds: 900,
        MessageAttributes: { attempts: { StringValue: '1' } },
      });
      const newDue = Number(
        (resent!.MessageAttributes as Record<string, { StringValue: string }>).due_at!.StringValue,
      );
      expect(Math.abs(newDue - due)).toBeLessThan(1500);
    });

    it('takes an endpoint out of the slow lane when an attempt succeeds within the bound', async () => {
      const rx = await receiver();
      const { deps, flags } = setup(rx.url, {}, { slowLane: true });
      const result = await deliverRetries([retryRecordOf(0, 1)], deps);
      expect(result).toMatchObject({ batchItemFailures: [], counts: { delivered: 1 } });
      expect(flags).toEqual([[rx.url, false]]);
    });

    it('puts the event back due in 5 s, with no attempt counted, when the campaign cannot be read', async () => {
      const { deps, sqs } = setup('http://127.0.0.1:9', {
        loadTarget: async () => {
          throw new Error('ProvisionedThroughputExceeded');
        },
      });
      // Attempts before the lane: 2; this receive (the 3rd) made no attempt, so 2 it stays.
      const result = await deliverRetries([retryRecordOf(2, 3)], deps);
      expect(result.batchItemFailures).toEqual([]);
      expect(sentTo(sqs, 'https://sqs/retry').map((c) => c.input)).toMatchObject([
        { DelaySeconds: 5, MessageAttributes: { attempts: { StringValue: '2' } } },
      ]);
    });

    it('leaves the message on its queue when the campaign cannot be read and the lane cannot take it', async () => {
      const { deps } = setup(
        'http://127.0.0.1:9',
        {
          loadTarget: async () => {
            throw new Error('ProvisionedThroughputExceeded');
          },
        },
        { failSqs: () => true },
      );
      const result = await deliverRetries([retryRecordOf(1, 1)], deps);
      expect(result.batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
    });
  });

  it('treats a 3xx as a failure and does not follow it', async () => {
    const elsewhere = await receiver();
    const rx = await receiver(() => ({ status: 302, headers: { location: elsewhere.url } }));
    const result = await attemptDelivery(
      message(),
      { url: rx.url, secret: secret() },
      { allowPrivate: true },
    );
    expect(result).toEqual({ outcome: 'failed', error: 'HTTP 302 redirect (not followed)', status: 302 });
    expect(elsewhere.requests).toHaveLength(0);
  });

  it('times out a silent receiver', async () => {
    const rx = await receiver(() => ({ status: 200 }));
    // A server that accepts and never answers.
    const { createServer } = await import('node:net');
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    try {
      const result = await attemptDelivery(
        message(),
        { url: `http://127.0.0.1:${port}/`, secret: secret() },
        { allowPrivate: true, timeoutMs: 200 },
      );
      expect(result).toEqual({ outcome: 'failed', error: 'timeout after 200 ms' });
    } finally {
      silent.close();
      await rx.close();
    }
  });

  it('connects to the address it checked, keeping the name in the Host header', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const lookups: string[] = [];
    // A rebinding resolver: the first answer is checked and used; a second one is never asked.
    const answers = ['127.0.0.1', '10.9.9.9'];
    const resolve = async (host: string) => {
      lookups.push(host);
      return [{ address: answers.shift()!, family: 4 as const }];
    };
    const result = await attemptDelivery(
      message(),
      { url: `http://hooks.customer.test:${port}/cb`, secret: secret() },
      { allowPrivate: true, resolve },
    );
    expect(result).toEqual({ outcome: 'delivered', status: 200 });
    expect(lookups).toEqual(['hooks.customer.test']);
    expect(rx.requests[0]!.headers.host).toBe(`hooks.customer.test:${port}`);
  });

  it('refuses a private destination in a deployed stage without connecting', async () => {
    const rx = await receiver();
    const port = new URL(rx.url).port;
    const deployed = {
      allowPrivate: false,
      resolve: async () => [{ address: '127.0.0.1', family: 4 as const }],
    };
    const viaName = await attemptDelivery(
      message(),
      { url: `https://hooks.customer.test:${port}/`, secret: secret() },
      deployed,
    );
    // Refused, and the delivery log (which the tenant reads) does not say which internal range.
    expect(viaName).toMatchObject({ outcome: 'failed', error: expect.stringContaining('not allowed') });
    expect(viaName.outcome === 'failed' && viaName.error).not.toMatch(/loopback/);
    const viaHttp = await attemptDelivery(message(), { url: rx.url, secret: secret() }, deployed);
    expect(viaHttp).toMatchObject({ outcome: 'failed', error: expect.stringContaining('https') });
    expect(rx.requests).toHaveLength(0);
  });

  /** A self-signed certificate for `name`, or undefined where openssl is not installed. */
  function selfSigned(name: string): { key: Buffer; cert: Buffer } | undefined {
    const dir = mkdtempSync(join(tmpdir(), 'webhook-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-days',
          '1',
          '-subj',
          `/CN=${name}`,
          '-addext',
          `subjectAltName=DNS:${name}`,
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
    } catch {
      return undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  const tls = selfSigned('hooks.customer.test');
  it.skipIf(!tls)('over https sends the name as SNI and verifies the certificate', async () => {
    const seen: string[] = [];
    const server = createHttpsServer(
      {
        ...tls!,
        SNICallback: (servername, cb) => {
          seen.push(servername);
          cb(null, undefined as never);
        },
      },
      (_req, res) => res.end('ok'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const result = await attemptDelivery(
        message(),
        { url: `https://hooks.customer.test:${port}/`, secret: secret() },
        { allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] },
      );
      expect(seen).toEqual(['hooks.customer.test']);
      // Pinned to 127.0.0.1 yet checked against the name: a self-signed certificate is refused.
      expect(result).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/SELF_SIGNED|CERT/) });
    } finally {
      server.close();
    }
  });
});

describe('signing after a secret rotation', () => {
  const oldSecret = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
  const newSecret = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
  const message = {
    event_id: 'evt_action_7',
    event_type: 'action.created' as const,
    event_time: '2026-11-22T14:05:09.123Z',
    tenant: 't',
    campaign_id: '3f0c2a9e-4b1d-4c5e-9f00-0123456789ab',
    event_json: '{"id":7}',
  };

  it('carries one signature per secret, space-separated; standardwebhooks accepts either secret', () => {
    const now = new Date();
    const signed = signDelivery(message, [newSecret, oldSecret], now);
    expect(signed.headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const secret of [newSecret, oldSecret]) {
      expect(new Webhook(secret).verify(signed.body, signed.headers)).toEqual(JSON.parse(signed.body));
    }
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 3).toString('base64')}`).verify(signed.body, signed.headers),
    ).toThrow();
  });

  it('signs with the previous secret only until it expires', () => {
    const item = {
      webhook_secret: newSecret,
      webhook_previous_secret: oldSecret,
      webhook_previous_secret_expires_at: '2026-11-23T12:00:00.000Z',
    };
    expect(signingSecretsOf(item, new Date('2026-11-23T11:59:59.000Z'))).toEqual([newSecret, oldSecret]);
    expect(signingSecretsOf(item, new Date('2026-11-23T12:00:00.000Z'))).toEqual([newSecret]);
    expect(signingSecretsOf({ webhook_secret: newSecret })).toEqual([newSecret]);
    expect(signingSecretsOf({})).toEqual([]);
  });
});
