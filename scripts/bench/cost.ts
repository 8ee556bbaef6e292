/**
 * Part 7: a cost model on paper, from what the bench measured (DynamoDB calls per request, the
 * sizes of items this run wrote, handler durations and cold imports) and AWS list prices. Every
 * assumption is written next to the figure it drives.
 */
import { routeNamed } from '../../lib/routes.ts';
import { LINK_INDEX_ATTRIBUTES } from '../../lib/table-definition.ts';
import { campaignItem, campaignItems, eventDataOf, linkItem } from '../../test/support/table.ts';
import { importMs } from './coldstart.ts';
import { type CallsRow, formatOps } from './endpoints.ts';
import type { BenchPart } from './environment.ts';
import type { LatencyRow } from './latency.ts';
import { usd } from './stats.ts';

/**
 * us-east-1 public list prices (USD) as known to the author from the AWS pricing pages (2025);
 * the bench has no internet access, so they are not fetched. Check them before relying on them.
 */
const P = {
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
};
const MEMORY_GB = 0.25;
const COLD_SHARE = 0.01;
const RUNTIME_INIT_MS = 150;
const LOG_BYTES = 700;
const NO_URL_DELIVERY_MS = 20;
const DELIVERY_MS = 200;

/** DynamoDB's size of a value: attribute names plus values (numbers ~1 byte per 2 digits + 1). */
export function itemSize(value: unknown): number {
  if (value === null || value === undefined || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint')
    return Math.ceil((String(value).replace(/[-.]/g, '').replace(/^0+/, '').length || 1) / 2) + 1;
  if (Array.isArray(value)) return 3 + value.reduce<number>((a, v) => a + 1 + itemSize(v), 0);
  return 3 + Object.entries(value).reduce((a, [k, v]) => a + 1 + Buffer.byteLength(k) + itemSize(v), 0);
}
/** A whole item: no map overhead for the item itself. */
const sizeOf = (item: Record<string, unknown> = {}) =>
  Object.entries(item).reduce((a, [k, v]) => a + Buffer.byteLength(k) + itemSize(v), 0);
const wcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));
const rcu = (bytes: number) => Math.max(1, Math.ceil(bytes / 4096));
const lambdaMs = (ms: number) => MEMORY_GB * (ms / 1000) * P.lambdaArmGbSecond * 1e6;

type ItemSizes = Record<
  'campaign' | 'link' | 'visitAction' | 'linkAction' | 'linkIndexes' | 'linkIndexCopy',
  number
>;
/** A line of the model: component, quantity per request, USD per million requests. */
type Line = [string, string, number];

