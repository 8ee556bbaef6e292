import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  generateTypes,
  installedRedoc,
  REDOC_ASSET_FILE,
  type RedocAsset,
  TYPES_FILE,
} from '../../scripts/openapi-tools.ts';

describe('committed files generated from the document and packages', () => {
  it('test/client/api-types.ts is what openapi-typescript makes of the current document', async () => {
    const committed = readFileSync(TYPES_FILE, 'utf8');
    expect(committed === (await generateTypes()), 'out of date: run `npm run openapi:types`').toBe(true);
  }, 30_000);

  it('the Redoc bundle served by /docs is the installed redoc package, byte for byte', () => {
    const asset = JSON.parse(readFileSync(REDOC_ASSET_FILE, 'utf8')) as RedocAsset;
    const installed = installedRedoc();
    const hint = 'out of date: run `npm run openapi:assets`';
    expect(asset.version, hint).toBe(installed.version);
    expect(asset.sha256, hint).toBe(installed.sha256);
    const unpacked = gunzipSync(Buffer.from(asset.gzipBase64, 'base64'));
    expect(createHash('sha256').update(unpacked).digest('hex')).toBe(installed.sha256);
  });
});
