/**
 * A second local stack for the analytics part (`analytics.ts`), in a process of its own (the
 * handlers read their table's endpoint when they load, once per process): its own DynamoDB Local
 * in memory with the same table, whose stream is off while the part writes millions of items
 * straight into it (so no stream consumer counts them a second time, and the stream does not hold
 * them), then on again before the stack starts, pointed at the part's own counting proxy.
 *
 * Over IPC: it sends `{ dynamo }` once the table is ready; `{ start: { proxyUrl, devApiKeys } }`
 * turns the stream on and starts the stack, answered `{ baseUrl }`. It stops everything and
 * exits when the parent disconnects. (Like every stack, it writes `.data/local-stack.json` for
 * `npm run api-key`, over the bench stack's, and removes it when it stops.)
 */
import { DynamoDBClient, UpdateTableCommand } from '@aws-sdk/client-dynamodb';
import { dynamoClientConfig } from '../../lib/aws/clients.ts';
import { ensureTable, startDynamoLocal } from '../../lib/local/dynamodb.ts';
import { LOCAL_TABLE_NAME, type LocalStack, startLocalStack } from '../../lib/local/stack.ts';
import { tableDefinition } from '../../lib/table-definition.ts';

const dynamo = await startDynamoLocal(undefined);
const client = new DynamoDBClient(dynamoClientConfig(dynamo.endpoint, undefined, 30_000));
await ensureTable(dynamo.endpoint, LOCAL_TABLE_NAME);
const stream = (enabled: boolean) =>
  client.send(
    new UpdateTableCommand({
      TableName: LOCAL_TABLE_NAME,
      StreamSpecification: enabled
        ? { StreamEnabled: true, StreamViewType: tableDefinition.streamViewType }
        : { StreamEnabled: false },
    }),
  );
await stream(false);
let stack: LocalStack | undefined;

const stop = async () => {
  await stack?.stop().catch(() => undefined);
  client.destroy();
  await dynamo.stop();
  process.exit(0);
};
process.on('disconnect', () => void stop());
process.on('message', (m: { start?: { proxyUrl: string; devApiKeys: string } }) => {
  if (!m.start) return;
  const { proxyUrl, devApiKeys } = m.start;
  void (async () => {
    // A new stream: the stack's poller starts at its beginning, after everything written so far.
    await stream(true);
    stack = await startLocalStack({
      port: 0,
      dataDir: 'memory',
      devApiKeys,
      dynamodbEndpoint: proxyUrl,
      throttles: false,
    });
    process.send?.({ baseUrl: stack.baseUrl });
  })().catch((err: unknown) => {
    process.send?.({ error: err instanceof Error ? err.message : String(err) });
  });
});
process.send?.({ dynamo: dynamo.endpoint });
