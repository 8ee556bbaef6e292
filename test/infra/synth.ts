/**
 * Synthesises the CDK app for the infra tests the way `cdk synth` does (same entry function, same
 * cdk.json context and feature flags, the same cdk-nag validation plugin, so a synth with an
 * unacknowledged finding throws here as it fails `cdk synth`), memoised per worker so each test
 * file pays at most once per variant. Bundling (esbuild, the slow part) only runs when a test
 * asks for it: the template is identical either way except for the asset hashes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { App, type CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { inject } from 'vitest';
import { projectRoot } from '../../infra/functions.ts';
import { addNagChecks } from '../../infra/nag.ts';
import { addReferralApiStack, type ReferralApiStack } from '../../infra/stack.ts';
import type { Stage } from '../../infra/stage.ts';
import type { RouteRow } from '../../lib/routes.ts';

export interface SynthOptions {
  /** The `-c stage=` value; omitted means no stage context at all (the default applies). */
  stage?: Stage;
  /** Run esbuild for every function. Off by default: only bundle tests need the output. */
  bundle?: boolean;
  /** A route table other than `lib/routes.ts`. */
  routes?: readonly RouteRow[];
  /** More `-c key=value` context (throttling, CORS, alarm topic). */
  context?: Record<string, string>;
  /** Leave the cdk-nag plugin out (to inspect findings with `validateScope` instead of a throw). */
  withoutNag?: boolean;
}

/** The alarm topic of the tests' prod synths: prod refuses to synthesize without one (or `alarms=none`). */
export const TEST_ALARM_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:ops-alarms';

/** Prod as it is deployed: with an alarm topic. `context` adds to it. */
export function synthProd(options: Omit<SynthOptions, 'stage'> = {}): Synthesized {
  return synth({
    ...options,
    stage: 'prod',
    context: { alarmTopicArn: TEST_ALARM_TOPIC_ARN, ...options.context },
  });
}

export interface Synthesized {
  app: App;
  stack: ReferralApiStack;
  assembly: CloudAssembly;
  template: Template;
  /** The raw template, for walking resources the assertions API does not reach easily. */
  json: CfnTemplate;
}

export interface CfnResource {
  Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: CloudFormation metadata is free-form JSON.
  Metadata?: Record<string, any>;
  // biome-ignore lint/suspicious/noExplicitAny: CloudFormation properties are free-form JSON the tests walk.
  Properties?: Record<string, any>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
}

/** cdk.json context (feature flags included): without it the tests would run other defaults. */
function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(projectRoot, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  const { stage: _ignored, ...context } = cdkJson.context ?? {};
  return context;
}

const ownDirs: string[] = [];

/**
 * A fresh directory for one cloud assembly: give it to every `new App()` of the tests (an App
 * without `outdir` makes its own `cdk.out*` folder in the temp directory, which nothing removes).
 * Under vitest it lies in the run's directory that `global-setup.ts` removes at the end; elsewhere
 * (a script importing this module) it is removed when the process exits.
 */
export function tempOutdir(): string {
  let root: string | undefined;
  try {
    root = inject('infraTempRoot');
  } catch {
    root = undefined; // not inside a vitest worker
  }
  if (root) return mkdtempSync(join(root, 'cdk-'));
  const dir = mkdtempSync(join(tmpdir(), 'referral-cdk-'));
  if (ownDirs.push(dir) === 1) {
    process.on('exit', () => {
      for (const d of ownDirs) rmSync(d, { recursive: true, force: true });
    });
  }
  return dir;
}

const cache = new Map<string, Synthesized>();

export function synth(options: SynthOptions = {}): Synthesized {
  const key = JSON.stringify(options);
  const hit = cache.get(key);
  if (hit) return hit;

  const context: Record<string, unknown> = {
    ...cdkJsonContext(),
    // Stacks not matched here are synthesised without running their bundling.
    'aws:cdk:bundling-stacks': options.bundle ? ['**'] : [],
  };
  if (options.stage) context.stage = options.stage;
  Object.assign(context, options.context);

  const app = new App({ context, outdir: tempOutdir() });
  // NodejsFunction bundles while the stack is built, and the synth writes the assets.
  const { stack, assembly } = withDirectEsbuild(options.bundle === true, () => {
    const stack = addReferralApiStack(app, { routes: options.routes });
    // As infra/app.ts does.
    if (!options.withoutNag) addNagChecks(app);
    return { stack, assembly: app.synth() };
  });
  const json = assembly.getStackByName(stack.stackName).template as CfnTemplate;
  const result = { app, stack, assembly, template: Template.fromJSON(json), json };
  cache.set(key, result);
  return result;
}

