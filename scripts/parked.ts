/**
 * `npm run parked [-- retry] [--table NAME [--region REGION] [--endpoint URL]]`
 *
 * The work the stream's counting consumer parked because DynamoDB refused it as it was (an item
 * past a limit, an attribute of the wrong type written by hand: `lib/stream/parked.ts`): listed,
 * with what failed and why, or (`retry`) run again once the cause is fixed, each piece once. Works
 * against the running local stack by default (its endpoint is in `.data/local-stack.json`), or a
 * deployed stage's table with the operator's credentials. The alarm `<stage>-counting-work-parked`
 * says when there is something to look at.
 */
import { existsSync, readFileSync } from 'node:fs';
import { stateFile } from '../lib/local/stack.ts';
import { fail, parseTargetArgs, TARGET_USAGE } from './cli.ts';

const usage = `Usage:
  npm run parked [-- --table NAME ...]          list the parked counting work
  npm run parked -- retry [--table NAME ...]    run it again, each piece once
${TARGET_USAGE}`;

async function main() {
  const { values, positionals } = parseTargetArgs({}, true);
  if (values.help) {
    console.log(usage);
    return;
  }
  const command = positionals[0] ?? 'list';
  if (command !== 'list' && command !== 'retry') fail(`Unknown command "${command}".\n${usage}`);
  let { table, endpoint } = values;
  if (!table) {
    const file = stateFile(process.env.DATA_DIR || '.data');
    if (!existsSync(file))
      fail(`No running local stack found (start it with \`npm start\`), and no --table given.\n${usage}`);
    const state = JSON.parse(readFileSync(file, 'utf8')) as { dynamodbEndpoint: string; tableName: string };
    table = state.tableName;
    endpoint ??= state.dynamodbEndpoint;
  }
  // The consumer's own modules, pointed at that table (they read it at load).
  Object.assign(process.env, {
    TABLE_NAME: table,
    ...(endpoint ? { DYNAMODB_ENDPOINT: endpoint } : {}),
    ...(values.region ? { AWS_REGION: values.region } : {}),
  });
  const { listParked, retryParked } = await import('../lib/stream/parked.ts');
  if (command === 'list') {
    const parked = await listParked();
    if (parked.length === 0) console.log('Nothing parked.');
    for (const p of parked)
      console.log(`${p.SK}  parked ${p.parked_at}  ${p.error}\n  ${String(p.work).slice(0, 300)}`);
    return;
  }
  const { runParkedBoard, runParkedCounted } = await import('../lib/analytics/window.ts');
  const { runParkedFeed } = await import('../lib/webhooks/feed.ts');
  const { succeeded, failed } = await retryParked({
    counted: runParkedCounted,
    board: runParkedBoard,
    feed: runParkedFeed,
  });
  console.log(`${succeeded} pieces of parked work counted now, ${failed} failed again (still parked).`);
}

main().catch((err: unknown) => fail(`parked: ${err instanceof Error ? err.message : String(err)}`));
