import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsOf,
  type CfnResource,
  logicalIdOf,
  type PolicyStatement,
  referencedId,
  referencedIds,
  resourcesOfType,
  roleStatementsOf,
  type Synthesized,
  synth,
  synthProd,
} from './synth.ts';

/**
 * Checks over every function of the stack, the API's and the queue consumers' alike, so that a
 * function added later by any construct is held to the same rules.
 */
let dev: Synthesized;
let prod: Synthesized;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synthProd();
});

/**
 * Every permission of every function beyond its own log group, written out: resource -> actions.
 * `table` is the table's ARN, `index/<name>` one index's ARN, `stream` the table's stream, a queue
 * by its construct path, `*` no resource. Literal on purpose (not read from infra/ or
 * lib/routes.ts): a grant that grows, shrinks or moves fails here and is reviewed with this list.
 */
const GET = 'dynamodb:GetItem';
const PUT = 'dynamodb:PutItem';
const UPDATE = 'dynamodb:UpdateItem';
const CHECK = 'dynamodb:ConditionCheckItem';
const QUERY = 'dynamodb:Query';
const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];
const SEND = 'sqs:SendMessage';
const POLL = ['sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ReceiveMessage'];

const EXPECTED_GRANTS: Record<string, Record<string, string[]>> = {
  CreateReferralLink: { table: [CHECK, GET, PUT, UPDATE] },
  GetReferralLink: { table: ['dynamodb:BatchGetItem', GET], 'index/GSI1': [QUERY] },
  ListCampaignLinks: { table: ['dynamodb:BatchGetItem', GET], 'index/GSI2': [QUERY] },
  ListReferrerLinks: { table: ['dynamodb:BatchGetItem', GET], 'index/GSI3': [QUERY] },
  CreateReferredUserAction: { table: ['dynamodb:BatchGetItem', GET, UPDATE] },
  CreateCampaign: { table: [GET, PUT] },
  GetCampaign: { table: [GET] },
  UpdateCampaign: { table: [GET, UPDATE] },
  DeleteCampaign: { table: ['dynamodb:DeleteItem'] },
  ListCampaigns: { table: ['dynamodb:BatchGetItem'], 'index/GSI2': [QUERY] },
  CreateReferredUser: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT, UPDATE], 'index/GSI1': [QUERY] },
  GetReferredUser: { table: ['dynamodb:BatchGetItem', GET] },
  ListReferredUsers: {
    table: ['dynamodb:BatchGetItem', GET],
    'index/GSI1': [QUERY],
    'index/GSI2': [QUERY],
    'index/GSI3': [QUERY],
  },
  CreateLinkAction: { table: [CHECK, GET, PUT, UPDATE], 'index/GSI1': [QUERY] },
  Visit: { table: ['dynamodb:DeleteItem', GET, PUT, UPDATE] },
  GetAnalytics: { table: [GET, QUERY] },
  GetAnalyticsTop: { table: [GET] },
  ListWebhookDeliveries: { table: [GET, QUERY] },
  ListEvents: { table: [GET, QUERY] },
  RedeliverEvent: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT, UPDATE] },
  TestWebhook: { table: ['dynamodb:BatchWriteItem', GET, PUT] },
  RotateWebhookSecret: { table: [GET, PUT, UPDATE] },
  CreateConversion: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT, UPDATE] },
  RefundConversion: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT, UPDATE] },
  GetConversion: { table: ['dynamodb:BatchGetItem', GET] },
  ListConversions: { table: ['dynamodb:BatchGetItem', GET, QUERY] },
  ListRewards: { table: ['dynamodb:BatchGetItem', GET], 'index/GSI2': [QUERY], 'index/GSI3': [QUERY] },
  ApproveReward: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT] },
  VoidReward: { table: ['dynamodb:BatchGetItem', CHECK, GET, PUT] },
  GetBalance: { table: [GET, QUERY] },
  CreatePayout: { table: [CHECK, GET, PUT, QUERY] },
  ListPayouts: { table: ['dynamodb:BatchGetItem', GET, QUERY], 'index/GSI3': [QUERY] },
  Health: {},
  Readiness: { table: [GET] },
  GetOpenApiDocument: {},
  GetApiReference: {},
  GetDashboard: {},
  Authorizer: { table: [GET] },
  Fallback: {},
  WebhookDelivery: {
    table: ['dynamodb:BatchWriteItem', GET, UPDATE],
    'Webhooks/FirstAttemptQueue': POLL,
    'Webhooks/Queue': [SEND],
    'Webhooks/DeadLetterQueue': [SEND],
  },
  WebhookRetry: {
    table: ['dynamodb:BatchWriteItem', GET, UPDATE],
    'Webhooks/Queue': ['sqs:ChangeMessageVisibility', ...POLL, SEND],
    'Webhooks/DeadLetterQueue': [SEND],
  },
  WebhookStreamConsumer: {
    table: ['dynamodb:BatchGetItem', CHECK, 'dynamodb:DeleteItem', GET, PUT, UPDATE],
    stream: STREAM_READ,
    '*': ['dynamodb:ListStreams'],
    'Webhooks/FirstAttemptQueue': [SEND],
    'Webhooks/StreamFailureQueue': [SEND],
  },
  Purge: {
    table: ['dynamodb:BatchWriteItem', GET, PUT, QUERY],
    'index/GSI2': [QUERY],
    'Purge/Queue': [...POLL, SEND],
  },
  RewardRelease: {
    table: ['dynamodb:BatchGetItem', GET, PUT],
    'index/GSI1': [QUERY],
  },
  RewardStreamConsumer: {
    table: ['dynamodb:BatchGetItem', CHECK, GET, PUT, QUERY, UPDATE],
    'index/GSI3': [QUERY],
    stream: STREAM_READ,
    '*': ['dynamodb:ListStreams'],
    'Rewards/StreamFailureQueue': [SEND],
  },
  RollupStreamConsumer: {
    table: ['dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem', CHECK, GET, PUT, UPDATE],
    stream: STREAM_READ,
    '*': ['dynamodb:ListStreams'],
    'Purge/Queue': [SEND],
    'Purge/StreamFailureQueue': [SEND],
  },
};

