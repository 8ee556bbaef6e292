/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against the run's
 * local stack. Sign in with a wrong key (the API's 401 message) and the test key, create a campaign
 * and a link through the UI, visit the link through `/r/{code}` as a browser, and see the visits in
 * the chart's totals and the leaderboard. Along the way: the key never reaches the URL, a cookie or
 * localStorage; the page answers with its strict CSP and breaks no rule of it; it asks no other
 * origin for anything; axe-core finds no serious or critical violation on any page; and every page
 * is written to `test-output/` at 390 and 1440 px wide.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../lib/dashboard/page.ts';
import { baseUrl, TENANT_A } from '../support/api.ts';
import { BROWSER_UA } from '../support/records.ts';

const CHROMIUM = '/usr/bin/chromium';
const OUTPUT_DIR = join(process.cwd(), 'test-output');
const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1440, height: 900 } } as const;
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

describe('the dashboard in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
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
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
    mkdirSync(OUTPUT_DIR, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
  });

  /** A tab that records requests to other origins, script errors and CSP violations. */
  async function openTab(context: BrowserContext) {
    const page = await context.newPage();
    const origin = new URL(baseUrl()).origin;
    const elsewhere: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => {
      const url = request.url();
      if (new URL(url).origin !== origin && !url.startsWith('data:')) elsewhere.push(url);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content[ -]Security[ -]Policy|Refused to/i.test(message.text())) problems.push(message.text());
    });
    await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`violation: ${text}`));
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        window.reportCspViolation(e.violatedDirective + ' ' + e.blockedURI));`,
    });
    return { page, elsewhere, problems };
  }

  /** axe-core's serious and critical violations on the page as it is now. */
  async function axeViolations(page: Page): Promise<Violation[]> {
    // Evaluated through the DevTools protocol, which the page's CSP does not govern.
    await page.evaluate(axeSource);
    const all = (await page.evaluate(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
      r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.map((n) => n.target.join(' ')) })))`)) as Violation[];
    return all.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  }

  /** axe on the page, then a full-page screenshot at each width. */
  async function checkAndShoot(page: Page, name: string): Promise<void> {
    for (const [label, size] of Object.entries(WIDTHS)) {
      await page.setViewportSize(size);
      await page.waitForTimeout(100);
      await page.screenshot({ path: join(OUTPUT_DIR, `dashboard-${name}-${label}.png`), fullPage: true });
      expect(await axeViolations(page), `${name} at ${size.width} px`).toEqual([]);
      // Nothing wider than the viewport: no sideways scrolling of the whole page (a wide table scrolls in its box).
      const overflow = (await page.evaluate(`[...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.scroll, .visually-hidden, .skip'))
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .map((e) => e.tagName.toLowerCase() + '.' + e.className).slice(0, 5)`)) as string[];
      expect(overflow, `${name} at ${size.width} px: wider than the page`).toEqual([]);
      const pageWidth = (await page.evaluate('document.documentElement.scrollWidth')) as number;
      expect(pageWidth, `${name} at ${size.width} px: page width`).toBeLessThanOrEqual(size.width);
    }
    await page.setViewportSize(WIDTHS.desktop);
  }

  it('signs in, creates a campaign and a link, and shows visits in the chart and the leaderboard', async () => {
    const context = await browser.newContext({ viewport: WIDTHS.desktop, locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: new URL(baseUrl()).origin,
    });
    const { page, elsewhere, problems } = await openTab(context);

    const response = await page.goto(`${baseUrl()}/dashboard`);
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(headers['content-security-policy']).toContain("default-src 'self'");
    expect(headers['content-security-policy']).not.toContain('unsafe-inline');

    // Sign in: a wrong key shows the API's own 401 message.
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    // The page paints its content (the 1 s goal is a timing, measured on an idle machine where
    // it is meaningful, not asserted here beside a busy test run).
    const paint = (await page.evaluate(
      `performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1`,
    )) as number;
    expect(paint).toBeGreaterThan(0);
    // The keyboard: each page puts focus on its heading, and the next Tab reaches its first field.
    expect(await page.evaluate('document.activeElement.tagName')).toBe('H1');
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement.id')).toBe('api-key');
    await checkAndShoot(page, 'sign-in');
    const unauthorized = (await (
      await fetch(`${baseUrl()}/api/v1/health/ready`, { headers: { 'api-key': 'not-a-key' } })
    ).json()) as { error: { message: string } };
    await page.getByLabel('API key').fill('not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(unauthorized.error.message);
    await checkAndShoot(page, 'sign-in-error');

    await page.getByLabel('API key').fill(TENANT_A.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    // The account's campaigns (GET /api/v1/campaigns): a list, or (alone on a fresh stack) none yet.
    await expect
      .poll(
        async () =>
          (await page.locator('.campaign-list li').count()) +
          (await page.getByText('No campaign yet').count()),
      )
      .toBeGreaterThan(0);
    await checkAndShoot(page, 'campaigns-start');

    // Create a campaign: the app opens its overview.
    const name = `Dashboard spring promo ${Date.now()}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Landing page URL').fill('https://example.com/signup');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('heading', { name, level: 1 }).waitFor();
    const campaignId = /#\/campaigns\/([0-9a-f-]{36})$/.exec(page.url())?.[1];
    expect(campaignId).toBeDefined();
    await expect.poll(() => page.getByText('No visits yet in this range').count()).toBe(1);
    await expect.poll(() => page.getByText('Nobody on the board yet').count()).toBe(1);
    await checkAndShoot(page, 'overview-empty');
    // The list shows it first (newest first), and leads back to it.
    await page.getByRole('link', { name: 'Campaigns', exact: true }).first().click();
    await expect.poll(() => page.locator('.campaign-list li').first().textContent()).toContain(name);
    await page.locator('.campaign-list li').first().getByRole('link').click();
    await page.getByRole('heading', { name, level: 1 }).waitFor();

    // Its links: none, then one with a custom code, copied to the clipboard.
    await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Links' }).click();
    await expect.poll(() => page.getByText('No link yet').count()).toBe(1);
    const code = `dash${Date.now().toString(36)}`;
    await page.getByLabel(/Custom code/).fill(code);
    await page.getByLabel(/Referrer id/).fill('ada');
    await page.getByRole('button', { name: 'Create link' }).click();
    const row = page.getByRole('row').filter({ hasText: code });
    await row.waitFor();
    const share = `${new URL(baseUrl()).origin}/r/${code}`;
    await row.getByRole('button', { name: `Copy the link ${code}` }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(share);
    await checkAndShoot(page, 'links');

    // Three visits as a browser; they reach analytics through the table stream.
    for (let i = 0; i < 3; i++) {
      const visit = await fetch(share, { headers: { 'user-agent': BROWSER_UA }, redirect: 'manual' });
      expect(visit.status).toBe(302);
    }
    await page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: 'Overview' }).click();
    const visits = page.locator('.legend li', { hasText: /^Visits/ }).locator('strong');
    await expect.poll(() => visits.textContent(), { timeout: 15_000 }).toBe('3');
    const leader = page.locator('table.leaderboard tbody tr').first();
    await expect.poll(() => leader.textContent(), { timeout: 15_000 }).toContain(code);
    expect(await leader.locator('td').last().textContent()).toBe('3');
    // The hour switch: the same three visits, grouped by hour.
    await page.getByLabel('By hour (48 h)').check();
    await expect
      .poll(() => page.locator('figure.chart title').textContent())
      .toMatch(/Visits: 3,.* per hour/);
    await checkAndShoot(page, 'overview');

    // Back on the campaigns page, the campaign is listed.
    await page.getByRole('link', { name: 'Campaigns' }).first().click();
    await page.getByRole('link', { name }).waitFor();
    await checkAndShoot(page, 'campaigns');

    // The key: in this tab's sessionStorage only.
    expect(page.url()).not.toContain(TENANT_A.key);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain(TENANT_A.key);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).toContain(TENANT_A.key);

    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 90_000);

  it('opens a campaign by id and shows the API message for an unknown one', async () => {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const { page, problems } = await openTab(context);
    await page.goto(`${baseUrl()}/dashboard`);
    await page.getByLabel('API key').fill(TENANT_A.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const unknown = crypto.randomUUID();
    await page.getByLabel('Campaign id').fill(unknown);
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(unknown);
    expect(problems).toEqual([]);
    await context.close();
  });
});
