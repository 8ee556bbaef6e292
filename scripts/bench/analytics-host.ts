/**
 * The analytics part's own stack (`analytics.ts`), in a process of its own: the handlers read
 * their table's endpoint once per process, when they load. Its own DynamoDB Local in memory (whose
 * endpoint it answers first), then a step at a time, each answered `{ ok }` or `{ error }`:
 * `sample`, the stack as `npm start` runs it, for the sample the real consumer counts; `load`, that
 * stack stopped and the table's stream turned off while the table is still small (turning a stream
 * on over millions of items made DynamoDB Local stop answering for minutes, so it never is);
 * `start`, the stack again without a stream poller, for the queries. Like every stack it writes
 * `.data/local-stack.json` over the bench stack's, and removes it when it stops.
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

type Step = { step: 'sample' | 'load' | 'start'; proxyUrl: string; devApiKeys: string };
const start = ({ proxyUrl, devApiKeys }: Step, streamPoller: boolean) =>
  startLocalStack({
    port: 0,
    dataDir: 'memory',
    devApiKeys,
    dynamodbEndpoint: proxyUrl,
    throttles: false,
    streamPoller,
  });

process.on('message', async (m: Step) => {
  try {
    if (m.step === 'load') {
      await stack?.stop();
      stack = undefined;
      const off = { TableName: LOCAL_TABLE_NAME, StreamSpecification: { StreamEnabled: false } };
      await client.send(new UpdateTableCommand(off));
    } else stack = await start(m, m.step === 'sample');
    process.send?.({ ok: stack?.baseUrl ?? 'loading' });
  } catch (err) {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
  }
});
process.send?.({ ok: dynamo.endpoint });
