/**
 * `npm start`: the whole service on this machine. Settings come from the environment (see the
 * README's settings table); Ctrl-C stops everything that was started.
 */
import { LocalStackError } from '../lib/local/errors.ts';
import { settingsFromEnv, startLocalStack } from '../lib/local/stack.ts';

async function main() {
  let stack: Awaited<ReturnType<typeof startLocalStack>> | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`\n${signal}: stopping the local stack…`);
    // Before start-up finished, exiting is enough: the 'exit' hooks kill what was spawned.
    await stack?.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));

  const settings = settingsFromEnv();
  stack = await startLocalStack(settings);

  console.log(`Referral API listening on ${stack.baseUrl}`);
  console.log(`  DynamoDB: ${stack.dynamodbEndpoint} (table ${stack.tableName}, data: ${settings.dataDir})`);
  console.log(`  Queue:    ${stack.queue.webhookQueueUrl}`);
  for (const { tenant, key } of stack.apiKeys) console.log(`  api-key for tenant "${tenant}": ${key}`);
  console.log(
    `\nTry: curl -s -H 'api-key: ${stack.apiKeys[0]?.key ?? '<key>'}' -H 'content-type: application/json' \\`,
  );
  console.log(`       -d '{"url":"example.com","name":"Spring"}' ${stack.baseUrl}/api/v1/campaign`);
  console.log('Press Ctrl-C to stop.');
}

main().catch((err: unknown) => {
  if (err instanceof LocalStackError) console.error(`Cannot start: ${err.message}`);
  else console.error(`Cannot start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
