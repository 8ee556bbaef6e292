/** `npm run dashboard:build`: writes `lib/dashboard/assets.generated.ts` from `dashboard/`. */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { buildDashboardAssets, GENERATED_FILE, generatedModule } from './dashboard-bundle.ts';

const assets = await buildDashboardAssets();
writeFileSync(GENERATED_FILE, generatedModule(assets));
const kb = (s: string) => (gzipSync(s, { level: 9 }).length / 1024).toFixed(1);
console.log(
  `wrote ${GENERATED_FILE}: script ${kb(assets.js)} KiB gzipped, styles ${kb(assets.css)} KiB gzipped`,
);
