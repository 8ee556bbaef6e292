import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { addReferralApiStack } from '../../infra/stack.ts';
import {
  actionsOf,
  logicalIdOf,
  type PolicyStatement,
  resourcesOfType,
  roleStatementsOf,
  type Synthesized,
  synth,
  synthProd,
  tempOutdir,
} from './synth.ts';

/** The opt-ins of `infra/settings.ts`: all off by default, each on with its `-c` key. */

const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

let dev: Synthesized;
let traced: Synthesized;
let tagged: Synthesized;
let withKey: Synthesized;
let withKeyArn: Synthesized;

beforeAll(() => {
  dev = synth({ stage: 'dev' });
  traced = synth({ stage: 'dev', context: { tracing: 'true' } });
  tagged = synth({ stage: 'dev', context: { costTags: 'team=growth, project=referral program' } });
  withKey = synthProd({ context: { kms: 'true' } });
  withKeyArn = synth({ stage: 'dev', context: { kmsKey: KEY_ARN } });
});

const functions = (s: Synthesized) => resourcesOfType(s.json, 'AWS::Lambda::Function');
const logGroups = (s: Synthesized) => resourcesOfType(s.json, 'AWS::Logs::LogGroup');
const tableOf = (s: Synthesized) => s.json.Resources[logicalIdOf(s.stack.table)]!;
const statementsWith = (s: Synthesized, id: string, prefix: string): PolicyStatement[] =>
  roleStatementsOf(s.json, id).filter((st) => actionsOf(st).some((a) => a.startsWith(prefix)));

