import { describe, expect, it } from 'vitest';
import { normalizedTemplate, synth, synthProd } from './synth.ts';

/**
 * The whole template of each stage, asset hashes normalised, committed next to this file. Any
 * change to the infrastructure, intended or not, shows up as a diff in review; after an intended
 * one, refresh with `npx vitest run --project infra -u` and commit the files with the change.
 */
describe('template snapshot', () => {
  it.each(['dev', 'prod'] as const)('ReferralApi-%s matches the committed template', async (stage) => {
    // Prod as deployed, with its alarm topic (it refuses to synthesize without one).
    const { json } = stage === 'prod' ? synthProd() : synth({ stage });
    const text = `${JSON.stringify(normalizedTemplate(json), undefined, 2)}\n`;
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    expect(text).not.toMatch(/cdk-hnb659fds-assets/);
    await expect(text).toMatchFileSnapshot(`./__snapshots__/ReferralApi-${stage}.template.json.snap`);
  });
});
