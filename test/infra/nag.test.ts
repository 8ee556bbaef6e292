import { readFileSync } from 'node:fs';
import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ROUTE_REASONS } from '../../infra/nag.ts';
import { type RouteRow, routes } from '../../lib/routes.ts';
import { synth, synthProd } from './synth.ts';

/** Every finding of the AwsSolutions pack that nothing acknowledged, as `rule at path`. */
function unacknowledgedFindings(app: App): string[] {
  const report = new AwsSolutionsChecks(app).validateScope(app);
  return report.violations.flatMap((v) =>
    v.violatingResources.map((r) => `${v.severity} ${v.ruleName} at ${r.constructPath}`),
  );
}

interface Acknowledged {
  path: string;
  id: string;
  reason: string;
}

/** Every acknowledgment recorded in the construct tree (Validations metadata). */
function acknowledgments(root: IConstruct): Acknowledged[] {
  const out: Acknowledged[] = [];
  for (const c of root.node.findAll()) {
    for (const entry of c.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY || !entry.data) continue;
      for (const [key, reason] of Object.entries(entry.data as Record<string, unknown>)) {
        out.push({
          path: c.node.path,
          id: key.replace(/^annotation::/i, ''),
          reason: typeof reason === 'string' ? reason : JSON.stringify(reason),
        });
      }
    }
  }
  return out;
}

describe('cdk-nag AwsSolutions checks', () => {
  it.each(['dev', 'prod'] as const)('report nothing unacknowledged, error or warning, in %s', (stage) => {
    // Without the plugin in the synth, so that findings are listed here rather than thrown.
    const { app } = stage === 'prod' ? synthProd({ withoutNag: true }) : synth({ stage, withoutNag: true });
    expect(unacknowledgedFindings(app)).toEqual([]);
  });

  it('also pass with every optional setting on (CORS, throttling, latency, tracing, cost tags, a key)', () => {
    const keys: Array<Record<string, string>> = [
      { kms: 'true' },
      { kmsKey: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab' },
    ];
    for (const kms of keys) {
      const { app } = synthProd({
        withoutNag: true,
        context: {
          corsOrigins: 'https://app.example.com',
          throttleRateLimit: '100',
          throttleBurstLimit: '200',
          apiLatencyP99Ms: '300',
          tracing: 'true',
          costTags: 'team=growth,project=referrals',
          ...kms,
        },
      });
      expect(unacknowledgedFindings(app)).toEqual([]);
    }
  });

  it('pass in prod with alarms=none (no topic, on purpose)', () => {
    const { app } = synth({ stage: 'prod', withoutNag: true, context: { alarms: 'none' } });
    expect(unacknowledgedFindings(app)).toEqual([]);
  });

  it('run inside the synth itself, as in `cdk synth`: an unexplained public route fails it', () => {
    const extra: RouteRow = {
      name: 'PublicThing',
      method: 'GET',
      path: '/public/{id}',
      handler: 'http/fallback',
      auth: false,
      table: 'none',
      dynamo: [],
      dynamoCalls: 0,
      throttle: 'docs',
      summary: 'a public route nobody explained',
    };
    const { app } = synth({ stage: 'dev', routes: [...routes, extra], withoutNag: true });
    expect(unacknowledgedFindings(app)).toEqual([
      'error AwsSolutions-APIG4 at ReferralApi-dev/Api/HttpApi/GET--public--{id}/Resource',
      'error AwsSolutions-APIG4 at ReferralApi-dev/Api/HttpApi/HEAD--public--{id}/Resource',
    ]);
    expect(() => synth({ stage: 'dev', routes: [...routes, extra] })).toThrow(/AwsSolutions-APIG4/);
  });

  it('acknowledge each finding on its own resource, for a named rule, with a reason', () => {
    const { stack } = synthProd();
    const acks = acknowledgments(stack);
    expect(acks.length).toBeGreaterThan(0);
    for (const ack of acks) {
      expect(ack.id, ack.path).toMatch(/^AwsSolutions-[A-Z]+\d+(\[.+\])?$/);
      expect(ack.reason.length, `${ack.id} at ${ack.path}`).toBeGreaterThan(80);
      // On a resource (a function, its role, a queue, a route), never the stack as a whole.
      expect(ack.path.split('/').length, ack.id).toBeGreaterThanOrEqual(3);
    }
    // The complete list of rules acknowledged anywhere: a new one needs review here.
    expect([...new Set(acks.map((a) => a.id.replace(/\[.*$/, '')))].sort()).toEqual([
      'AwsSolutions-APIG4',
      'AwsSolutions-IAM5',
      'AwsSolutions-L1',
      'AwsSolutions-SQS3',
    ]);
  });

  it('acknowledge APIG4 only on the public routes of the contract, each with its own reason', () => {
    const { stack } = synthProd();
    const apig4 = acknowledgments(stack).filter((a) => a.id === 'AwsSolutions-APIG4');
    const publicKeys = routes
      .filter((r) => !r.auth)
      .flatMap((r) => (r.method === 'GET' ? [r, { ...r, method: 'HEAD' }] : [r]));
    expect(apig4).toHaveLength(publicKeys.length + 1); // + $default
    for (const r of routes.filter((x) => !x.auth)) {
      expect(PUBLIC_ROUTE_REASONS[r.path], r.path).toBeDefined();
      expect(apig4.some((a) => a.reason === PUBLIC_ROUTE_REASONS[r.path])).toBe(true);
    }
    expect(
      apig4.some((a) => a.reason === PUBLIC_ROUTE_REASONS.$default && a.path.endsWith('/DefaultRoute')),
    ).toBe(true);
  });

  it('acknowledge IAM5 only for dynamodb:ListStreams on the stream consumers: no table grant has a wildcard', () => {
    const { stack } = synthProd();
    const iam5 = acknowledgments(stack).filter((a) => a.id.startsWith('AwsSolutions-IAM5'));
    expect(iam5.map((a) => [a.id, a.path.replace(/^ReferralApi-prod\//, '')]).sort()).toEqual([
      ['AwsSolutions-IAM5[Resource::*]', 'Rewards/StreamConsumerRole'],
      ['AwsSolutions-IAM5[Resource::*]', 'Rollups/StreamConsumerRole'],
      ['AwsSolutions-IAM5[Resource::*]', 'Webhooks/StreamConsumerRole'],
    ]);
    for (const ack of iam5) expect(ack.reason).toContain('dynamodb:ListStreams');
  });

  it('with -c tracing=true, acknowledge IAM5 `*` for X-Ray on every role, and nothing more', () => {
    const { stack } = synthProd({ context: { tracing: 'true' } });
    const iam5 = acknowledgments(stack).filter((a) => a.id.startsWith('AwsSolutions-IAM5'));
    expect(iam5).toHaveLength(stack.allFunctions.length);
    for (const ack of iam5) {
      expect(ack.id).toBe('AwsSolutions-IAM5[Resource::*]');
      expect(ack.reason, ack.path).toContain('xray:PutTraceSegments');
    }
  });

  it('are registered by the app entry, so `cdk synth` runs them too', () => {
    const source = readFileSync(new URL('../../infra/app.ts', import.meta.url), 'utf8');
    expect(source).toContain('addNagChecks(app)');
  });
});