/** The lines of one request of a function that records an action of `actionBytes`. */
function request(s: ItemSizes, ms: number, importMs: number, calls: string, actionBytes: number): Line[] {
  const wru =
    2 * wcu(actionBytes) + 2 * wcu(s.link) + 2 * wcu(s.campaign) + s.linkIndexes * wcu(s.linkIndexCopy);
  return [
    ['Lambda requests', '1 invocation', P.lambdaPerMillionRequests],
    [
      'Lambda duration (arm64, 256 MB)',
      `${ms.toFixed(1)} ms (measured p50 through the local gateway)`,
      lambdaMs(ms),
    ],
    [
      'Lambda INIT (cold starts, billed since Aug 2025)',
      `${COLD_SHARE * 100} % of invocations × (${importMs.toFixed(0)} ms import + ${RUNTIME_INIT_MS} ms runtime)`,
      COLD_SHARE * lambdaMs(importMs + RUNTIME_INIT_MS),
    ],
    [
      'DynamoDB reads',
      `GetItem of the link, strongly consistent (${s.link} B): ${rcu(s.link)} RRU`,
      rcu(s.link) * P.dynamoPerMillionRru,
    ],
    [
      'DynamoDB writes',
      `TransactWriteItems: action Put ${actionBytes} B → 2×${wcu(actionBytes)}, link Update ${s.link} B → 2×${wcu(s.link)}, campaign ConditionCheck → 2×${wcu(s.campaign)}, link copies in ${s.linkIndexes} GSIs (${s.linkIndexCopy} B) → ${s.linkIndexes}×${wcu(s.linkIndexCopy)}: ${wru} WRU (calls measured: ${calls})`,
      wru * P.dynamoPerMillionWru,
    ],
    [
      'CloudWatch Logs (API access log line + Lambda platform lines)',
      `~${LOG_BYTES} B`,
      (LOG_BYTES * 1e6 * P.cloudWatchLogsPerGb) / 1024 ** 3,
    ],
    // Every action (visits included) is an event: the stream consumer, the queue and the delivery
    // function handle it and read the campaign whether or not the campaign has a webhook_url.
    [
      'Event pipeline: stream consumer Lambda (filter, batch 100)',
      'stream reads by Lambda are free; 0.01 invocation + ~50 ms per batch',
      0.01 * P.lambdaPerMillionRequests + 0.01 * lambdaMs(50),
    ],
    [
      'Event pipeline: SQS',
      'SendMessageBatch + ReceiveMessage + DeleteMessageBatch, 10 per call: ~0.3 requests',
      0.3 * P.sqsPerMillionRequests,
    ],
    [
      'Event pipeline: delivery Lambda (batch 10)',
      `0.1 invocation, ~${NO_URL_DELIVERY_MS} ms per batch when there is nothing to POST`,
      0.1 * P.lambdaPerMillionRequests + 0.1 * lambdaMs(NO_URL_DELIVERY_MS),
    ],
    [
      'Event pipeline: campaign read (URL and secret in force)',
      `1 GetItem, strongly consistent: ${rcu(s.campaign)} RRU (measured: 1 per event)`,
      rcu(s.campaign) * P.dynamoPerMillionRru,
    ],
  ];
}

const total = (lines: Line[]) => lines.reduce((a, l) => a + l[2], 0);
const costTable = (lines: Line[]) => [
  ['component', 'per request', 'USD per million'],
  ...lines.map(([component, quantity, usdPerMillion]) => [component, quantity, usd(usdPerMillion)]),
  ['**total**', '', `**${usd(total(lines))}**`],
];

