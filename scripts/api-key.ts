/**
 * `npm run api-key -- create --tenant NAME | revoke KEY_OR_ID | list`
 *
 * Works against the running local stack by default (it finds its DynamoDB endpoint in
 * `.data/local-stack.json`), or against any table with `--table NAME [--region R] [--endpoint URL]`
 * (a deployed stage: the stack output `CreateApiKeyCommand` prints the exact command).
 * `create` prints the new key alone on the last line of stdout, so scripts can take `tail -n 1`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createDocumentClient } from '../lib/aws/clients.ts';
import { ApiKeyStore } from '../lib/db/api-keys.ts';
import { stateFile } from '../lib/local/stack.ts';
import { fail, parseTargetArgs, TARGET_USAGE } from './cli.ts';

const usage = `Usage:
  npm run api-key -- create --tenant NAME [target]
  npm run api-key -- revoke KEY_OR_ID [target]
  npm run api-key -- list [target]
Target (default: the running local stack, found through DATA_DIR, default .data):
${TARGET_USAGE}`;

async function main() {
  const { values, positionals } = parseTargetArgs({ tenant: { type: 'string' } }, true);
  const [command, arg] = positionals;
  if (values.help || !command) {
    console.log(usage);
    process.exit(command || values.help ? 0 : 1);
  }

  let { table, endpoint } = values;
  if (!table) {
    const file = stateFile(process.env.DATA_DIR || '.data');
    if (!existsSync(file)) {
      fail(
        'No running local stack found (start it with `npm start`), and no --table given for a deployed stage.',
      );
    }
    const state = JSON.parse(readFileSync(file, 'utf8')) as { dynamodbEndpoint: string; tableName: string };
    table = state.tableName;
    endpoint ??= state.dynamodbEndpoint;
  }
  const db = createDocumentClient(endpoint ?? process.env.DYNAMODB_ENDPOINT, values.region);
  const store = new ApiKeyStore(db, table);
  try {
    switch (command) {
      case 'create': {
        if (!values.tenant) fail('create needs --tenant NAME');
        const { key, record } = await store.create(values.tenant);
        console.log(`Created an api key for tenant "${record.tenant}" (id ${record.id}). It is shown once:`);
        console.log(key);
        break;
      }
      case 'revoke': {
        if (!arg) fail('revoke needs the key or its id (from `list`)');
        const outcome = await store.revoke(arg);
        if (outcome === 'not_found') fail('No such key.');
        console.log(
          `${outcome === 'revoked' ? 'Revoked' : 'Already revoked'}. The local stack refuses it at once; ` +
            'deployed stages within 60 seconds (the authorizer cache).',
        );
        break;
      }
      case 'list': {
        const keys = await store.list();
        if (keys.length === 0) console.log('No keys.');
        for (const k of keys) {
          console.log(
            `${k.id}  ${k.tenant.padEnd(20)} created ${k.created_at}${k.revoked_at ? `  revoked ${k.revoked_at}` : ''}`,
          );
        }
        break;
      }
      default:
        fail(`Unknown command "${command}".\n${usage}`);
    }
  } finally {
    db.destroy();
  }
}

main().catch((err: unknown) => fail(`api-key: ${err instanceof Error ? err.message : String(err)}`));