/**
 * Runs `build` with an `npx` first on PATH that runs `npx --no-install esbuild <args>` as the
 * project's own esbuild binary with the same arguments, and hands anything else to the real npx.
 * NodejsFunction runs a workspace's esbuild through the package manager, one `npx` per function:
 * npm's start-up cost more CPU than esbuild's work (measured on the 2-core machine: of the
 * bundled synth's 52 s of CPU, about 20 s in npm processes, 6 s in esbuild). What the bundles
 * are made of is unchanged: the same esbuild, arguments, working directory and afterBundling
 * hook, which the tests below check in the bundles themselves.
 */
function withDirectEsbuild<T>(enabled: boolean, build: () => T): T {
  if (!enabled || process.platform === 'win32') return build();
  const dir = mkdtempSync(join(tempOutdir(), 'npx-'));
  const esbuild = join(projectRoot, 'node_modules', '.bin', 'esbuild');
  writeFileSync(
    join(dir, 'npx'),
    [
      '#!/bin/sh',
      'if [ "$1" = "--no-install" ] && [ "$2" = "esbuild" ]; then',
      '  shift 2',
      `  exec '${esbuild}' "$@"`,
      'fi',
      `PATH="\${PATH#'${dir}${delimiter}'}" exec npx "$@"`,
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  const path = process.env.PATH;
  process.env.PATH = `${dir}${delimiter}${path ?? ''}`;
  try {
    return build();
  } finally {
    if (path === undefined) delete process.env.PATH;
    else process.env.PATH = path;
  }
}

/** The logical id CloudFormation knows a construct's main resource by. */
export function logicalIdOf(construct: Construct): string {
  return Stack.of(construct).getLogicalId(construct.node.defaultChild as CfnElement);
}

export function resourcesOfType(json: CfnTemplate, type: string): Array<[string, CfnResource]> {
  return Object.entries(json.Resources).filter(([, r]) => r.Type === type);
}

/** `{ Ref: id }` or `{ 'Fn::GetAtt': [id, attr] }` -> id. */
export function referencedId(value: unknown): string | undefined {
  if (value && typeof value === 'object') {
    const v = value as { Ref?: unknown; 'Fn::GetAtt'?: unknown };
    if (typeof v.Ref === 'string') return v.Ref;
    if (Array.isArray(v['Fn::GetAtt']) && typeof v['Fn::GetAtt'][0] === 'string') return v['Fn::GetAtt'][0];
  }
  return undefined;
}

/**
 * Every logical id referenced anywhere inside a value (Ref and GetAtt, at any depth), leaving out
 * pseudo parameters such as `AWS::Region`.
 */
export function referencedIds(value: unknown, into = new Set<string>()): Set<string> {
  const id = referencedId(value);
  if (id && !id.startsWith('AWS::')) into.add(id);
  if (Array.isArray(value)) for (const v of value) referencedIds(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value)) referencedIds(v, into);
  return into;
}

export interface PolicyStatement {
  Effect: string;
  Action: string | string[];
  Resource: unknown;
}

/** Statements of every inline policy attached to a function's execution role. */
export function roleStatementsOf(json: CfnTemplate, functionId: string): PolicyStatement[] {
  const fn = json.Resources[functionId];
  const roleId = referencedId(fn?.Properties?.Role);
  if (!roleId) throw new Error(`Function ${functionId} has no role in this template`);
  const role = json.Resources[roleId];
  const inline = (role?.Properties?.Policies ?? []) as Array<{
    PolicyDocument: { Statement: PolicyStatement[] };
  }>;
  const attached = resourcesOfType(json, 'AWS::IAM::Policy')
    .filter(([, p]) => ((p.Properties?.Roles ?? []) as unknown[]).some((r) => referencedId(r) === roleId))
    .map(([, p]) => p.Properties?.PolicyDocument as { Statement: PolicyStatement[] });
  return [...inline.map((p) => p.PolicyDocument), ...attached].flatMap((doc) => doc.Statement);
}

export const actionsOf = (statement: PolicyStatement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

/** The logical ids of every Lambda function of a synthesised stack, keyed by construct path. */
export function functionIdsOf(s: Synthesized): Map<string, string> {
  return new Map(s.stack.allFunctions.map((fn) => [fn.node.path, logicalIdOf(fn)]));
}

/**
 * The template with what changes on every build but says nothing about the infrastructure
 * replaced by placeholders: asset hashes (S3 keys, asset paths, staging names) and the bootstrap
 * bucket name. Anything else that changes shows up in the snapshot diff.
 */
export function normalizedTemplate(json: CfnTemplate): unknown {
  const text = JSON.stringify(json, undefined, 2)
    .replace(/[0-9a-f]{64}(\.zip)?/g, (_, zip: string | undefined) => `<asset-hash>${zip ?? ''}`)
    .replace(/cdk-[a-z0-9]{9}-assets-\$\{AWS::AccountId\}-\$\{AWS::Region\}/g, '<assets-bucket>')
    .replace(/"asset\.<asset-hash>[^"]*"/g, '"<asset-path>"');
  return JSON.parse(text);
}
