/**
 * Part 7: a cost model on paper, from what the bench measured (DynamoDB calls per request, the
 * real item sizes in the table, handler durations and cold-start import times) and AWS list
 * prices. Every assumption is written next to the figure it drives.
 */
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { campaignKey } from '../../lib/db/entities/campaign.ts';
import { linkKey } from '../../lib/db/entities/link.ts';
import { LINK_INDEX_ATTRIBUTES } from '../../lib/table-definition.ts';
import type { BenchEnvironment } from './environment.ts';

/**
 * us-east-1 public list prices (USD) as known to the author from the AWS pricing pages (2025);
 * the bench has no internet access, so they are not fetched. Check them before relying on them.
 */
export const PRICES = {
  source: 'AWS us-east-1 public list prices as known to the author (pricing pages, 2025); not fetched live',
  lambdaArmGbSecond: 0.0000133334,
  lambdaPerMillionRequests: 0.2,
  httpApiPerMillion: 1.0,
  dynamoPerMillionWru: 0.625,
  dynamoPerMillionRru: 0.125,
  sqsPerMillionRequests: 0.4,
  pipesPerMillionRequests: 0.4,
  streamsPerMillionReadRequests: 0.2,
  cloudWatchLogsPerGb: 0.5,
  dataTransferOutPerGb: 0.09,
} as const;

/** DynamoDB's item size: attribute names plus values (numbers ~1 byte per 2 digits + 1). */
export function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value).replace(/[-.]/g, '').replace(/^0+/, '').length || 1;
    return Math.ceil(digits / 2) + 1;
  }
  if (Array.isArray(value)) return 3 + value.reduce<number>((a, v) => a + 1 + itemSize(v), 0);
  if (typeof value === 'object') {
    return (
      3 +
      Object.entries(value as Record<string, unknown>).reduce(
        (a, [k, v]) => a + 1 + Buffer.byteLength(k) + itemSize(v),
        0,
      )
    );
  }
  return 0;
}

/** Top-level item size (no map overhead for the item itself). */
const sizeOfItem = (item: Record<string, unknown>) =>
  Object.entries(item).reduce((a, [k, v]) => a + Buffer.byteLength(k) + itemSize(v), 0);

const wcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const rcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));

export interface ItemSizes {
  campaign: number;
  link: number;
  visitAction: number;
  linkAction: number;
  /** GSIs that hold the link (GSI1 by id, GSI2 campaign list, GSI3 referrer list). */
  linkIndexes: number;
  /** One index's copy of the link: the keys and the projected attributes only. */
  linkIndexCopy: number;
}

/** Read real items the benchmark wrote and measure them. */
export async function measureItemSizes(
  env: BenchEnvironment,
  campaignId: string,
  linkCode: string,
): Promise<ItemSizes> {
  const db = env.directDb;
  const T = env.tableName;
  const get = async (Key: Record<string, string>) =>
    (await db.send(new GetCommand({ TableName: T, Key, ConsistentRead: true }))).Item ?? {};
  const campaign = await get(campaignKey(env.tenant, campaignId));
  const link = await get(linkKey(linkCode));
  const dataOf = (a: Record<string, unknown>) =>
    JSON.parse(String(a.event_json ?? '{}')) as { action_type?: string; referred_user?: unknown };
  let visit: Record<string, unknown> | undefined;
  let other: Record<string, unknown> | undefined;
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: T,
        KeyConditionExpression: 'PK = :pk AND begins_with(SK, :a)',
        ExpressionAttributeValues: { ':pk': campaignKey(env.tenant, campaignId).PK, ':a': 'A#' },
        ScanIndexForward: false,
        ExclusiveStartKey: start,
      }),
    );
    for (const a of page.Items ?? []) {
      if (dataOf(a).action_type === 'visit') visit ??= a;
      else if (!dataOf(a).referred_user) other ??= a;
    }
    start = page.LastEvaluatedKey;
  } while (start && !(visit && other));
  return {
    campaign: sizeOfItem(campaign),
    link: sizeOfItem(link),
    visitAction: sizeOfItem(visit ?? {}),
    linkAction: sizeOfItem(other ?? {}),
    linkIndexes: ['GSI1PK', 'GSI2PK', 'GSI3PK'].filter((k) => k in link).length,
    linkIndexCopy: sizeOfItem(
      Object.fromEntries(
        Object.entries(link).filter(([name]) =>
          ['PK', 'SK', 'GSI2PK', 'GSI2SK', ...LINK_INDEX_ATTRIBUTES].includes(name),
        ),
      ),
    ),
  };
}