export const costPart: BenchPart = {
  name: 'cost',
  title: '7. Cost model (on paper)',
  stack: true,
  async run({ env, fixtures, data }) {
    const link = await linkItem(fixtures.referral_code, env.table);
    const actions = await campaignItems(env.tenant, fixtures.campaign_id, 'A#', env.table);
    const isVisit = (a: Record<string, unknown>) => eventDataOf(a).action_type === 'visit';
    const indexCopy = ['PK', 'SK', 'GSI2PK', 'GSI2SK', ...LINK_INDEX_ATTRIBUTES].map((k) => [k, link?.[k]]);
    const s: ItemSizes = {
      campaign: sizeOf(await campaignItem(env.tenant, fixtures.campaign_id, env.table)),
      link: sizeOf(link),
      visitAction: sizeOf(actions.find(isVisit)),
      linkAction: sizeOf(actions.find((a) => !isVisit(a) && !eventDataOf(a).referred_user)),
      linkIndexes: ['GSI1PK', 'GSI2PK', 'GSI3PK'].filter((k) => k in (link ?? {})).length,
      linkIndexCopy: sizeOf(Object.fromEntries(indexCopy.filter(([, v]) => v !== undefined))),
    };
    /** The lines of a request of the route named `name`, from what parts 1, 2 and 4 measured of it. */
    const measured = (name: string, actionBytes: number) => {
      const { method, path, handler } = routeNamed(name);
      const p50 = (data.latency as LatencyRow[] | undefined)?.find((r) => r.key === name)?.p50 ?? NaN;
      const row = (data.calls as CallsRow[] | undefined)?.find((r) => r.label === `${method} ${path}`);
      const calls = row ? `${row.calls} (${formatOps(row.ops)})` : 'not measured';
      return request(s, p50, importMs(data.cold, handler), calls, actionBytes);
    };
    const webhookBytes = Math.max(s.linkAction, s.visitAction) + 400;
    const visit: Line[] = [
      ['API Gateway HTTP API', '1 request (no authorizer on /r)', P.httpApiPerMillion],
      ...measured('Visit', s.visitAction),
    ];
    const action: Line[] = [
      ['API Gateway HTTP API', '1 request', P.httpApiPerMillion],
      [
        'Authorizer (Lambda + GetItem)',
        'cached 60 s per key by API Gateway: ~1 call per key per minute, ≈ 0 per million',
        0,
      ],
      ...measured('CreateLinkAction', s.linkAction),
    ];
    const webhook: Line[] = [
      [
        'Delivery Lambda waiting on the receiver (batch 10 in parallel)',
        `assumed ${DELIVERY_MS} ms per batch instead of ${NO_URL_DELIVERY_MS} ms: 0.1 × ${DELIVERY_MS - NO_URL_DELIVERY_MS} ms`,
        0.1 * lambdaMs(DELIVERY_MS - NO_URL_DELIVERY_MS),
      ],
      [
        'Data transfer out (the POST)',
        `~${webhookBytes} B body and headers`,
        (webhookBytes * 1e6 * P.dataTransferOutPerGb) / 1024 ** 3,
      ],
    ];
    return {
      body: [
        `USD per million requests, from the calls counted above, the sizes of items this run wrote (campaign ${s.campaign} B, link ${s.link} B, visit action ${s.visitAction} B, API action ${s.linkAction} B) and the durations measured above. Prices: Lambda arm64 $${P.lambdaArmGbSecond} per GB-s and $${P.lambdaPerMillionRequests} per million requests; HTTP API $${P.httpApiPerMillion.toFixed(2)}/M; DynamoDB on-demand $${P.dynamoPerMillionWru}/M WRU, $${P.dynamoPerMillionRru}/M RRU; SQS $${P.sqsPerMillionRequests.toFixed(2)}/M; EventBridge Pipes $${P.pipesPerMillionRequests.toFixed(2)}/M; Streams reads $${P.streamsPerMillionReadRequests.toFixed(2)}/M (free for Lambda); CloudWatch Logs $${P.cloudWatchLogsPerGb.toFixed(2)}/GB; transfer out $${P.dataTransferOutPerGb.toFixed(2)}/GB (AWS us-east-1 public list prices as known to the author (pricing pages, 2025); not fetched live).`,
        '**Per million visits** (`GET /r/{code}`):',
        costTable(visit),
        '**Per million actions** (`POST /api/v1/action/referral_link`):',
        costTable(action),
        '**Add-on per million webhook deliveries** (the event pipeline is already in both totals above):',
        costTable(webhook),
        `Assumptions:

- Item sizes are measured on items this run wrote, with DynamoDB’s size rules (names + values).
- Transactions cost 2 WRU per KB for every item, ConditionCheck included; the link’s GSI copies (the keys and the projected attributes) are updated at 1 WRU per KB each, as standard writes.
- Strongly consistent reads cost 1 RRU per 4 KB. On-demand capacity, no reserved capacity, no free tier.
- Lambda duration uses the handler’s p50 through the local gateway against DynamoDB Local; in AWS, DynamoDB answers in single-digit ms, so this is an upper-end guess. At 256 MB each millisecond costs $0.0033 per million, so the total barely moves.
- Cold starts: ${COLD_SHARE * 100} % of invocations (steady traffic keeps containers warm), INIT billed at the function’s memory; the import time is the function’s median import CPU time (part 4).
- Every action and visit is an event: the pipeline (stream consumer, queue, delivery function, campaign read) runs for it even when its campaign has no webhook_url, so it is in the totals above; only the POST itself is an add-on. An EventBridge Pipe in place of the stream Lambda would add $0.40 per million events.
- SQS requests assume full batches of 10 on send, receive and delete; unbatched, they would be 3 per event ($1.20 per million).
- Not included: storage ($0.25/GB-month; an action item is ~1 KB, so 1 M actions ≈ 1 GB ≈ $0.25/month, plus the stream), CloudWatch alarms, data transfer of API responses.`,
      ],
      summary: `Cost model: ${usd(total(visit))} per million visits, ${usd(total(action))} per million actions, +${usd(total(webhook))} per million webhook POSTs.`,
      findings: [],
      data: { sizes: s, visit: total(visit), action: total(action), webhook: total(webhook) },
    };
  },
};
