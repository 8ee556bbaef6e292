import { expect, it } from 'vitest';
import { lintDocument } from '../../scripts/openapi-tools.ts';

// Redocly CLI lints the generated document with the rules in redocly.yaml (recommended-strict:
// every warning is an error). `npm run openapi:lint` runs the same check by hand.
it('the OpenAPI document passes `redocly lint` with no problems', () => {
  const { ok, output } = lintDocument();
  expect(ok, output).toBe(true);
  expect(output).toMatch(/Your API description is valid/);
}, 60_000);