/** A statement resource as the short names of `EXPECTED_GRANTS`. */
function resourceName(s: Synthesized, resource: unknown, queues: Map<string, string>): string {
  if (resource === '*') return '*';
  const tableId = logicalIdOf(s.stack.table);
  const json = JSON.stringify(resource);
  if (json === JSON.stringify({ 'Fn::GetAtt': [tableId, 'Arn'] })) return 'table';
  if (json === JSON.stringify({ 'Fn::GetAtt': [tableId, 'StreamArn'] })) return 'stream';
  const index = /^\{"Fn::Join":\["",\[\{"Fn::GetAtt":\["(\w+)","Arn"\]\},"\/index\/(\w+)"\]\]\}$/.exec(json);
  if (index?.[1] === tableId) return `index/${index[2]}`;
  const queue = referencedId(resource);
  if (queue && queues.has(queue) && json === JSON.stringify({ 'Fn::GetAtt': [queue, 'Arn'] })) {
    return queues.get(queue)!;
  }
  return json;
}

/** A function's permissions beyond writing its own logs, as resource -> sorted actions. */
function grantsOf(s: Synthesized, functionId: string): Record<string, string[]> {
  const queues = new Map(
    s.stack.node
      .findAll()
      .filter((c): c is sqs.Queue => c instanceof sqs.Queue)
      .map((q) => [logicalIdOf(q), q.node.path.split('/').slice(1).join('/')]),
  );
  const out: Record<string, Set<string>> = {};
  for (const st of roleStatementsOf(s.json, functionId)) {
    expect(st.Effect, functionId).toBe('Allow');
    if (actionsOf(st).every((a) => a.startsWith('logs:'))) continue;
    const resources = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
    for (const r of resources) {
      const name = resourceName(s, r, queues);
      out[name] ??= new Set();
      for (const a of actionsOf(st)) out[name].add(a);
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

const allStatements = (s: Synthesized): PolicyStatement[] => [
  ...resourcesOfType(s.json, 'AWS::IAM::Policy').flatMap(
    ([, p]) => (p.Properties?.PolicyDocument?.Statement ?? []) as PolicyStatement[],
  ),
  ...resourcesOfType(s.json, 'AWS::IAM::Role').flatMap(([, r]) =>
    ((r.Properties?.Policies ?? []) as Array<{ PolicyDocument: { Statement: PolicyStatement[] } }>).flatMap(
      (p) => p.PolicyDocument.Statement,
    ),
  ),
];

describe('exact grants', () => {
  it('every function has exactly the permissions written out here, in dev and prod', () => {
    for (const s of [dev, prod]) {
      const labels = s.stack.monitoredFunctions.map((f) => f.label);
      expect(labels.sort()).toEqual(Object.keys(EXPECTED_GRANTS).sort());
      for (const { label, fn } of s.stack.monitoredFunctions) {
        expect(grantsOf(s, logicalIdOf(fn)), `${s.stack.stage} ${label}`).toEqual(EXPECTED_GRANTS[label]);
      }
    }
  });

  it('no statement anywhere allows dynamodb:Scan, a wildcard action or a table-wide index/*', () => {
    for (const s of [dev, prod]) {
      const statements = allStatements(s);
      expect(statements.length).toBeGreaterThan(0);
      for (const st of statements) {
        for (const action of actionsOf(st)) {
          expect(action).not.toBe('dynamodb:Scan');
          expect(action).not.toContain('*');
        }
        expect(JSON.stringify(st.Resource)).not.toContain('/index/*');
        if (JSON.stringify(st.Resource) === '"*"') expect(actionsOf(st)).toEqual(['dynamodb:ListStreams']);
      }
    }
  });

  it('a route that Queries names the index it reads, and only routes that Query get one', () => {
    const s = dev;
    for (const route of s.stack.routes) {
      const grants = grantsOf(s, logicalIdOf(s.stack.functions.byRoute.get(route.name)!));
      const indexes = Object.keys(grants).filter((k) => k.startsWith('index/'));
      expect(
        indexes.map((k) => k.slice('index/'.length)),
        route.name,
      ).toEqual([...(route.queryIndexes ?? [])]);
    }
  });
});

const fnOf = (s: Synthesized, id: string): CfnResource => {
  const r = s.json.Resources[id];
  if (r?.Type !== 'AWS::Lambda::Function') throw new Error(`${id} is not a function`);
  return r;
};

describe('every function of the stack', () => {
  it('is listed by the stack (no function outside allFunctions)', () => {
    for (const s of [dev, prod]) {
      const listed = new Set(s.stack.allFunctions.map(logicalIdOf));
      const inTemplate = resourcesOfType(s.json, 'AWS::Lambda::Function').map(([id]) => id);
      expect(new Set(inTemplate)).toEqual(listed);
    }
  });

  it('runs Node.js 22 or later on arm64', () => {
    for (const s of [dev, prod]) {
      for (const [id, fn] of resourcesOfType(s.json, 'AWS::Lambda::Function')) {
        const runtime = String(fn.Properties?.Runtime);
        expect(runtime, id).toMatch(/^nodejs\d+\.x$/);
        expect(Number(/^nodejs(\d+)/.exec(runtime)?.[1]), id).toBeGreaterThanOrEqual(22);
        expect(fn.Properties?.Architectures, id).toEqual(['arm64']);
      }
    }
  });

  it('has the memory and timeout of the table in docs/deploying.md, and logs to its own log group kept 1 month', () => {
    // Seconds and MB, written out: a constant changed by mistake in infra/ fails here.
    const expected: Record<string, { MemorySize: number; Timeout: number }> = {
      WebhookDelivery: { MemorySize: 256, Timeout: 30 },
      WebhookRetry: { MemorySize: 256, Timeout: 30 },
      WebhookStreamConsumer: { MemorySize: 256, Timeout: 30 },
      Purge: { MemorySize: 256, Timeout: 300 },
      RollupStreamConsumer: { MemorySize: 256, Timeout: 60 },
      RewardRelease: { MemorySize: 256, Timeout: 50 },
      RewardStreamConsumer: { MemorySize: 256, Timeout: 60 },
      // One webhook attempt: up to 3 s of DNS and the 15 s attempt timeout.
      TestWebhook: { MemorySize: 256, Timeout: 25 },
    };
    // Route functions, the authorizer and the fallback.
    const api = { MemorySize: 256, Timeout: 10 };
    for (const s of [dev, prod]) {
      const groups = new Set<string>();
      const functions = s.stack.monitoredFunctions;
      expect(functions.filter(({ label }) => expected[label])).toHaveLength(8);
      for (const { label, fn: construct } of functions) {
        const fn = fnOf(s, logicalIdOf(construct));
        expect(
          { MemorySize: fn.Properties?.MemorySize, Timeout: fn.Properties?.Timeout },
          `${s.stack.stage} ${label}`,
        ).toEqual(expected[label] ?? api);
        const groupId = referencedId(fn.Properties?.LoggingConfig?.LogGroup);
        expect(groupId, label).toBeDefined();
        const group = s.json.Resources[groupId!]!;
        expect(group.Type, label).toBe('AWS::Logs::LogGroup');
        expect(group.Properties?.RetentionInDays, label).toBe(30);
        groups.add(groupId!);
      }
      expect(groups.size).toBe(s.stack.allFunctions.length);
      // Every log group, the access logs included, is kept 1 month.
      for (const [id, g] of resourcesOfType(s.json, 'AWS::Logs::LogGroup')) {
        expect(g.Properties?.RetentionInDays, id).toBe(30);
      }
    }
  });

  it("has its own role whose statements name only the table, the stack's queues and its log group", () => {
    const s = dev;
    const tableId = logicalIdOf(s.stack.table);
    const queueIds = new Set(resourcesOfType(s.json, 'AWS::SQS::Queue').map(([id]) => id));
    const roles = new Set<string>();
    for (const [id, fn] of resourcesOfType(s.json, 'AWS::Lambda::Function')) {
      const roleId = referencedId(fn.Properties?.Role)!;
      expect(roles.has(roleId), `${id} shares a role`).toBe(false);
      roles.add(roleId);
      const logGroupId = referencedId(fn.Properties?.LoggingConfig?.LogGroup);
      for (const st of roleStatementsOf(s.json, id)) {
        expect(st.Effect, id).toBe('Allow');
        const resources = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
        for (const r of resources) {
          if (r === '*') {
            // The one action without resource-level permissions (cdk-nag IAM5, acknowledged).
            expect(actionsOf(st), id).toEqual(['dynamodb:ListStreams']);
            continue;
          }
          const ids = [...referencedIds(r)];
          expect(ids.length, `${id}: ${JSON.stringify(r)}`).toBe(1);
          const [target] = ids as [string];
          expect(
            target === tableId || target === logGroupId || queueIds.has(target),
            `${id} -> ${target}`,
          ).toBe(true);
          for (const action of actionsOf(st)) {
            expect(action, id).not.toMatch(/\*/);
          }
        }
      }
    }
  });

  it('may read the table stream only where a stream feeds it', () => {
    const s = dev;
    const tableId = logicalIdOf(s.stack.table);
    const consumers = new Set([
      logicalIdOf(s.stack.webhooks.streamConsumer),
      logicalIdOf(s.stack.rollups.streamConsumer),
      logicalIdOf(s.stack.rewards.streamConsumer),
    ]);
    for (const [id] of resourcesOfType(s.json, 'AWS::Lambda::Function')) {
      const statements = roleStatementsOf(s.json, id);
      const onStream = statements.filter(
        (st) => JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [tableId, 'StreamArn'] }),
      );
      const listStreams = statements.filter((st) => actionsOf(st).includes('dynamodb:ListStreams'));
      if (consumers.has(id)) {
        expect(onStream.flatMap(actionsOf).sort(), id).toEqual([
          'dynamodb:DescribeStream',
          'dynamodb:GetRecords',
          'dynamodb:GetShardIterator',
        ]);
        expect(listStreams, id).toHaveLength(1);
      } else {
        expect(onStream, id).toEqual([]);
        expect(listStreams, id).toEqual([]);
      }
    }
  });

  it('sends only to the queues its job needs', () => {
    const s = dev;
    const sendTargets = (fnId: string) =>
      roleStatementsOf(s.json, fnId)
        .filter((st) => actionsOf(st).includes('sqs:SendMessage'))
        .flatMap((st) => [...referencedIds(st.Resource)])
        .sort();
    const { webhooks, purge, rollups } = s.stack;
    const id = logicalIdOf;
    for (const lane of [webhooks.firstAttemptFunction, webhooks.retryFunction]) {
      expect(sendTargets(id(lane))).toEqual([id(webhooks.retryQueue), id(webhooks.deadLetterQueue)].sort());
    }
    expect(sendTargets(id(webhooks.streamConsumer))).toEqual(
      [id(webhooks.firstAttemptQueue), id(webhooks.streamFailureQueue)].sort(),
    );
    expect(sendTargets(id(purge.purgeFunction))).toEqual([id(purge.queue)]);
    expect(sendTargets(id(rollups.streamConsumer))).toEqual(
      [id(purge.queue), id(purge.streamFailureQueue)].sort(),
    );
    for (const fn of s.stack.functions.all) expect(sendTargets(id(fn)), fn.node.path).toEqual([]);
  });
});

describe('functions that never touch the table', () => {
  it('get neither TABLE_NAME nor any DynamoDB permission (route rows without actions, the fallback)', () => {
    const s = dev;
    const none = [
      ...s.stack.routes
        .filter((r) => r.dynamo.length === 0 && !r.queryIndexes?.length)
        .map((r) => s.stack.functions.byRoute.get(r.name)!),
      s.stack.functions.fallback,
    ];
    for (const fn of none) {
      const id = logicalIdOf(fn);
      expect(fnOf(s, id).Properties?.Environment?.Variables, fn.node.path).not.toHaveProperty('TABLE_NAME');
      expect(
        roleStatementsOf(s.json, id)
          .flatMap(actionsOf)
          .filter((a) => a.startsWith('dynamodb:')),
        fn.node.path,
      ).toEqual([]);
    }
  });
});
