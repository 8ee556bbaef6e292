/**
 * `npm start`: the whole service on this machine. Settings come from the environment (see the
 * settings table in docs/local-stack.md); Ctrl-C stops everything that was started.
 */
import { LocalStackError } from '../lib/local/errors.ts';
import { type LocalStackSettings, settingsFromEnv, startLocalStack } from '../lib/local/stack.ts';

async function main() {
  // The SDK warns that its 2027 releases need Node 22; this project supports Node 20 and 22 today.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
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
  // `npm start` does not pass a SIGTERM sent to npm on to this process: when the parent goes
  // away (this process is re-parented), stop as if signalled, so no Java is left behind.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stop('parent exited');
  }, 1000).unref();

  const started = performance.now();
  const since = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const requestLog = (process.env.LOCAL_REQUEST_LOG ?? 'on').toLowerCase() !== 'off';
  const settings: LocalStackSettings = {
    ...settingsFromEnv(),
    onListening: (baseUrl) =>
      console.log(`[${since()}] port bound: ${baseUrl} answers 503 (Retry-After) until the stack is ready`),
    onStep: (step) => console.log(`[${since()}] ${step}…`),
    onRequest: requestLog
      ? (r) => console.log(`${r.method} ${r.path} ${r.status} ${r.ms.toFixed(1)} ms ${r.requestId}`)
      : undefined,
  };
  stack = await startLocalStack(settings);

  console.log(`Referral API listening on ${stack.baseUrl} (ready in ${since()})`);
  console.log(`  DynamoDB: ${stack.dynamodbEndpoint} (table ${stack.tableName}, data: ${settings.dataDir})`);
  const restored = stack.queue.restored;
  console.log(
    `  Queue:    ${stack.queue.webhookQueueUrl}${restored > 0 ? ` (${restored} pending messages restored from DATA_DIR)` : ''}`,
  );
  for (const { tenant, key } of stack.apiKeys) console.log(`  api-key for tenant "${tenant}": ${key}`);
  console.log(
    `\nTry: curl -s -H 'api-key: ${stack.apiKeys[0]?.key ?? '<key>'}' -H 'content-type: application/json' \\`,
  );
  console.log(`       -d '{"url":"example.com","name":"Spring"}' ${stack.baseUrl}/api/v1/campaign`);
  console.log(
    `Reference: ${stack.baseUrl}/docs. One line per request below (LOCAL_REQUEST_LOG=off to silence it); failed webhook attempts too.`,
  );
  console.log('Press Ctrl-C to stop.');
}

main().catch((err: unknown) => {
  if (err instanceof LocalStackError) console.error(`Cannot start: ${err.message}`);
  else console.error(`Cannot start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
