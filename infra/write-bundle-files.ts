/**
 * `tsx infra/write-bundle-files.ts <handler> <outputDir>`: what NodejsFunction's `afterBundling` hook
 * runs for a function that needs files beside its bundle (see `BUNDLE_FILES` in infra/bundling.ts).
 */
import { BUNDLE_FILES, writeBundleFiles } from './bundling.ts';

const [handler, outputDir] = process.argv.slice(2);
if (!handler || !outputDir || !BUNDLE_FILES[handler]) {
  console.error(
    `usage: tsx infra/write-bundle-files.ts <${Object.keys(BUNDLE_FILES).join('|')}> <outputDir>`,
  );
  process.exit(2);
}
writeBundleFiles(handler, outputDir);
