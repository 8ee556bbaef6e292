/**
 * The analytics part's stack in a process of its own (handlers read their table's endpoint once per process).
 * `load` turns the stream off while the table is small: over millions of items it stalled DynamoDB Local.
 */
import { DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { LOCAL_TABLE_NAME, type LocalStack, startLocalStack } from '../../lib/local/stack.ts';

const dynamo = await startDynamoLocal(undefined);
const client = new DynamoDBClient(dynamoClientConfig(dynamo.endpoint, undefined, 30_000));
await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
let stack: LocalStack | undefined;
process.on('disconnect', async () => {
  await stack?.stop().catch(() => undefined);
  client.destroy();
  await dynamo.stop();
  process.exit(0);
});

type Step = { id: number; step: 'sample' | 'load' | 'start'; proxyUrl: string; devApiKeys: string };
process.on('message', async ({ id, step, proxyUrl, devApiKeys }: Step) => {
  try {
    if (step === 'load') {
      await stack?.stop();
      stack = undefined;
      const off = { TableName: LOCAL_TABLE_NAME, StreamSpecification: { StreamEnabled: false } };
      await client.send(new UpdateTableCommand(off));
    } else
      stack = await startLocalStack({
        ...{ port: 0, dataDir: 'memory', devApiKeys, dynamodbEndpoint: proxyUrl, throttles: false },
        streamPoller: step === 'sample',
        // Short windows: the sample's sums split over more windows and writes, and counted sooner.
        ...{ rollupTumblingWindowSeconds: 5, analyticsFlushAgeMs: 1_000, analyticsBoardAgeMs: 0 },
      });
    process.send?.({ id, value: stack?.baseUrl });
  } catch (err) {
    process.send?.({ id, error: err instanceof Error ? err.message : String(err) });
  }
});
process.send?.({ ready: dynamo.endpoint });
