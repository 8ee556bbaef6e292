/**
 * `npm run campaigns:backfill -- --table NAME [--region REGION] [--endpoint URL]`
 *
 * Gives every campaign written before the campaign list existed (`GET /api/v1/campaigns`) its
 * list keys in GSI2 (`lib/db/campaign-list-backfill.ts`): one Scan of the table with the
 * operator's credentials, then one conditional UpdateItem per campaign that lacks them.
 * Idempotent: run it again, or after an interruption, and it changes only what is still missing.
 * The local stack does this itself when it starts on a table made before the list.
 */
import { parseArgs } from 'node:util';
import { createDocumentClient } from '../lib/aws/clients.ts';
import { backfillCampaignListKeys } from '../lib/db/campaign-list-backfill.ts';

const usage = `Usage:
  npm run campaigns:backfill -- --table NAME [--region REGION] [--endpoint URL]
  --table NAME        the table (a deployed stage's TableName output, e.g. referrals-dev)
  --region REGION     AWS region of that table (default: AWS_REGION)
  --endpoint URL      a DynamoDB endpoint (DynamoDB Local); default: AWS`;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

async function main() {
  // The SDK warns that its 2027 releases need Node 22; this project supports Node 20 and 22 today.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const { values } = parseArgs({
    options: {
      table: { type: 'string' },
      region: { type: 'string' },
      endpoint: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  if (!values.table) fail(`--table is required.\n${usage}`);
  // A Scan of a large table takes a while; each attempt gets far longer than an API call's.
  const db = createDocumentClient(values.endpoint ?? process.env.DYNAMODB_ENDPOINT, values.region, 30_000);
  try {
    const { found, updated } = await backfillCampaignListKeys(db, values.table);
    console.log(
      `${found} campaigns without list keys found, ${updated} given them` +
        (found > updated ? ` (${found - updated} were deleted or given keys meanwhile)` : '') +
        '.',
    );
  } finally {
    db.destroy();
  }
}

main().catch((err: unknown) =>
  fail(`campaigns:backfill: ${err instanceof Error ? err.message : String(err)}`),
);
