/**
 * `npm run table:migrate -- --table NAME [--region REGION] [--endpoint URL]`
 * (`npm run campaigns:backfill` is the same command, by its older name)
 *
 * Brings a table written by an older version up to the current layout, with the operator's
 * credentials (no function is granted `Scan`):
 * - every campaign written before the campaign list existed (`GET /api/v1/campaigns`) gets its
 *   list keys in GSI2 (`lib/db/migrations/campaign-list-backfill.ts`);
 * - analytics series written an item per hour and per day are moved into one item per day
 *   (`lib/db/migrations/series-migration.ts`);
 * - series items written before they kept their day totals get them
 *   (`lib/db/migrations/series-day-totals.ts`; run it after deploying the version that writes them);
 * - rankings kept as an item per entity (GSI4) move to the entities' all-time counts and their
 *   campaigns' boards (`lib/db/migrations/rankings-migration.ts`; run it after deploying the
 *   version that reads boards).
 * - referred users written before their list existed (`GET /api/v1/referred_users/{campaign_id}`)
 *   get its keys (`lib/db/migrations/referred-user-list-keys.ts`; run it after deploying the version
 *   that writes them).
 * Each is a Scan of the table and idempotent: run it again, or after an interruption, and it
 * changes only what is still to change. The local stack does both itself when it starts.
 */

import { createDocumentClient } from '../lib/aws/clients.ts';
import { backfillCampaignListKeys } from '../lib/db/migrations/campaign-list-backfill.ts';
import { migrateRankings } from '../lib/db/migrations/rankings-migration.ts';
import { backfillReferredUserListKeys } from '../lib/db/migrations/referred-user-list-keys.ts';
import { backfillSeriesDayTotals } from '../lib/db/migrations/series-day-totals.ts';
import { describeSeriesMigration, migrateSeriesItems } from '../lib/db/migrations/series-migration.ts';
import { fail, parseTargetArgs, TARGET_USAGE } from './cli.ts';

const usage = `Usage:
  npm run table:migrate -- --table NAME [--region REGION] [--endpoint URL]
${TARGET_USAGE}`;

async function main() {
  const { values } = parseTargetArgs({});
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
    console.log(`${describeSeriesMigration(await migrateSeriesItems(db, values.table))}.`);
    // After the move above, which adds hours alone; safe beside the running rollup consumer.
    const written = await backfillSeriesDayTotals(db, values.table);
    console.log(`analytics series: ${written} day items given their day totals.`);
    console.log(
      `analytics rankings: ${await migrateRankings(db, values.table)} entries moved to their boards.`,
    );
    const referred = await backfillReferredUserListKeys(db, values.table);
    console.log(
      `referred-user list: ${referred.found} referred users without list keys found, ${referred.updated} given them.`,
    );
  } finally {
    db.destroy();
  }
}

main().catch((err: unknown) => fail(`table:migrate: ${err instanceof Error ? err.message : String(err)}`));
