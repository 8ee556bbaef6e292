/**
 * Part 5: webhooks through the local pipeline (table stream -> stream poller -> queue -> queue
 * poller -> delivery handler) to a receiver on 127.0.0.1. Latency is from an action's 201 to
 * the arrival of its signed delivery; throughput is from a backlog of action items written into
 * the table at once. Every delivery is verified with `standardwebhooks`, as a customer would.
 *
 * The floor is the last hop alone: the same body signed and POSTed to the same receiver straight
 * from this process (no stream, no queue).
 */
import { existsSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { join } from 'node:path';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook } from 'standardwebhooks';
import { actionKey } from '../../lib/db/entities/action.ts';
import { sequenceKey } from '../../lib/db/entities/sequence.ts';
import { formatTimestamp } from '../../lib/domain/time.ts';
import { eventAttributes } from '../../lib/domain/webhook-events.ts';
import { sqsClient } from '../../lib/local/queue.ts';
import {
  type Responder,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../../test/support/webhook-receiver.ts';
import { projectRoot } from './bundles.ts';
import type { CountingProxy } from './counting-proxy.ts';
import { batchPut } from './endpoints.ts';
import type { BenchEnvironment } from './environment.ts';
import type { RequestSpec } from './http-client.ts';
import { percentile, sleep } from './stats.ts';

export interface WebhookResult {
  available: true;
  latency: { events: number; paceMs: number; p50: number; p95: number; max: number; missing: number };
  floorLatency: { p50: number; p95: number };
  /**
   * The same for actions of a referred user (endpoint 5): recorded on the link's item, their
   * action item (and so their event) is written by the stream consumer, one stream hop more.
   */
  userActionLatency: { events: number; p50: number; p95: number; max: number; missing: number };
  backlog: {
    events: number;
    writeSeconds: number;
    /** Deliveries per second from the first to the last delivery. */
    deliveriesPerSecond: number;
    /** Deliveries per second after the last 201, when only the backlog remained. */
    drainPerSecond: number;
    totalSeconds: number;
    missing: number;
  };
  floorDeliveriesPerSecond: number;
  duplicates: number;
  verified: number;
  verifyFailures: number;
  /** Actions without metadata (stored as an empty map): how many were delivered. */
  emptyMetadata: { sent: number; delivered: number };
}

export type WebhookOutcome = WebhookResult | { available: false; reason: string };

interface Arrival {
  at: number;
  id: string;
  body: string;
  headers: Record<string, string>;
}

export function webhookPipelinePresent(): string | undefined {
  const needed = ['functions/queue/deliver-webhook.ts', 'lib/local/stream-poller.ts'];
  const missing = needed.filter((f) => !existsSync(join(projectRoot, f)));
  return missing.length ? `missing ${missing.join(', ')}` : undefined;
}

/** Wait until both webhook lanes are empty and no delivery read the table for a second. */
export async function waitPipelineIdle(env: BenchEnvironment, proxy: CountingProxy, maxMs = 120_000) {
  const sqs = sqsClient(env.stack.queue.endpoint);
  const started = Date.now();
  const webhookReads = async () =>
    Object.entries((await proxy.snapshot()).counts)
      .filter(([k]) => k.startsWith('webhook:'))
      .reduce((a, [, v]) => a + v, 0);
  try {
    let last = await webhookReads();
    let stableSince = Date.now();
    while (Date.now() - started < maxMs) {
      await sleep(250);
      let depth = 0;
      for (const QueueUrl of [env.stack.queue.webhookQueueUrl, env.stack.queue.webhookRetryQueueUrl]) {
        const attrs = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl,
            AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
          }),
        );
        depth +=
          Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0) +
          Number(attrs.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
      }
      const now = await webhookReads();
      if (now !== last || depth > 0) {
        last = now;
        stableSince = Date.now();
      } else if (Date.now() - stableSince > 1_000) {
        return true;
      }
    }
    return false;
  } finally {
    sqs.destroy();
  }
}