const refuses = (context: Record<string, string>, message: RegExp) => {
  const app = new App({ outdir: tempOutdir(), context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  expect(() => addReferralApiStack(app)).toThrow(message);
};

describe('by default', () => {
  it('no tracing, no key of our own, only the service and stage tags', () => {
    for (const [id, fn] of functions(dev)) expect(fn.Properties?.TracingConfig, id).toBeUndefined();
    expect(resourcesOfType(dev.json, 'AWS::KMS::Key')).toEqual([]);
    expect(tableOf(dev).Properties?.SSESpecification).toBeUndefined();
    for (const [id, g] of logGroups(dev)) expect(g.Properties?.KmsKeyId, id).toBeUndefined();
    const tags = tableOf(dev).Properties?.Tags as Array<{ Key: string }>;
    expect(tags.map((t) => t.Key).sort()).toEqual(['service', 'stage']);
    for (const [id] of functions(dev)) {
      expect(statementsWith(dev, id, 'xray:'), id).toEqual([]);
      expect(statementsWith(dev, id, 'kms:'), id).toEqual([]);
    }
  });
});

describe('-c tracing=true', () => {
  it('turns on active tracing on every function, with only the two X-Ray actions added to each role', () => {
    const all = functions(traced);
    expect(all).toHaveLength(traced.stack.allFunctions.length);
    for (const [id, fn] of all) {
      expect(fn.Properties?.TracingConfig, id).toEqual({ Mode: 'Active' });
      const xray = statementsWith(traced, id, 'xray:');
      // (On the stream consumers merged with dynamodb:ListStreams, the other action without a resource.)
      expect(
        xray
          .flatMap(actionsOf)
          .filter((a) => a !== 'dynamodb:ListStreams')
          .sort(),
        id,
      ).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
      for (const st of xray) expect(st.Resource, id).toBe('*');
    }
  });

  it('refuses anything but true or false', () => {
    refuses({ tracing: 'yes' }, /tracing=yes: expected true or false/);
  });
});

describe('-c costTags=', () => {
  it('tags every resource that takes tags, beside service and stage', () => {
    const taggable = Object.entries(tagged.json.Resources).filter(([, r]) =>
      Array.isArray(r.Properties?.Tags),
    );
    // The table, every function, role, queue and log group at least.
    expect(taggable.length).toBeGreaterThan(60);
    for (const [id, r] of taggable) {
      expect(r.Properties?.Tags, id).toEqual(
        expect.arrayContaining([
          { Key: 'project', Value: 'referral program' },
          { Key: 'team', Value: 'growth' },
        ]),
      );
    }
    // The HTTP API and its stage take tags as a map.
    const api = tagged.json.Resources[logicalIdOf(tagged.stack.api.httpApi)]!;
    expect(api.Properties?.Tags).toMatchObject({ project: 'referral program', team: 'growth' });
  });

  it('refuses malformed pairs, AWS-reserved and stack-owned keys, and duplicates', () => {
    refuses({ costTags: 'team' }, /"team" is not key=value/);
    refuses({ costTags: 'aws:team=x' }, /reserved aws: prefix/);
    refuses({ costTags: 'stage=x' }, /set by the stack itself/);
    refuses({ costTags: 'team=a,team=b' }, /given twice/);
    refuses({ costTags: 'team=a;b' }, /invalid value/);
  });
});

describe('-c kms=true', () => {
  it('makes one rotated key, kept with prod data, that encrypts the table and every log group', () => {
    const keys = resourcesOfType(withKey.json, 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0]!;
    expect(key.Properties?.EnableKeyRotation).toBe(true);
    expect(key.DeletionPolicy).toBe('Retain');
    const keyArn = { 'Fn::GetAtt': [keyId, 'Arn'] };
    expect(tableOf(withKey).Properties?.SSESpecification).toEqual({
      KMSMasterKeyId: keyArn,
      SSEEnabled: true,
      SSEType: 'KMS',
    });
    const groups = logGroups(withKey);
    // One per function and the access logs.
    expect(groups).toHaveLength(withKey.stack.allFunctions.length + 1);
    for (const [id, g] of groups) expect(g.Properties?.KmsKeyId, id).toEqual(keyArn);
  });

  it("lets CloudWatch Logs use the key for this stack's log groups only", () => {
    const key = resourcesOfType(withKey.json, 'AWS::KMS::Key')[0]![1];
    const statements = key.Properties?.KeyPolicy?.Statement as Array<Record<string, unknown>>;
    const logs = statements.find((st) => st.Sid === 'CloudWatchLogsOfThisStack');
    expect(logs).toEqual({
      Sid: 'CloudWatchLogsOfThisStack',
      Effect: 'Allow',
      Principal: { Service: { 'Fn::Join': ['', ['logs.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } },
      Action: [
        'kms:Decrypt',
        'kms:DescribeKey',
        'kms:Encrypt',
        'kms:GenerateDataKey',
        'kms:GenerateDataKeyWithoutPlaintext',
        'kms:ReEncryptFrom',
        'kms:ReEncryptTo',
      ],
      Resource: '*',
      Condition: {
        ArnLike: {
          'kms:EncryptionContext:aws:logs:arn': {
            'Fn::Join': [
              '',
              [
                'arn:',
                { Ref: 'AWS::Partition' },
                ':logs:',
                { Ref: 'AWS::Region' },
                ':',
                { Ref: 'AWS::AccountId' },
                ':log-group:ReferralApi-prod-*',
              ],
            ],
          },
        },
      },
    });
    // The rest is the default policy: the account's IAM policies decide.
    expect(statements).toHaveLength(2);
  });

  it('gives kms:Decrypt on the key to exactly the functions that touch the table: through DynamoDB, or for the stream', () => {
    const keyArn = { 'Fn::GetAtt': [resourcesOfType(withKey.json, 'AWS::KMS::Key')[0]![0], 'Arn'] };
    const viaDynamoDb = {
      StringEquals: {
        'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
      },
    };
    const streamConsumers = new Set([
      'WebhookStreamConsumer',
      'RollupStreamConsumer',
      'RewardStreamConsumer',
    ]);
    // Every function with a table grant, i.e. all but liveness, the two document routes and the
    // fallback.
    const withoutTable = new Set([
      'Health',
      'GetOpenApiDocument',
      'GetApiReference',
      'GetDashboard',
      'Fallback',
    ]);
    for (const { label, fn } of withKey.stack.monitoredFunctions) {
      const kms = statementsWith(withKey, logicalIdOf(fn), 'kms:') as Array<
        PolicyStatement & { Condition?: unknown }
      >;
      const expected = [
        ...(withoutTable.has(label)
          ? []
          : [{ Effect: 'Allow', Action: 'kms:Decrypt', Resource: keyArn, Condition: viaDynamoDb }]),
        ...(streamConsumers.has(label) ? [{ Effect: 'Allow', Action: 'kms:Decrypt', Resource: keyArn }] : []),
      ];
      expect(kms, label).toEqual(expected);
    }
  });
});

describe('-c kmsKey=<arn>', () => {
  it('uses the existing key for the table, the log groups and the grants, and makes none', () => {
    expect(resourcesOfType(withKeyArn.json, 'AWS::KMS::Key')).toEqual([]);
    expect(tableOf(withKeyArn).Properties?.SSESpecification).toEqual({
      KMSMasterKeyId: KEY_ARN,
      SSEEnabled: true,
      SSEType: 'KMS',
    });
    for (const [id, g] of logGroups(withKeyArn)) expect(g.Properties?.KmsKeyId, id).toBe(KEY_ARN);
    const visit = logicalIdOf(withKeyArn.stack.functions.byRoute.get('Visit')!);
    expect(statementsWith(withKeyArn, visit, 'kms:').map((st) => [actionsOf(st), st.Resource])).toEqual([
      [['kms:Decrypt'], KEY_ARN],
    ]);
  });

  it('refuses what is not a key ARN, and kms=false beside it', () => {
    refuses({ kmsKey: 'alias/referrals' }, /kmsKey: "alias\/referrals" is not a KMS key ARN/);
    refuses({ kmsKey: KEY_ARN, kms: 'false' }, /contradict/);
  });
});
