/**
 * What the operator scripts (`api-key.ts`, `migrate-table.ts`) share: the options that name the
 * table they work on, their usage lines, and failing with one line on stderr (no stack trace).
 */
import { parseArgs } from 'node:util';

/** Usage lines of the target options. */
export const TARGET_USAGE = `  --table NAME        the table (a deployed stage's TableName output, e.g. referrals-dev)
  --region REGION     AWS region of that table (default: AWS_REGION)
  --endpoint URL      a DynamoDB endpoint (DynamoDB Local); default: AWS`;

export function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

/** The command line parsed with the target options, `--help`, and the script's own options. */
export function parseTargetArgs<O extends Record<string, { type: 'string' | 'boolean' }>>(
  own: O,
  allowPositionals = false,
) {
  // The SDK warns that its 2027 releases need Node 22; this project supports Node 20 and 22 today.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return parseArgs({
    allowPositionals,
    options: {
      ...own,
      table: { type: 'string' },
      region: { type: 'string' },
      endpoint: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    } as const,
  });
}
