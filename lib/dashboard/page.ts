/**
 * The dashboard's page: a shell that loads one script and one stylesheet from this same route
 * (`/dashboard?asset=app.js`), both built from `dashboard/` into `assets.generated.ts`
 * (`npm run dashboard:build`). Nothing inline, nothing from another host: the CSP below allows
 * only this origin.
 */
import { gzipSync } from 'node:zlib';
import type { StaticAsset } from '../http/static-asset.ts';
import { DASHBOARD_CSS, DASHBOARD_JS, DASHBOARD_VERSION } from './assets.generated.ts';

/**
 * Scripts, styles, images and API calls from this origin only; no inline script or style element,
 * no eval, no plugin, no framing, no form posting elsewhere. (The chart's colours are classes of
 * the stylesheet; Preact's style properties go through the CSSOM, which `style-src` does not cover.)
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const asset = (text: string): StaticAsset => {
  const plain = Buffer.from(text);
  const gzip = gzipSync(plain, { level: 9 });
  return { plain: () => plain, gzip: () => gzip };
};

/** Relative to `/dashboard`, so the page also works under a path prefix (a custom domain's base path). */
const assetUrl = (name: string) => `dashboard?asset=${name}&amp;v=${DASHBOARD_VERSION}`;

export const dashboardPage = asset(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Referral dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assetUrl('app.css')}">
<script defer src="${assetUrl('app.js')}"></script>
</head>
<body>
<div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`);

export const dashboardScript = asset(DASHBOARD_JS);
export const dashboardStyles = asset(DASHBOARD_CSS);