export async function measureWebhooks(
  env: BenchEnvironment,
  options: { latencyEvents: number; backlogEvents: number; paceMs: number },
): Promise<WebhookOutcome> {
  const absent = webhookPipelinePresent();
  if (absent) return { available: false, reason: `webhook pipeline not landed (${absent})` };

  const arrivals = new Map<string, Arrival[]>();
  let onArrival: ((a: Arrival) => void) | undefined;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      res.writeHead(204).end();
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const arrival = {
        at,
        id: headers['webhook-id'] ?? '',
        body: Buffer.concat(chunks).toString('utf8'),
        headers,
      };
      const list = arrivals.get(arrival.id) ?? [];
      list.push(arrival);
      arrivals.set(arrival.id, list);
      onArrival?.(arrival);
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const address = receiver.address();
  const receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`;
  const client = env.client;
  try {
    const campaign = await client.expect<{ id: string }>(
      {
        method: 'POST',
        path: '/api/v1/campaign',
        body: { url: 'https://example.com/hooks', name: 'Webhooks' },
      },
      201,
    );
    const patched = await client.expect<{ webhook_secret: string }>(
      { method: 'PATCH', path: `/api/v1/campaign?id=${campaign.id}`, body: { webhook_url: receiverUrl } },
      200,
    );
    const link = await client.expect<{ referral_code: string }>(
      { method: 'POST', path: '/api/v1/referral_link', body: { campaign_id: campaign.id } },
      201,
    );
    const action = (metadata?: Record<string, unknown>) => ({
      method: 'POST',
      path: '/api/v1/action/referral_link',
      body: { referral_code: link.referral_code, action_type: 'purchase', ...(metadata ? { metadata } : {}) },
    });
    const eventId = (body: { id: number }) => `evt_action_${body.id}`;

    /** Resolves when every id has arrived, or after `timeoutMs`. */
    const waitFor = async (ids: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline && ids.some((id) => !arrivals.has(id))) await sleep(50);
      return ids.filter((id) => !arrivals.has(id)).length;
    };

    // Probe: does a delivery arrive at all? (The pipeline may exist but not be wired yet.)
    const probe = await client.expect<{ id: number; campaign_id?: string }>(action({ probe: true }), 201);
    if ((await waitFor([eventId(probe)], 30_000)) > 0) {
      return {
        available: false,
        reason: 'no delivery arrived within 30 s of an action (pipeline not wired?)',
      };
    }

    /** Paced actions, each timed from its 201 to the arrival of its delivery. */
    const timeDeliveries = async (count: number, request: (i: number) => RequestSpec) => {
      const sentAt = new Map<string, number>();
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const body = await client.expect<{ id: number }>(request(i), 201);
        sentAt.set(eventId(body), performance.now());
        const wait = options.paceMs - (performance.now() - started);
        if (wait > 0) await sleep(wait);
      }
      const ids = [...sentAt.keys()];
      const missing = await waitFor(ids, 60_000);
      const latencies = ids
        .filter((id) => arrivals.has(id))
        .map((id) => arrivals.get(id)![0]!.at - sentAt.get(id)!);
      return { ids, missing, latencies };
    };

    // Latency: actions on a link.
    const {
      ids: latencyIds,
      missing: latencyMissing,
      latencies,
    } = await timeDeliveries(options.latencyEvents, (i) => action({ n: i }));

    // The same for actions of a referred user (one stream hop more); the signup's own event first.
    const signup = await client.expect<{ id: number }>(
      {
        method: 'POST',
        path: '/api/v1/referred_user',
        body: { referral_code: link.referral_code, referred_user_id: 'bench-user' },
      },
      201,
    );
    await waitFor([`evt_referred_user_${signup.id}`], 30_000);
    const {
      ids: userIds,
      missing: userMissing,
      latencies: userLatencies,
    } = await timeDeliveries(Math.min(200, options.latencyEvents), (i) => ({
      method: 'POST',
      path: '/api/v1/action/referred_user',
      body: {
        campaign_id: campaign.id,
        referred_user_id: 'bench-user',
        action_type: 'purchase',
        metadata: { n: i },
      },
    }));

    // Floor: the same kind of body, signed and POSTed straight to the receiver.
    const signer = new Webhook(patched.webhook_secret);
    const sampleBody = arrivals.get(latencyIds[0]!)?.[0]?.body ?? '{}';
    const directPost = (id: string) => {
      const now = new Date();
      const signature = signer.sign(id, now, sampleBody);
      return new Promise<void>((resolve, reject) => {
        const req = request(
          receiverUrl,
          {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'webhook-id': id,
              'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
              'webhook-signature': signature,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        req.end(sampleBody);
      });
    };
    const floorLatencies: number[] = [];
    for (let i = 0; i < Math.min(200, options.latencyEvents); i++) {
      const id = `floor_${i}`;
      const t = performance.now();
      const arrived = new Promise<number>((resolve) => {
        onArrival = (a) => {
          if (a.id === id) resolve(a.at);
        };
      });
      await directPost(id);
      floorLatencies.push((await arrived) - t);
    }
    onArrival = undefined;
    const floorIds = Array.from({ length: options.backlogEvents }, (_, i) => `floor_backlog_${i}`);
    const floorStart = performance.now();
    let nextFloor = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = nextFloor++; i < floorIds.length; i = nextFloor++) await directPost(floorIds[i]!);
      }),
    );
    const floorDeliveriesPerSecond = floorIds.length / ((performance.now() - floorStart) / 1000);

    // Empty metadata: the contract's default (`{}`).
    const emptyIds: string[] = [];
    for (let i = 0; i < 5; i++) emptyIds.push(eventId(await client.expect<{ id: number }>(action(), 201)));

    // Backlog: the API writes about as fast as the pipeline delivers, so a burst through it never
    // builds one. The backlog is written straight into the table instead: action items exactly as
    // `recordAction` writes them (event attributes included, ids reserved from the action
    // sequence), 25 per BatchWriteItem, far faster than the pipeline drains them.
    const { Attributes } = await env.directDb.send(
      new UpdateCommand({
        TableName: env.tableName,
        Key: sequenceKey('action'),
        UpdateExpression: 'ADD last_id :n SET #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':n': options.backlogEvents, ':type': 'sequence' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const firstId = Number(Attributes?.last_id) - options.backlogEvents + 1;
    const template = probe as unknown as Record<string, unknown>;
    const items = Array.from({ length: options.backlogEvents }, (_, i) => {
      const id = firstId + i;
      const now = new Date();
      const data = { ...template, id, created_at: formatTimestamp(now), metadata: { n: i } };
      return {
        ...actionKey(env.tenant, campaign.id, id),
        type: 'action',
        link_code: link.referral_code,
        ...eventAttributes('action.created', id, env.tenant, campaign.id, data, now),
      };
    });
    const backlogIds = items.map((item) => item.event_id);
    const writeStart = performance.now();
    await batchPut(env.directDb, env.tableName, items, 8);
    const writeEnd = performance.now();
    const backlogMissing = await waitFor(backlogIds, 180_000);
    const times = backlogIds.filter((id) => arrivals.has(id)).map((id) => arrivals.get(id)![0]!.at);
    const first = Math.min(...times);
    const last = Math.max(...times);
    const afterWrites = times.filter((t) => t > writeEnd).length;
    await waitFor(emptyIds, 5_000);

    // Verify every pipeline delivery as a customer would; count duplicates of one webhook-id.
    let verified = 0;
    let verifyFailures = 0;
    let duplicates = 0;
    for (const [id, list] of arrivals) {
      if (id.startsWith('floor_')) continue;
      duplicates += list.length - 1;
      for (const a of list) {
        try {
          signer.verify(a.body, a.headers);
          verified++;
        } catch {
          verifyFailures++;
        }
      }
    }
    return {
      available: true,
      latency: {
        events: latencyIds.length,
        paceMs: options.paceMs,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        max: Math.max(...latencies),
        missing: latencyMissing,
      },
      floorLatency: { p50: percentile(floorLatencies, 50), p95: percentile(floorLatencies, 95) },
      userActionLatency: {
        events: userIds.length,
        p50: percentile(userLatencies, 50),
        p95: percentile(userLatencies, 95),
        max: Math.max(...userLatencies),
        missing: userMissing,
      },
      backlog: {
        events: backlogIds.length,
        writeSeconds: (writeEnd - writeStart) / 1000,
        deliveriesPerSecond: times.length / ((last - first) / 1000),
        drainPerSecond: afterWrites / ((last - writeEnd) / 1000),
        totalSeconds: (last - writeStart) / 1000,
        missing: backlogMissing,
      },
      floorDeliveriesPerSecond,
      duplicates,
      verified,
      verifyFailures,
      emptyMetadata: { sent: emptyIds.length, delivered: emptyIds.filter((id) => arrivals.has(id)).length },
    };
  } finally {
    receiver.closeAllConnections();
    await new Promise<void>((r) => receiver.close(() => r()));
  }
}

export interface IsolationResult {
  available: true;
  /** Seconds of paced events in each run, and the pace. */
  seconds: number;
  paceMs: number;
  /** Pending events written for each bad receiver before the second run. */
  backlogPerReceiver: number;
  /** First-attempt latency of the healthy campaign, 201 -> arrival, without and with bad receivers. */
  alone: LatencySummary;
  beside: LatencySummary;
  /** What each bad receiver saw during the second run. */
  receivers: Array<{ name: string; behaviour: string; requests: number; beforeFirstTimeout: number }>;
}

export interface LatencySummary {
  events: number;
  p50: number;
  p99: number;
  max: number;
  missing: number;
}

export type IsolationOutcome = IsolationResult | { available: false; reason: string };

/**
 * Isolation (contract: a receiver that is slow, times out or fails never delays another
 * campaign's deliveries): a healthy campaign's events through the API, paced, each timed from its
 * 201 to the arrival of its first attempt; first alone, then while four other campaigns' receivers
 * answer after 20 s, never answer (the 15 s timeout), answer 500 or hang up, each with a backlog
 * of pending events written straight into the table. The second run lasts longer than the attempt
 * timeout, so it covers the whole time the bad receivers hold their first attempts. Run last: the
 * bad campaigns are deleted afterwards, but their retries stay scheduled (5 min and more) until
 * their next attempt drops them.
 */
export async function measureWebhookIsolation(
  env: BenchEnvironment,
  options: { seconds: number; paceMs: number; backlogPerReceiver: number },
): Promise<IsolationOutcome> {
  const absent = webhookPipelinePresent();
  if (absent) return { available: false, reason: `webhook pipeline not landed (${absent})` };
  const receivers: WebhookReceiver[] = [];
  const campaigns: string[] = [];
  const client = env.client;
  const campaignReceiving = async (name: string, respond?: Responder) => {
    const rx = await startWebhookReceiver(respond);
    receivers.push(rx);
    const campaign = await client.expect<{ id: string }>(
      { method: 'POST', path: '/api/v1/campaign', body: { url: 'https://example.com/', name } },
      201,
    );
    campaigns.push(campaign.id);
    await client.expect(
      {
        method: 'PATCH',
        path: `/api/v1/campaign?id=${campaign.id}`,
        body: { webhook_url: `${rx.url}/hooks` },
      },
      200,
    );
    return { rx, id: campaign.id };
  };
  try {
    const healthy = await campaignReceiving('Isolation: healthy');
    const link = await client.expect<{ referral_code: string }>(
      { method: 'POST', path: '/api/v1/referral_link', body: { campaign_id: healthy.id } },
      201,
    );
    const paced = async (): Promise<LatencySummary> => {
      const sent = new Map<string, number>();
      const until = Date.now() + options.seconds * 1000;
      while (Date.now() < until) {
        const started = Date.now();
        const body = await client.expect<{ id: number }>(
          {
            method: 'POST',
            path: '/api/v1/action/referral_link',
            body: { referral_code: link.referral_code, action_type: 'purchase' },
          },
          201,
        );
        sent.set(`evt_action_${body.id}`, Date.now());
        const wait = options.paceMs - (Date.now() - started);
        if (wait > 0) await sleep(wait);
      }
      const deadline = Date.now() + 30_000;
      const arrivedAt = () =>
        new Map(healthy.rx.requests.map((r) => [String(r.headers['webhook-id']), r.receivedAt]));
      let arrived = arrivedAt();
      while ([...sent.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) {
        await sleep(100);
        arrived = arrivedAt();
      }
      const latencies = [...sent].filter(([id]) => arrived.has(id)).map(([id, at]) => arrived.get(id)! - at);
      return {
        events: sent.size,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
        missing: sent.size - latencies.length,
      };
    };

    const alone = await paced();

    const bad = [
      {
        name: 'slow',
        behaviour: 'answers 200 after 20 s',
        respond: () => ({ status: 200, delayMs: 20_000 }),
      },
      { name: 'silent', behaviour: 'never answers (15 s timeout)', respond: () => 'silence' as const },
      { name: 'failing', behaviour: 'answers 500 at once', respond: () => ({ status: 500 }) },
      { name: 'hang-up', behaviour: 'closes the connection', respond: () => 'hang-up' as const },
    ];
    const badCampaigns = [];
    for (const b of bad)
      badCampaigns.push({ ...b, ...(await campaignReceiving(`Isolation: ${b.name}`, b.respond)) });
    const { Attributes } = await env.directDb.send(
      new UpdateCommand({
        TableName: env.tableName,
        Key: sequenceKey('action'),
        UpdateExpression: 'ADD last_id :n SET #type = :type',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':n': bad.length * options.backlogPerReceiver, ':type': 'sequence' },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    let nextId = Number(Attributes?.last_id) - bad.length * options.backlogPerReceiver + 1;
    const items = badCampaigns.flatMap((c) =>
      Array.from({ length: options.backlogPerReceiver }, () => {
        const id = nextId++;
        return {
          ...actionKey(env.tenant, c.id, id),
          type: 'action',
          ...eventAttributes('action.created', id, env.tenant, c.id, { id, action_type: 'visit' }),
        };
      }),
    );
    await batchPut(env.directDb, env.tableName, items, 8);
    // The bad receivers hold their attempts before the healthy campaign's first event.
    await Promise.all(badCampaigns.map((c) => c.rx.waitFor(1, 30_000)));
    const badSince = Date.now();
    const beside = await paced();
    return {
      available: true,
      seconds: options.seconds,
      paceMs: options.paceMs,
      backlogPerReceiver: options.backlogPerReceiver,
      alone,
      beside,
      receivers: badCampaigns.map((c) => ({
        name: c.name,
        behaviour: c.behaviour,
        requests: c.rx.requests.length,
        beforeFirstTimeout: c.rx.requests.filter((r) => r.receivedAt < badSince + 14_000).length,
      })),
    };
  } finally {
    // Deleted campaigns get no more attempts; closed receivers fail the ones in flight at once.
    await Promise.all(
      campaigns.map((id) =>
        client.send({ method: 'DELETE', path: `/api/v1/campaign?id=${id}` }).catch(() => undefined),
      ),
    );
    await Promise.all(receivers.map((r) => r.close()));
  }
}
