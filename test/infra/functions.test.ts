import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REDOC_GZIP_FILE,
  REDOC_MANIFEST_FILE,
  REDOC_PACKAGE_FILE,
  servedRedocSource,
} from '../../lib/openapi/redoc-asset.ts';
import { routeNamed, routes, type TableAccess } from '../../lib/routes.ts';
import { BUNDLE_BUDGETS } from '../../tools/bundles.ts';
import {
  actionsOf,
  type CfnResource,
  logicalIdOf,
  normalizedTemplate,
  referencedId,
  referencedIds,
  roleStatementsOf,
  type Synthesized,
  synth,
} from './synth.ts';

/**
 * The modules a bundle still imports (static and dynamic), read by esbuild itself rather than by
 * a regex that would also match import examples quoted in the SDK's error messages.
 */
async function importsOf(file: string): Promise<string[]> {
  const seen = new Set<string>();
  await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    plugins: [
      {
        name: 'record-imports',
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) => {
            if (args.kind === 'entry-point') return undefined;
            seen.add(args.path);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return [...seen];
}

interface FunctionUnderTest {
  label: string;
  fn: NodejsFunction;
  id: string;
  access: TableAccess | 'none';
  memoryMb: number;
}

let s: Synthesized;
let functions: FunctionUnderTest[];
let tableId: string;

beforeAll(() => {
  // The one bundled synth of the suite: every function goes through esbuild here.
  s = synth({ stage: 'dev', bundle: true });
  tableId = logicalIdOf(s.stack.table);
  const { byRoute, authorizer, fallback } = s.stack.functions;
  functions = [
    ...routes.map((route) => {
      const fn = byRoute.get(route.name);
      if (!fn) throw new Error(`no function for route ${route.name}`);
      return {
        label: route.name,
        fn,
        id: logicalIdOf(fn),
        access: route.table,
        // No row asks for more than the default; one that does belongs here with its figure.
        memoryMb: 256,
      };
    }),
    { label: 'Authorizer', fn: authorizer, id: logicalIdOf(authorizer), access: 'read', memoryMb: 256 },
    { label: 'Fallback', fn: fallback, id: logicalIdOf(fallback), access: 'none', memoryMb: 256 },
  ];
});

const fnResource = (id: string): CfnResource => {
  const r = s.json.Resources[id];
  if (r?.Type !== 'AWS::Lambda::Function') throw new Error(`${id} is not a Lambda function`);
  return r;
};

const dynamoActionsOf = (id: string) =>
  roleStatementsOf(s.json, id)
    .filter((st) => st.Effect === 'Allow')
    .flatMap(actionsOf)
    .filter((a) => a.startsWith('dynamodb:') || a === '*');

describe('Lambda functions', () => {
  it('makes one function per route row, plus the authorizer and the fallback (and 7 others)', () => {
    expect(new Set(functions.map((f) => f.id)).size).toBe(routes.length + 2);
    for (const f of functions) fnResource(f.id);
    // The rest: webhook first attempts, retries and their stream consumer, the purge and its
    // stream trigger, the rewards' scheduled release and their stream consumer.
    s.template.resourceCountIs('AWS::Lambda::Function', routes.length + 2 + 7);
    expect(s.stack.allFunctions).toHaveLength(routes.length + 2 + 7);
  });

  it('runs every API function on Node.js 22, arm64, 10 s timeout unless its row says, with the row memory', () => {
    for (const f of functions) {
      const p = fnResource(f.id).Properties ?? {};
      expect(p.Runtime, f.label).toBe('nodejs22.x');
      expect(p.Architectures, f.label).toEqual(['arm64']);
      // The webhook test waits for one attempt: up to 3 s of DNS and the 15 s attempt timeout.
      expect(p.Timeout, f.label).toBe(f.label === 'TestWebhook' ? 25 : 10);
      expect(p.MemorySize, f.label).toBe(f.memoryMb);
      expect(p.Handler, f.label).toBe('index.handler');
    }
  });

  it('sets the common environment, and TABLE_NAME only where the table is used', () => {
    for (const f of functions) {
      const env = fnResource(f.id).Properties?.Environment?.Variables ?? {};
      expect(env.STAGE, f.label).toBe('dev');
      expect(env.NODE_OPTIONS, f.label).toBe('--enable-source-maps');
      expect(env.POWERTOOLS_SERVICE_NAME, f.label).toBe('referral-api');
      if (f.access === 'none') expect(env, f.label).not.toHaveProperty('TABLE_NAME');
      else expect(env.TABLE_NAME, f.label).toEqual({ Ref: tableId });
    }
  });

  it('gives every function its own log group with a retention period', () => {
    s.template.resourcePropertiesCountIs('Custom::LogRetention', {}, 0);
    const groups = new Set<string>();
    for (const f of functions) {
      const groupId = referencedId(fnResource(f.id).Properties?.LoggingConfig?.LogGroup);
      expect(groupId, f.label).toBeDefined();
      const group = s.json.Resources[groupId as string];
      expect(group?.Type, f.label).toBe('AWS::Logs::LogGroup');
      expect(group?.Properties?.RetentionInDays, f.label).toBe(30);
      groups.add(groupId as string);
    }
    expect(groups.size).toBe(functions.length);
  });

  it('writes no START/END/REPORT lines for the public redirect only (JSON logs, system logs at WARN)', () => {
    expect(functions.filter((f) => f.label === 'Visit')).toHaveLength(1);
    for (const f of functions) {
      const config = fnResource(f.id).Properties?.LoggingConfig ?? {};
      if (f.label === 'Visit')
        expect(config, f.label).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN' });
      else {
        expect(config.LogFormat, f.label).toBeUndefined();
        expect(config.SystemLogLevel, f.label).toBeUndefined();
      }
    }
  });
});

describe('IAM (exact grants per route row)', () => {
  it('the fallback has no DynamoDB permission at all', () => {
    const fallback = functions.find((f) => f.label === 'Fallback')!;
    expect(dynamoActionsOf(fallback.id)).toEqual([]);
    // Nor can it reach the table through any statement naming it.
    const statements = roleStatementsOf(s.json, fallback.id);
    expect(statements.filter((st) => referencedIds(st.Resource).has(tableId))).toEqual([]);
  });

  it("each route function is granted its row's actions (test/infra/least-privilege.test.ts has them all)", () => {
    for (const route of routes) {
      const f = functions.find((x) => x.label === route.name)!;
      const onTable = roleStatementsOf(s.json, f.id)
        .filter((st) => JSON.stringify(st.Resource) === JSON.stringify({ 'Fn::GetAtt': [tableId, 'Arn'] }))
        .flatMap(actionsOf);
      expect(onTable.sort(), f.label).toEqual(route.dynamo.map((a) => `dynamodb:${a}`).sort());
    }
    expect(dynamoActionsOf(functions.find((f) => f.label === 'Authorizer')!.id)).toEqual([
      'dynamodb:GetItem',
    ]);
  });

  it('DynamoDB grants name only this table and its indexes', () => {
    for (const f of functions) {
      for (const st of roleStatementsOf(s.json, f.id)) {
        if (!actionsOf(st).some((a) => a.startsWith('dynamodb:'))) continue;
        const resources = Array.isArray(st.Resource) ? st.Resource : [st.Resource];
        for (const r of resources) {
          expect(r, f.label).not.toBe('*');
          expect([...referencedIds(r)], f.label).toEqual([tableId]);
        }
      }
    }
  });

  it('no role carries a managed policy: each writes only to its own log group', () => {
    for (const fn of s.stack.allFunctions) {
      const id = logicalIdOf(fn);
      const props = fnResource(id).Properties ?? {};
      const roleId = referencedId(props.Role)!;
      expect(s.json.Resources[roleId]?.Type, id).toBe('AWS::IAM::Role');
      // Not AWSLambdaBasicExecutionRole: it may write to every log group of the account.
      expect(s.json.Resources[roleId]?.Properties?.ManagedPolicyArns, id).toBeUndefined();
      const logStatements = roleStatementsOf(s.json, id).filter((st) =>
        actionsOf(st).some((a) => a.startsWith('logs:')),
      );
      expect(logStatements.flatMap(actionsOf).sort(), id).toEqual([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
      ]);
      for (const st of logStatements) {
        expect([...referencedIds(st.Resource)], id).toEqual([referencedId(props.LoggingConfig?.LogGroup)]);
      }
    }
  });
});

describe('bundles', () => {
  const bundleDir = (f: FunctionUnderTest) => {
    const key = fnResource(f.id).Properties?.Code?.S3Key as string;
    expect(key, f.label).toMatch(/^[0-9a-f]{64}\.zip$/);
    return join(s.assembly.directory, `asset.${key.replace(/\.zip$/, '')}`);
  };
  const code = (f: FunctionUnderTest) => readFileSync(join(bundleDir(f), 'index.mjs'), 'utf8');
  const byLabel = (label: string) => functions.find((f) => f.label === label)!;

  it('are minified ESM with the require banner and a source map without sources', () => {
    for (const f of functions) {
      const dir = bundleDir(f);
      const js = code(f);
      // ESM has no `require`; the banner makes one for the CommonJS dependencies bundled in.
      expect(js, f.label).toMatch(
        /^import \{ ?createRequire as (\w+) ?\} from ['"](node:)?module['"]; ?const require ?= ?\1\(import\.meta\.url\);/,
      );
      expect(js, f.label).toMatch(/export\s*\{[^}]*\bhandler\b[^}]*\}/);
      expect(js, f.label).toContain('//# sourceMappingURL=index.mjs.map');
      // Minified: no indentation-heavy lines.
      expect(js.split('\n').length, f.label).toBeLessThan(200);
      const map = JSON.parse(readFileSync(join(dir, 'index.mjs.map'), 'utf8')) as {
        sourcesContent?: unknown;
      };
      expect(map.sourcesContent, f.label).toBeUndefined();
    }
  });

  it('bundle every dependency, the AWS SDK included: only Node built-ins stay imports', async () => {
    for (const f of functions) {
      const imported = await importsOf(join(bundleDir(f), 'index.mjs'));
      expect(imported.length, f.label).toBeGreaterThan(0);
      expect(
        imported.filter((name) => !isBuiltin(name)),
        f.label,
      ).toEqual([]);
    }
    // The SDK really is inside (not silently dropped): the DynamoDB client's wire protocol id.
    expect(code(byLabel('Authorizer'))).toContain('DynamoDB_20120810');
  });

  it('keep the DynamoDB client out of the fallback', () => {
    expect(code(byLabel('Fallback'))).not.toContain('DynamoDB_20120810');
  });

  // The reference page's Redoc script is a file beside the docs function's bundle, written by its
  // afterBundling hook from the installed package: in the asset directory Lambda unzips and
  // `sam local invoke` runs, and not in any bundle.
  it("put the installed Redoc file, gzipped, in the docs function's asset directory, and in no other", () => {
    const docs = byLabel('GetApiReference');
    expect(routeNamed(docs.label).handler).toBe('http/get-docs');
    expect(readdirSync(bundleDir(docs)).sort()).toEqual(
      ['index.mjs', 'index.mjs.map', REDOC_GZIP_FILE, REDOC_MANIFEST_FILE].sort(),
    );
    // The package's file as served: its CDN logo's URL replaced (lib/openapi/redoc-asset.ts).
    const served = servedRedocSource(
      readFileSync(createRequire(import.meta.url).resolve(REDOC_PACKAGE_FILE)),
    );
    expect(gunzipSync(readFileSync(join(bundleDir(docs), REDOC_GZIP_FILE))).equals(served)).toBe(true);
    expect(Buffer.byteLength(code(docs))).toBeLessThanOrEqual(BUNDLE_BUDGETS.docs);
    for (const f of functions.filter((x) => x !== docs)) {
      expect(readdirSync(bundleDir(f)).sort(), f.label).toEqual(['index.mjs', 'index.mjs.map']);
    }
  });

  /** Loads a bundle the way Lambda does (an ES module) and returns its handler. */
  async function loadHandler<R>(
    f: FunctionUnderTest,
  ): Promise<(event: unknown, context: unknown) => Promise<R>> {
    const url = pathToFileURL(join(bundleDir(f), 'index.mjs')).href;
    const mod = (await import(url)) as { handler: (event: unknown, context: unknown) => Promise<R> };
    return mod.handler;
  }

  const httpEvent = (method: string, path: string, routeKey = '$default') => ({
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: { requestId: 'infra-test', http: { method, path } },
  });
  const context = { functionName: 'infra-test', awsRequestId: 'infra-test' };

  // These load the bundles as Lambda would: a broken ESM/CommonJS interop (the `require` banner),
  // a missing dependency or a top-level crash fails here rather than on the first deploy.
  describe('run', () => {
    const saved = { ...process.env };
    beforeAll(() => {
      // What the stack sets; the SDK clients are created at load but make no call in these cases.
      process.env.TABLE_NAME = 'referrals-infra-test';
      process.env.AWS_REGION = 'us-east-1';
      process.env.STAGE = 'dev';
    });
    afterAll(() => {
      process.env = saved;
    });

    it('the fallback answers the contract 404 for an unknown path', async () => {
      const handler = await loadHandler<{ statusCode: number; body: string }>(byLabel('Fallback'));
      const result = await handler(httpEvent('GET', '/nope'), context);
      expect(result.statusCode).toBe(404);
      expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'route_not_found' } });
    });

    it('the authorizer (AWS SDK bundled) loads and hands over an empty tenant without a key', async () => {
      const handler = await loadHandler<unknown>(byLabel('Authorizer'));
      const result = await handler(
        {
          version: '2.0',
          type: 'REQUEST',
          routeKey: 'GET /api/v1/campaign',
          headers: {},
          identitySource: [],
        },
        context,
      );
      expect(result).toEqual({ isAuthorized: true, context: { tenant: '' } });
    });

    it('a protected route function loads and answers 401 when the authorizer gave no tenant', async () => {
      const row = routes.find((r) => r.auth)!;
      const handler = await loadHandler<{ statusCode: number; body: string }>(byLabel(row.name));
      const result = await handler(httpEvent(row.method, row.path, `${row.method} ${row.path}`), context);
      expect(result.statusCode).toBe(401);
      expect(JSON.parse(result.body)).toMatchObject({ error: { code: 'unauthorized' } });
    });

    it('the docs function finds the Redoc file in its asset directory and serves it', async () => {
      const handler = await loadHandler<{
        statusCode: number;
        body: string;
        headers: Record<string, string>;
      }>(byLabel('GetApiReference'));
      const event = httpEvent('GET', '/docs', 'GET /docs');
      const result = await handler(
        {
          ...event,
          rawQueryString: 'asset=redoc.standalone.js',
          queryStringParameters: { asset: 'redoc.standalone.js' },
          headers: { 'accept-encoding': 'gzip' },
        },
        context,
      );
      expect(result.statusCode).toBe(200);
      expect(result.headers['content-encoding']).toBe('gzip');
      const served = servedRedocSource(
        readFileSync(createRequire(import.meta.url).resolve(REDOC_PACKAGE_FILE)),
      );
      expect(gunzipSync(Buffer.from(result.body, 'base64')).equals(served)).toBe(true);
    });
  });

  it('change nothing in the template but the asset hashes (what the snapshot relies on)', () => {
    const unbundled = synth({ stage: 'dev' });
    expect(normalizedTemplate(s.json)).toEqual(normalizedTemplate(unbundled.json));
    expect(JSON.stringify(s.json)).not.toEqual(JSON.stringify(unbundled.json));
  });

  it('exist for every function (nothing was skipped)', () => {
    for (const f of functions) expect(existsSync(join(bundleDir(f), 'index.mjs')), f.label).toBe(true);
  });
});
