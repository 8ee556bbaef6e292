/**
 * The reference page in a real browser: Debian's Chromium driven by playwright-core loads /docs from
 * the local stack with every request to another host refused, and must render the endpoints.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/routes.ts';
import { baseUrl } from '../support/api.ts';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT_DIR = join(process.cwd(), 'test-output');

describe('the API reference page in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    // A missing browser fails the run (CI's .ci/run installs it): a skipped check is one nobody sees.
    if (!existsSync(CHROMIUM)) {
      throw new Error(
        `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) to run this test`,
      );
    }
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('lists every endpoint and the webhooks, offline, and is saved as a screenshot', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const origin = new URL(baseUrl()).origin;
    const elsewhere: string[] = [];
    const errors: string[] = [];
    // Offline: nothing but this origin (and the page's own blob: worker) may be fetched.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('blob:') || url.startsWith('data:'))
        return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    page.on('pageerror', (error) => errors.push(error.message));

    const response = await page.goto(`${baseUrl()}/docs`);
    expect(response?.status()).toBe(200);
    await page.locator('h2', { hasText: 'Create a campaign' }).first().waitFor({ timeout: 20_000 });

    const headings = await page.locator('h2').allInnerTexts();
    for (const route of routes) expect(headings, route.summary).toContain(route.summary);
    const text = (await page.locator('body').textContent()) ?? '';
    for (const path of ['/api/v1/campaign', '/api/v1/referral_link', '/r/{referral_code}']) {
      expect(text).toContain(path);
    }
    expect(text).toContain('action.created');
    expect(text).toContain('referred_user.created');
    expect(errors).toEqual([]);
    // Redoc's sidebar footer asks its CDN for a logo; nothing else may leave the origin.
    expect(elsewhere.filter((url) => !url.startsWith('https://cdn.redoc.ly/redoc/logo'))).toEqual([]);

    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.locator('h2', { hasText: 'Create a referral link' }).first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUTPUT_DIR, 'docs.png') });
    await page.close();
  });
});
