import { beforeAll, describe, expect, it } from 'vitest';
import {
  actionsOf,
  type CfnResource,
  logicalIdOf,
  referencedId,
  referencedIds,
  resourcesOfType,
  roleStatementsOf,
  type Synthesized,
  synth,
} from './synth.ts';

/**
 * Checks over every function of the stack, the API's and the queue consumers' alike, so that a
 * function added later by any construct is held to the same rules.
 */
let dev: Synthesized;
let prod: Synthesized;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  prod = synth({ stage: 'prod' });
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

  it("has the memory and timeout of the README's table, and logs to its own log group kept 1 month", () => {
    // Seconds and MB, written out: a constant changed by mistake in infra/ fails here.
    const expected: Record<string, { MemorySize: number; Timeout: number }> = {
      WebhookDelivery: { MemorySize: 256, Timeout: 30 },
      WebhookRetry: { MemorySize: 256, Timeout: 30 },
      WebhookStreamConsumer: { MemorySize: 256, Timeout: 30 },
      Purge: { MemorySize: 256, Timeout: 300 },
      PurgeStreamConsumer: { MemorySize: 256, Timeout: 30 },
      // One webhook attempt: up to 3 s of DNS and the 15 s attempt timeout.
      TestWebhook: { MemorySize: 256, Timeout: 25 },
    };
    // Route functions, the authorizer and the fallback.
    const api = { MemorySize: 256, Timeout: 10 };
    for (const s of [dev, prod]) {
      const groups = new Set<string>();
      const functions = s.stack.monitoredFunctions;
      expect(functions.filter(({ label }) => expected[label])).toHaveLength(6);
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
      logicalIdOf(s.stack.purge.streamConsumer),
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
    const { webhooks, purge } = s.stack;
    const id = logicalIdOf;
    for (const lane of [webhooks.firstAttemptFunction, webhooks.retryFunction]) {
      expect(sendTargets(id(lane))).toEqual([id(webhooks.retryQueue), id(webhooks.deadLetterQueue)].sort());
    }
    expect(sendTargets(id(webhooks.streamConsumer))).toEqual(
      [id(webhooks.firstAttemptQueue), id(webhooks.streamFailureQueue)].sort(),
    );
    expect(sendTargets(id(purge.purgeFunction))).toEqual([id(purge.queue)]);
    expect(sendTargets(id(purge.streamConsumer))).toEqual(
      [id(purge.queue), id(purge.streamFailureQueue)].sort(),
    );
    for (const fn of s.stack.functions.all) expect(sendTargets(id(fn)), fn.node.path).toEqual([]);
  });
});

describe('functions that never touch the table', () => {
  it('get neither TABLE_NAME nor any DynamoDB permission (route rows with table: none, the fallback)', () => {
    const s = dev;
    const none = [
      ...s.stack.routes.filter((r) => r.table === 'none').map((r) => s.stack.functions.byRoute.get(r.name)!),
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
