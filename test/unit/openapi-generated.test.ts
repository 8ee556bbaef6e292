import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTypes, TYPES_FILE } from '../../scripts/openapi-tools.ts';

// The reference page's Redoc script is not committed: test/unit/docs-asset.test.ts checks the one
// the docs function serves against the installed package.
describe('committed files generated from the document', () => {
  it('lib/openapi/api-types.ts is what openapi-typescript makes of the current document', async () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    expect(committed === (await generateTypes()), 'out of date: run `npm run openapi:types`').toBe(true);
  }, 30_000);
});
