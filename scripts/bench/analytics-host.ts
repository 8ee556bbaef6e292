/**
 * A second local stack for the analytics part (`analytics.ts`), in a process of its own (the
 * handlers read their table's endpoint when they load, once per process): its own DynamoDB Local
 * in memory with the same table, pointed at the part's own counting proxy. Three steps, each asked
 * over IPC and answered once done:
 *
 * 1. `{ sample }`: the stack as `npm start` runs it, stream consumer included, for the sample
 *    whose rollups the real consumer makes; answered `{ baseUrl }`.
 * 2. `{ load }`: that stack stopped and the table's stream turned off (while the table is still
 *    small), so that millions of items written straight into it are counted by no consumer and
 *    held by no stream; answered `{ loading: true }`. (Turning a stream on over three million
 *    items made DynamoDB Local stop answering for minutes, so it is never done.)
 * 3. `{ start }`: the stack again without a stream poller, for the queries; answered `{ baseUrl }`.
 *
 * It stops everything and exits when the parent disconnects. (Like every stack, it writes
 * `.data/local-stack.json` for `npm run api-key`, over the bench stack's, and removes it when it
 * stops.)
 */
import { DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { LOCAL_TABLE_NAME, type LocalStack, startLocalStack } from '../../lib/local/stack.ts';

const dynamo = await startDynamoLocal(undefined);
const client = new DynamoDBClient(dynamoClientConfig(dynamo.endpoint, undefined, 30_000));
await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
const streamOff = () =>
  client.send(
    new UpdateTableCommand({ TableName: LOCAL_TABLE_NAME, StreamSpecification: { StreamEnabled: false } }),
  );
let stack: LocalStack | undefined;

const stop = async () => {
  await stack?.stop().catch(() => undefined);
  client.destroy();
  await dynamo.stop();
  process.exit(0);
};
process.on('disconnect', () => void stop());

type Step = { proxyUrl: string; devApiKeys: string };
const startStack = (step: Step, streamPoller: boolean) =>
  startLocalStack({
    port: 0,
    dataDir: 'memory',
    devApiKeys: step.devApiKeys,
    dynamodbEndpoint: step.proxyUrl,
    throttles: false,
    streamPoller,
  });

process.on('message', (m: { sample?: Step; load?: true; start?: Step }) => {
  void (async () => {
    if (m.sample) {
      stack = await startStack(m.sample, true);
      process.send?.({ baseUrl: stack.baseUrl });
    } else if (m.load) {
      await stack?.stop();
      stack = undefined;
      await streamOff();
      process.send?.({ loading: true });
    } else if (m.start) {
      stack = await startStack(m.start, false);
      process.send?.({ baseUrl: stack.baseUrl });
    }
  })().catch((err: unknown) => {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
  });
});
process.send?.({ dynamo: dynamo.endpoint });
