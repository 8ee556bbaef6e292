/**
 * The dashboard's browser bundle: the committed `lib/dashboard/assets.generated.ts` is what
 * `npm run dashboard:build` makes of `dashboard/` today, the script stays within its budget
 * (150 KB gzipped, the ceiling), and the page it serves loads nothing inline.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardPage } from '../../lib/dashboard/page.ts';
import { buildDashboardAssets, GENERATED_FILE, generatedModule } from '../../scripts/dashboard-bundle.ts';

/** Every byte of JavaScript the dashboard loads, gzipped. */
const JS_BUDGET_GZIP = 150 * 1000;

describe('the dashboard bundle', () => {
  it('is committed as built from dashboard/ (run `npm run dashboard:build` after changing it)', async () => {
    const built = generatedModule(await buildDashboardAssets());
    expect(readFileSync(GENERATED_FILE, 'utf8') === built, 'lib/dashboard/assets.generated.ts is stale').toBe(
      true,
    );
  });

  it('holds its JavaScript within 150 KB gzipped', async () => {
    const { js } = await buildDashboardAssets();
    const size = gzipSync(js, { level: 9 }).length;
    expect(size).toBeGreaterThan(1000);
    expect(size).toBeLessThanOrEqual(JS_BUDGET_GZIP);
  });

  it('serves a page with no inline script or style, under a CSP that allows this origin only', () => {
    const html = dashboardPage.plain().toString('utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/https?:\/\//);
    expect(DASHBOARD_CSP).toContain("default-src 'self'");
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');
  });
});
