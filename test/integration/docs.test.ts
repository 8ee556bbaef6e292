/**
 * The reference page in a real browser: Debian's Chromium driven by playwright-core loads /docs from
 * the local stack with every request to another origin refused and recorded, and must render the
 * endpoints without asking any other origin for anything (no CDN: Redoc's logo included) and
 * without a single CSP violation; an error body's doc_url must open at its code's entry.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../lib/openapi/document.ts';
import { routes } from '../../lib/routes.ts';
import { parseCurl } from '../client/curl-samples.ts';
import { api, baseUrl, TENANT_A } from '../support/api.ts';

const CHROMIUM = '/usr/bin/chromium';

/** What a request that is not well-formed gets. */
const MALFORMED = [
  'invalid_json',
  'validation_failed',
  'missing_parameter',
  'unsupported_media_type',
  'unauthorized',
];

/** Every operation's curl sample (`x-codeSamples`). */
const samples = () =>
  Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([verb, op]) => ({
      label: `${verb.toUpperCase()} ${path}`,
      source: (op['x-codeSamples'] as Array<{ source: string }>)[0]!.source,
    })),
  );
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

  /**
   * A page on the local stack that refuses and records every request to another origin (the page's
   * own blob: worker and data: URLs aside) and every CSP violation, reported as an event or on the
   * console, and every script error.
   */
  async function offlinePage(): Promise<{ page: Page; elsewhere: string[]; problems: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const origin = new URL(baseUrl()).origin;
    const elsewhere: string[] = [];
    const problems: string[] = [];
    const local = (url: string) =>
      new URL(url).origin === origin || url.startsWith('blob:') || url.startsWith('data:');
    // Every request the page makes, whether or not the route below sees it (a worker's, a preload).
    page.on('request', (request) => {
      if (!local(request.url())) elsewhere.push(request.url());
    });
    await page.route('**/*', (route) => {
      if (local(route.request().url())) return route.continue();
      elsewhere.push(route.request().url());
      return route.abort();
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content[ -]Security[ -]Policy|Refused to/i.test(message.text()))
        problems.push(`console: ${message.text()}`);
    });
    await page.exposeFunction('reportCspViolation', (text: string) => problems.push(`violation: ${text}`));
    // Run in the page before its own scripts (a string: the tests are not compiled with the DOM's types).
    await page.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) =>
        window.reportCspViolation(e.violatedDirective + ' ' + e.blockedURI));`,
    });
    return { page, elsewhere, problems };
  }

  it('lists every endpoint and the webhooks, asks no other origin for anything, breaks no CSP rule, and is saved as a screenshot', async () => {
    const { page, elsewhere, problems } = await offlinePage();
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
    // Realistic examples instead of the values Redoc makes up from a schema (in what Redoc drew, not
    // in the document the page embeds).
    const drawn = (await page.locator('#redoc').textContent()) ?? '';
    expect(drawn.includes('"name": "Spring referral promo"'), 'a request example').toBe(true);
    expect(drawn.match(/.{0,80}"string".{0,80}/g), 'a made-up "string"').toBeNull();
    // Each operation's curl sample in its own tab (the body's example comes first where there is one).
    const curlTabs = page.getByRole('tab', { name: 'curl', exact: true });
    expect(await curlTabs.count()).toBe(samples().length);
    for (const tab of await curlTabs.all()) await tab.click();
    const shown = new Set(await page.locator('pre').allInnerTexts());
    // The samples name the origin that serves the page, not the document's local default.
    for (const { label, source } of samples()) {
      const onThisOrigin = source.replaceAll('http://127.0.0.1:3000', baseUrl());
      expect(shown.has(onThisOrigin), `${label}: ${onThisOrigin}`).toBe(true);
    }
    // The sidebar's footer (where Redoc's logo was asked of its CDN) is rendered by now.
    await page.getByText('API docs by Redocly').waitFor();
    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);

    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.locator('h2', { hasText: 'Create a referral link' }).first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(OUTPUT_DIR, 'docs.png') });
    await page.close();
    // Redoc renders the whole document in the page: seconds of CPU, more beside a busy run.
  }, 90_000);

  it('has curl samples the local stack takes as well-formed requests, with a key of its own', async () => {
    for (const { label, source } of samples()) {
      const request = parseCurl(source);
      const path = `${request.url.pathname}${request.url.search}`;
      const { 'api-key': key, ...headers } = request.headers;
      const res = await api(request.method, path, {
        key: key === '$API_KEY' ? TENANT_A.key : null,
        headers,
        ...(request.body !== undefined ? { rawBody: request.body } : {}),
      });
      // The example campaign and code do not exist on this stack: a 404 is fine, a refusal of the
      // request's form is not.
      const code = (res.body as { error?: { code?: string } } | undefined)?.error?.code;
      expect(MALFORMED, `${label}: ${res.text}`).not.toContain(code);
      expect(res.status, `${label}: ${res.text}`).toBeLessThan(500);
    }
  });

  it("opens an error body's doc_url at that code's entry", async () => {
    const { page, elsewhere, problems } = await offlinePage();
    for (const [path, code] of [
      ['/nope', 'route_not_found'],
      ['/api/v1/campaign?id=3f0c5b7e-2a4d-4c1b-9a8e-6d5f4e3c2b1a', 'unauthorized'],
    ] as const) {
      const body = (await (await fetch(`${baseUrl()}${path}`)).json()) as {
        error: { code: string; doc_url: string };
      };
      expect(body.error.code).toBe(code);
      expect(body.error.doc_url).toBe(`${new URL(baseUrl()).origin}/docs#section/Errors/${code}`);

      await page.goto(body.error.doc_url);
      const entry = page.locator(`[id="section/Errors/${code}"]`);
      await entry.waitFor({ timeout: 20_000 });
      await expect
        .poll(() => entry.evaluate((e) => e.getBoundingClientRect().top), { timeout: 10_000 })
        .toBeLessThan(200);
      expect(await entry.locator('xpath=..').textContent()).toContain(code);
    }
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    mkdirSync(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: join(OUTPUT_DIR, 'docs-error-entry.png') });
    await page.close();
  });
});