export interface CostLine {
  component: string;
  quantity: string;
  perMillion: number;
}

export interface CostModel {
  date: string;
  visit: CostLine[];
  action: CostLine[];
  webhook: CostLine[];
  sizes: ItemSizes;
  assumptions: string[];
  totals: { visit: number; action: number; webhook: number };
}

export function costModel(input: {
  date: string;
  sizes: ItemSizes;
  /** Handler durations (ms) measured through the local gateway, p50. */
  visitMs: number;
  actionMs: number;
  /** Median cold import (ms) of the visit and action functions. */
  visitImportMs: number;
  actionImportMs: number;
  /** Measured DynamoDB calls per request. */
  visitCalls: string;
  actionCalls: string;
}): CostModel {
  const P = PRICES;
  const memoryGb = 0.25;
  const coldShare = 0.01;
  const runtimeInitMs = 150;
  const logBytesPerInvocation = 350;
  const accessLogBytes = 350;
  const s = input.sizes;

  const lambda = (ms: number): CostLine[] => [
    { component: 'Lambda requests', quantity: '1 invocation', perMillion: P.lambdaPerMillionRequests },
    {
      component: 'Lambda duration (arm64, 256 MB)',
      quantity: `${ms.toFixed(1)} ms (measured p50 through the local gateway)`,
      perMillion: memoryGb * (ms / 1000) * P.lambdaArmGbSecond * 1e6,
    },
  ];
  const cold = (importMs: number): CostLine => ({
    component: 'Lambda INIT (cold starts, billed since Aug 2025)',
    quantity: `${(coldShare * 100).toFixed(0)} % of invocations × (${importMs.toFixed(0)} ms import + ${runtimeInitMs} ms runtime)`,
    perMillion: coldShare * memoryGb * ((importMs + runtimeInitMs) / 1000) * P.lambdaArmGbSecond * 1e6,
  });
  const logs: CostLine = {
    component: 'CloudWatch Logs (API access log line + Lambda platform lines)',
    quantity: `~${accessLogBytes + logBytesPerInvocation} B`,
    perMillion: ((accessLogBytes + logBytesPerInvocation) * 1e6 * P.cloudWatchLogsPerGb) / 1024 ** 3,
  };
  /** Record + counter + campaign check in one transaction: 2× per KB each, GSI copies 1× each. */
  const transactionWru = (actionBytes: number) =>
    2 * wcu(actionBytes) + 2 * wcu(s.link) + 2 * wcu(s.campaign) + s.linkIndexes * wcu(s.linkIndexCopy);
  const dynamo = (calls: string, actionBytes: number): CostLine[] => [
    {
      component: 'DynamoDB reads',
      quantity: `GetItem of the link, strongly consistent (${s.link} B): ${rcu(s.link)} RRU`,
      perMillion: rcu(s.link) * P.dynamoPerMillionRru,
    },
    {
      component: 'DynamoDB writes',
      quantity:
        `TransactWriteItems: action Put ${actionBytes} B → 2×${wcu(actionBytes)}, link Update ${s.link} B → 2×${wcu(s.link)}, ` +
        `campaign ConditionCheck → 2×${wcu(s.campaign)}, link copies in ${s.linkIndexes} GSIs (${s.linkIndexCopy} B) → ${s.linkIndexes}×${wcu(s.linkIndexCopy)}: ` +
        `${transactionWru(actionBytes)} WRU (calls measured: ${calls})`,
      perMillion: transactionWru(actionBytes) * P.dynamoPerMillionWru,
    },
  ];

  // Every action (visits included) is an event: the stream consumer, the queue and the delivery
  // function handle it and read the campaign whether or not the campaign has a webhook_url (the
  // bench's latency runs show that read: one webhook campaign read per write).
  const noUrlDeliveryMs = 20;
  const pipeline: CostLine[] = [
    {
      component: 'Event pipeline: stream consumer Lambda (filter, batch 100)',
      quantity: 'stream reads by Lambda are free; 0.01 invocation + ~50 ms per batch',
      perMillion: 0.01 * P.lambdaPerMillionRequests + 0.01 * memoryGb * 0.05 * P.lambdaArmGbSecond * 1e6,
    },
    {
      component: 'Event pipeline: SQS',
      quantity: 'SendMessageBatch + ReceiveMessage + DeleteMessageBatch, 10 per call: ~0.3 requests',
      perMillion: 0.3 * P.sqsPerMillionRequests,
    },
    {
      component: 'Event pipeline: delivery Lambda (batch 10)',
      quantity: `0.1 invocation, ~${noUrlDeliveryMs} ms per batch when there is nothing to POST`,
      perMillion:
        0.1 * P.lambdaPerMillionRequests +
        0.1 * memoryGb * (noUrlDeliveryMs / 1000) * P.lambdaArmGbSecond * 1e6,
    },
    {
      component: 'Event pipeline: campaign read (URL and secret in force)',
      quantity: `1 GetItem, strongly consistent: ${rcu(s.campaign)} RRU (measured: 1 per event)`,
      perMillion: rcu(s.campaign) * P.dynamoPerMillionRru,
    },
  ];

  const visit: CostLine[] = [
    {
      component: 'API Gateway HTTP API',
      quantity: '1 request (no authorizer on /r)',
      perMillion: P.httpApiPerMillion,
    },
    ...lambda(input.visitMs),
    cold(input.visitImportMs),
    ...dynamo(input.visitCalls, s.visitAction),
    logs,
    ...pipeline,
  ];
  const action: CostLine[] = [
    { component: 'API Gateway HTTP API', quantity: '1 request', perMillion: P.httpApiPerMillion },
    {
      component: 'Authorizer (Lambda + GetItem)',
      quantity: 'cached 60 s per key by API Gateway: ~1 call per key per minute, ≈ 0 per million',
      perMillion: 0,
    },
    ...lambda(input.actionMs),
    cold(input.actionImportMs),
    ...dynamo(input.actionCalls, s.linkAction),
    logs,
    ...pipeline,
  ];
  const deliveryMs = 200;
  const webhookBytes = Math.max(s.linkAction, s.visitAction) + 400;
  const webhook: CostLine[] = [
    {
      component: 'Delivery Lambda waiting on the receiver (batch 10 in parallel)',
      quantity: `assumed ${deliveryMs} ms per batch instead of ${noUrlDeliveryMs} ms: 0.1 × ${deliveryMs - noUrlDeliveryMs} ms`,
      perMillion: 0.1 * memoryGb * ((deliveryMs - noUrlDeliveryMs) / 1000) * P.lambdaArmGbSecond * 1e6,
    },
    {
      component: 'Data transfer out (the POST)',
      quantity: `~${webhookBytes} B body and headers`,
      perMillion: (webhookBytes * 1e6 * P.dataTransferOutPerGb) / 1024 ** 3,
    },
  ];
  const sum = (lines: CostLine[]) => lines.reduce((a, l) => a + l.perMillion, 0);
  return {
    date: input.date,
    visit,
    action,
    webhook,
    sizes: s,
    totals: { visit: sum(visit), action: sum(action), webhook: sum(webhook) },
    assumptions: [
      'Item sizes are measured on items this run wrote, with DynamoDB’s size rules (names + values).',
      'Transactions cost 2 WRU per KB for every item, ConditionCheck included; the link’s GSI copies (the keys and the projected attributes) are updated at 1 WRU per KB each, as standard writes.',
      'Strongly consistent reads cost 1 RRU per 4 KB. On-demand capacity, no reserved capacity, no free tier.',
      'Lambda duration uses the handler’s p50 through the local gateway against DynamoDB Local; in AWS, DynamoDB answers in single-digit ms, so this is an upper-end guess. At 256 MB each millisecond costs $0.0033 per million, so the total barely moves.',
      `Cold starts: ${(coldShare * 100).toFixed(0)} % of invocations (steady traffic keeps containers warm), INIT billed at the function’s memory.`,
      'Every action and visit is an event: the pipeline (stream consumer, queue, delivery function, campaign read) runs for it even when its campaign has no webhook_url, so it is in the totals above; only the POST itself is an add-on. An EventBridge Pipe in place of the stream Lambda would add $0.40 per million events.',
      'SQS requests assume full batches of 10 on send, receive and delete; unbatched, they would be 3 per event ($1.20 per million).',
      'Not included: storage ($0.25/GB-month; an action item is ~1 KB, so 1 M actions ≈ 1 GB ≈ $0.25/month, plus the stream), CloudWatch alarms, data transfer of API responses.',
    ],
  };
}
