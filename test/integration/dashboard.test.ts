/**
 * The dashboard in a real browser: Debian's Chromium driven by playwright-core against the run's
 * local stack. Sign in with a wrong key (the API's 401 message) and the test key, create a campaign
 * and a link through the UI, visit the link through `/r/{code}` as a browser, and see the visits in
 * the chart's totals (over several ranges), the leaderboard and the link's mini chart; rename the
 * campaign, point its webhook at a local receiver, send a test event, see the deliveries, redeliver
 * one (the receiver gets the same webhook-id again), look up a referred user, read the events feed
 * and rotate the secret (after a confirmation, styled as risky); see the campaign list's figures,
 * the overview's funnel, the referred users listed newest first and filtered, the events newest
 * first and filtered by type, times in local time beside UTC, and delete a campaign after typing
 * its name. Along the way: the key never reaches the URL, a cookie or localStorage; the page
 * answers with its strict CSP and breaks no rule of it; it asks no other origin for anything;
 * axe-core finds no serious or critical violation on any page; at 390 and 1440 px no table is
 * wider than its box without a visible scroll cue, every primary action (Copy, Redeliver) is in
 * view, and no share URL breaks inside its code; and every page is written to `test-output/` at
 * both widths.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP } from '../../lib/dashboard/page.ts';
import { launchChromium, signIn } from '../../tools/browser.ts';
import { eventually } from '../../tools/wait.ts';
import { api, baseUrl } from '../support/api.ts';
import { receiversClosedAfterAll } from '../support/receivers.ts';
import { BROWSER_UA, createReferredUser, newTenant } from '../support/records.ts';

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
  /**
   * An account of this file alone: the run's tenants get campaigns from every file beside this one,
   * and the list it shows (newest first) would not start with the campaign made here.
   */
  let account: { tenant: string; key: string };

  const receiver = receiversClosedAfterAll();

  beforeAll(async () => {
    account = await newTenant('dashboard');
    browser = await launchChromium();
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

  /**
   * What a reader would miss at this width: a table wider than its box with no visible cue that it
   * scrolls, a primary action (`[data-primary]`: Copy, Redeliver) outside the page or its table's
   * visible box, a share URL broken inside its code (its `.code` on more than one line).
   */
  async function layoutProblems(page: Page): Promise<string[]> {
    // The scroll cue appears after the box is measured (a ResizeObserver): give it a frame.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    return (await page.evaluate(`(() => {
      const problems = [];
      const width = document.documentElement.clientWidth;
      const shown = (e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden';
      };
      for (const table of document.querySelectorAll('table')) {
        if (table.closest('.visually-hidden, details:not([open])')) continue;
        const box = table.closest('.scroll') ?? table.parentElement;
        if (table.getBoundingClientRect().width <= box.clientWidth + 1) continue;
        const cue = table.closest('.scroll-box')?.querySelector('.scroll-cue');
        if (!cue || !shown(cue)) problems.push('table.' + table.className + ' is wider than its box, with no scroll cue');
      }
      for (const action of document.querySelectorAll('[data-primary]')) {
        const r = action.getBoundingClientRect();
        const box = action.closest('.scroll')?.getBoundingClientRect() ?? { left: 0, right: width };
        if (!shown(action) || r.left < Math.max(0, box.left) - 1 || r.right > Math.min(width, box.right) + 1)
          problems.push('out of view: ' + action.textContent.trim());
      }
      for (const code of document.querySelectorAll('.share .code')) {
        if (code.getClientRects().length !== 1) problems.push('share URL broken inside its code: ' + code.textContent);
      }
      return problems;
    })()`)) as string[];
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
      expect(await layoutProblems(page), `${name} at ${size.width} px: layout`).toEqual([]);
    }
    await page.setViewportSize(WIDTHS.desktop);
  }

  it('signs in, creates a campaign and a link, and shows visits in the chart and the leaderboard', async () => {
    // A zone away from UTC, so that local time and UTC differ on the page.
    const context = await browser.newContext({
      viewport: WIDTHS.desktop,
      locale: 'en-US',
      timezoneId: 'America/New_York',
    });
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
    await signIn(page, 'not-a-key');
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(unauthorized.error.message);
    await checkAndShoot(page, 'sign-in-error');

    await signIn(page, account.key);
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    // The account's campaigns (GET /api/v1/campaigns): none yet, the account is new.
    await expect.poll(() => page.getByText('No campaign yet').count()).toBe(1);
    expect(await page.locator('table.campaigns tbody tr').count()).toBe(0);
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
    const campaignRows = page.locator('table.campaigns tbody tr');
    await expect.poll(() => campaignRows.first().textContent()).toContain(name);
    // Its name before its id.
    const firstRow = (await campaignRows.first().textContent()) ?? '';
    expect(firstRow.indexOf(name)).toBeLessThan(firstRow.indexOf(campaignId!));
    await campaignRows.first().getByRole('link', { name, exact: true }).click();
    await page.getByRole('heading', { name, level: 1 }).waitFor();

    // The campaign's tabs.
    const tab = (label: string) =>
      page.getByRole('navigation', { name: 'Campaign' }).getByRole('link', { name: label, exact: true });
    const campaignNow = async () =>
      (await api('GET', `/api/v1/campaign?id=${campaignId}`, { key: account.key })).body;

    // Its links: none, then one with a custom code, copied to the clipboard.
    await tab('Links').click();
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

    // Three visits as a browser; they reach analytics through the table stream.
    for (let i = 0; i < 3; i++) {
      const visit = await fetch(share, { headers: { 'user-agent': BROWSER_UA }, redirect: 'manual' });
      expect(visit.status).toBe(302);
    }
    await tab('Overview').click();
    const visits = page.locator('.legend li', { hasText: /^Visits/ }).locator('strong');
    await expect.poll(() => visits.textContent(), { timeout: 15_000 }).toBe('3');
    const leader = page.locator('table.leaderboard tbody tr').first();
    await expect.poll(() => leader.textContent(), { timeout: 15_000 }).toContain(code);
    // The ranking is its own rollup: it may reach 3 a moment after the series.
    await expect.poll(() => leader.locator('td').last().textContent(), { timeout: 15_000 }).toBe('3');
    // The funnel: visits, unique visits (one visitor: 1), signups, actions, and revenue (none yet, in
    // the campaign's currency, USD by default).
    const step = (label: string) =>
      page
        .locator('ol.funnel li')
        .filter({ has: page.locator('.step', { hasText: new RegExp(`^${label}$`) }) });
    await expect.poll(() => step('Visits').locator('.value').textContent()).toBe('3');
    expect(await step('Unique visits').locator('.value').textContent()).toBe('1');
    expect(await step('Unique visits').locator('.ratio').textContent()).toBe('33.3 % of visits');
    expect(await step('Signups').locator('.value').textContent()).toBe('0');
    expect(await page.locator('ol.funnel li.revenue .value').textContent()).toBe('$0.00');
    expect(await page.locator('ol.funnel li.revenue .ratio').textContent()).toBe('0 sales');
    // Each bar is scaled to the widest step: visits 3, unique visits 1.
    const visitsBar = (await step('Visits').locator('.fill').boundingBox())?.width ?? 0;
    const uniqueBar = (await step('Unique visits').locator('.fill').boundingBox())?.width ?? 0;
    expect(visitsBar).toBeGreaterThan(100);
    expect(uniqueBar / visitsBar).toBeCloseTo(1 / 3, 1);
    // (Each change of range asks the API again: on a loaded machine that took over the 1 s that
    // expect.poll waits by default.)
    // The range: by hour over the last 7 days (hours are served for 7 days at most), by day over 90,
    // and custom whole UTC days: the same three visits each time.
    const chartTitle = page.locator('figure.chart title');
    const range = page.getByLabel('Range');
    const byHour = page.getByLabel(/^By hour/);
    await range.selectOption('7d');
    await byHour.check();
    await expect.poll(() => chartTitle.textContent(), { timeout: 15_000 }).toMatch(/Visits: 3,.* per hour/);
    await checkAndShoot(page, 'overview');
    await range.selectOption('90d');
    await expect.poll(() => byHour.isDisabled()).toBe(true);
    await expect.poll(() => chartTitle.textContent(), { timeout: 15_000 }).toMatch(/Visits: 3,.* per day/);
    expect(await page.locator('figure.chart tbody tr').count()).toBe(91);
    const today = new Date().toISOString().slice(0, 10);
    await range.selectOption('custom');
    await page.getByLabel('From').fill(today);
    await page.getByLabel('To', { exact: true }).fill(today);
    // One day is short enough for hours again: the choice of hours made above comes back.
    await expect.poll(() => chartTitle.textContent(), { timeout: 15_000 }).toMatch(/Visits: 3,.* per hour/);
    await page.getByLabel('By day').check();
    await expect.poll(() => page.locator('figure.chart tbody tr').count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => chartTitle.textContent(), { timeout: 15_000 }).toMatch(/Visits: 3,.* per day/);

    // The link's mini chart: its visits of the last 14 days.
    await tab('Links').click();
    await page.getByRole('img', { name: `${code}: 3 visits in the last 14 days` }).waitFor();
    await checkAndShoot(page, 'links');

    // Settings: rename.
    await tab('Settings').click();
    const renamed = `${name} (renamed)`;
    await page.getByLabel('Campaign name').fill(renamed);
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByRole('heading', { name: renamed, level: 1 }).waitFor();
    expect((await campaignNow()).name).toBe(renamed);

    // The webhook: a local receiver, signups, sales, refunds and rewards (a new campaign's
    // default, shown checked); not actions (the visits stay in the feed, unsent).
    const rx = await receiver();
    await page.getByLabel(/Webhook URL/).fill(`${rx.url}/dash`);
    await page.getByLabel(/Actions, visits included/).uncheck();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('status').filter({ hasText: 'Webhook saved.' }).waitFor();
    expect(await campaignNow()).toMatchObject({
      webhook_url: `${rx.url}/dash`,
      webhook_events: [
        'referred_user.created',
        'conversion.created',
        'conversion.refunded',
        'reward.created',
        'reward.approved',
        'reward.voided',
        'reward.paid',
        'reward.flagged',
      ],
      webhook_status: 'enabled',
    });
    // A test event, sent now: its result on the page, its POST at the receiver.
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: /Delivered/ })
          .textContent(),
      )
      .toMatch(/^\s*Delivered: HTTP 200 in [\d,]+ ms\s*$/);
    const [test] = await rx.waitFor(1);
    expect(JSON.parse(test!.body)).toMatchObject({ type: 'webhook.test', campaign_id: campaignId });
    await checkAndShoot(page, 'settings');
    // Pause deliveries, and enable them again.
    await page.getByRole('button', { name: 'Pause deliveries' }).click();
    await page.getByRole('button', { name: 'Enable deliveries again' }).waitFor();
    expect((await campaignNow()).webhook_status).toBe('disabled');
    await page.getByRole('button', { name: 'Enable deliveries again' }).click();
    await page.getByRole('button', { name: 'Pause deliveries' }).waitFor();
    expect((await campaignNow()).webhook_status).toBe('enabled');

    // A signup through the API: its event is delivered to the receiver.
    const user = await createReferredUser(code, 'dash-user', account.key);
    const signupEvent = `evt_referred_user_${user.id}`;
    const deliveriesOf = (id: string) => rx.requests.filter((r) => r.headers['webhook-id'] === id);
    await eventually('the signup delivered', () => deliveriesOf(signupEvent)[0], 20_000);

    // The delivery log: the test event and the signup, by status; redeliver the signup.
    await tab('Deliveries').click();
    const rows = page.locator('table.deliveries tbody tr');
    const signupRows = rows.filter({ hasText: signupEvent });
    await expect.poll(() => signupRows.count(), { timeout: 15_000 }).toBe(1);
    expect(await rows.filter({ hasText: 'webhook.test' }).count()).toBe(1);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No failed attempt').waitFor();
    await page.getByLabel('Status').selectOption('succeeded');
    await expect.poll(() => rows.count()).toBe(2);
    await checkAndShoot(page, 'deliveries');
    await signupRows.getByRole('button', { name: `Redeliver ${signupEvent}` }).click();
    await page.getByRole('status').filter({ hasText: 'is queued' }).waitFor();
    await eventually('the redelivery', () => deliveriesOf(signupEvent)[1], 20_000);
    const [first, again] = deliveriesOf(signupEvent);
    expect(again!.body).toBe(first!.body);
    await expect.poll(() => signupRows.count(), { timeout: 15_000 }).toBe(2);

    // A referred user: an unknown id shows the API's message, a known one its link and counters.
    await tab('Referred users').click();
    await page.getByText('to see which link brought them').waitFor();
    const lookUp = async (id: string) => {
      await page.getByLabel('Referred user id').fill(id);
      await page.getByRole('button', { name: 'Look up' }).click();
    };
    await lookUp('nobody-here');
    const missing = await api(
      'GET',
      `/api/v1/referred_user?campaign_id=${campaignId}&referred_user_id=nobody-here`,
      { key: account.key },
    );
    expect(missing.status).toBe(404);
    await expect.poll(() => page.getByRole('alert').textContent()).toBe(missing.body.error.message);
    await lookUp('dash-user');
    await page.getByRole('heading', { name: 'dash-user', level: 2 }).waitFor();
    const facts = page.locator('dl.facts');
    expect(await facts.textContent()).toContain(code);
    expect(await facts.locator('dt:has-text("Link\'s signups") + dd').textContent()).toBe('1');
    expect(await facts.locator('dt:has-text("Referrer") + dd').textContent()).toBe('ada');
    await checkAndShoot(page, 'referred-user');

    // The list of referred users, newest first: who, through which link and referrer, when (local
    // time beside UTC); a second signup through another link of another referrer, then filtered.
    const other = await api('POST', '/api/v1/referral_link', {
      key: account.key,
      body: { campaign_id: campaignId, referrer_id: 'grace' },
    });
    await createReferredUser(other.body.referral_code, 'dash-user-2', account.key);
    await page.reload();
    const userRows = page.locator('table.users tbody tr');
    await expect.poll(() => userRows.count(), { timeout: 15_000 }).toBe(2);
    expect(await userRows.first().textContent()).toContain('dash-user-2');
    expect(await userRows.nth(1).textContent()).toMatch(new RegExp(`dash-user.*${code}.*ada`));
    const local = await userRows.first().locator('.when .local').textContent();
    const utc = await userRows.first().locator('.when .utc').textContent();
    expect(local).toMatch(/ local$/);
    expect(utc).toMatch(/ UTC$/);
    expect(local!.replace(' local', '')).not.toBe(utc!.replace(' UTC', ''));
    await checkAndShoot(page, 'referred-users');
    await userRows.nth(1).getByRole('button', { name: /ada/ }).click();
    await expect.poll(() => userRows.count(), { timeout: 15_000 }).toBe(1);
    expect(await userRows.first().textContent()).toContain('dash-user');
    expect(await page.getByLabel('Show', { exact: true }).inputValue()).toBe('referrer');

    // The events feed, newest first: the signups on top, then the three visits, each with its type.
    // The feed is written by the table stream: wait until it holds the second signup too.
    await eventually(
      'five events in the feed',
      async () =>
        (await api('GET', `/api/v1/events/${campaignId}?limit=10`, { key: account.key })).body.length === 5 ||
        undefined,
      20_000,
    );
    await tab('Events').click();
    const events = page.locator('ol.events > li');
    await expect.poll(() => events.count(), { timeout: 15_000 }).toBe(5);
    expect(await events.first().locator('.kind').textContent()).toBe('signup');
    expect(await events.nth(1).textContent()).toContain(signupEvent);
    expect(await events.last().locator('.kind').textContent()).toBe('visit');
    await page.getByLabel('Type').selectOption('visit');
    await expect.poll(() => events.count()).toBe(3);
    await page.getByLabel('Type').selectOption('signup');
    await expect.poll(() => events.count()).toBe(2);
    await events.nth(1).getByText('Body').click();
    await expect
      .poll(() => events.nth(1).locator('pre').textContent())
      .toContain('"referred_user_id": "dash-user"');
    await page.getByLabel('Type').selectOption('');
    await page.getByRole('button', { name: 'Check for newer events' }).click();
    await page.getByText('No newer event yet.').waitFor();
    await checkAndShoot(page, 'events');

    // Rotate the secret: the new one shown once, copied.
    await tab('Settings').click();
    const before = (await campaignNow()).webhook_secret;
    // A risky action: not styled like Rename, and it asks first (Cancel changes nothing).
    const rotate = page.getByRole('button', { name: 'Rotate the secret…' });
    const colours = async (name: string) =>
      page.getByRole('button', { name, exact: true }).evaluate((b) => {
        type Styles = { getComputedStyle: (e: unknown) => { color: string; backgroundColor: string } };
        const style = (globalThis as unknown as Styles).getComputedStyle(b);
        return `${style.color} on ${style.backgroundColor}`;
      });
    expect(await colours('Rotate the secret…')).not.toBe(await colours('Rename'));
    await rotate.click();
    await page.getByRole('button', { name: 'Cancel' }).first().click();
    expect((await campaignNow()).webhook_secret).toBe(before);
    await rotate.click();
    await checkAndShoot(page, 'settings-rotate-confirm');
    await page.getByRole('button', { name: 'Yes, rotate the secret' }).click();
    const fresh = page.locator('code.secret');
    await fresh.waitFor();
    const secret = await fresh.textContent();
    expect(secret).toMatch(/^whsec_/);
    expect(secret).not.toBe(before);
    expect((await campaignNow()).webhook_secret).toBe(secret);
    await page.getByRole('button', { name: 'Copy the new secret' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await checkAndShoot(page, 'settings-rotated');

    // Back on the campaigns page, the campaign is listed with its figures of the last 30 days.
    await page.getByRole('link', { name: 'Campaigns' }).first().click();
    await page.getByRole('link', { name: renamed, exact: true }).waitFor();
    const listed = page.locator('table.campaigns tbody tr').filter({ hasText: renamed });
    await expect.poll(() => listed.locator('td').nth(1).textContent(), { timeout: 15_000 }).toBe('3');
    await expect.poll(() => listed.locator('td').nth(2).textContent(), { timeout: 15_000 }).toBe('2');
    await checkAndShoot(page, 'campaigns');

    // Delete a campaign: only once its name is typed; then it is gone from the API and the list.
    const doomedName = `Doomed ${Date.now()}`;
    const doomed = await api('POST', '/api/v1/campaign', {
      key: account.key,
      body: { url: 'https://example.com', name: doomedName },
    });
    await page.goto(`${baseUrl()}/dashboard#/campaigns/${doomed.body.id}/settings`);
    await page.getByRole('heading', { name: doomedName, level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete the campaign…' }).click();
    const confirmDelete = page.getByRole('button', { name: 'Delete this campaign' });
    expect(await confirmDelete.isDisabled()).toBe(true);
    await page.getByLabel(/Type the campaign's name/).fill('not its name');
    expect(await confirmDelete.isDisabled()).toBe(true);
    expect((await api('GET', `/api/v1/campaign?id=${doomed.body.id}`, { key: account.key })).status).toBe(
      200,
    );
    await page.getByLabel(/Type the campaign's name/).fill(doomedName);
    await confirmDelete.click();
    await page.getByRole('heading', { name: 'Campaigns', level: 1 }).waitFor();
    await expect
      .poll(
        async () => (await api('GET', `/api/v1/campaign?id=${doomed.body.id}`, { key: account.key })).status,
      )
      .toBe(404);
    await page.getByRole('link', { name: renamed, exact: true }).waitFor();
    expect(await page.getByRole('link', { name: doomedName }).count()).toBe(0);

    // The key: in this tab's sessionStorage only.
    expect(page.url()).not.toContain(account.key);
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain(account.key);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).toContain(account.key);

    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 300_000);

  it("shows revenue in the currency of the campaign: chart, funnel, leaderboard and a user's sales", async () => {
    // Yen has no minor unit: 12,345 minor units are ¥12,345 (a dashboard dividing by 100 shows ¥123.45).
    const key = account.key;
    const campaign = (
      await api('POST', '/api/v1/campaign', {
        key,
        body: {
          url: 'https://example.com/shop',
          name: `Yen sales ${Date.now()}`,
          currency: 'JPY',
          click_ids: true,
        },
      })
    ).body;
    const seller = (
      await api('POST', '/api/v1/referral_link', {
        key,
        body: { campaign_id: campaign.id, referrer_id: 'kenji' },
      })
    ).body;
    const other = (
      await api('POST', '/api/v1/referral_link', {
        key,
        body: { campaign_id: campaign.id, referrer_id: 'yuki' },
      })
    ).body;
    // A visit's click id, then a signup with it: the user records the click.
    const visit = await fetch(seller.share_url, {
      headers: { 'user-agent': BROWSER_UA },
      redirect: 'manual',
    });
    expect(visit.status).toBe(302);
    const clickId = new URL(visit.headers.get('location')!).searchParams.get('rfclid');
    expect(clickId).toBeTruthy();
    const signup = await api('POST', '/api/v1/referred_user', {
      key,
      body: { click_id: clickId, referred_user_id: 'yen-buyer' },
    });
    expect(signup.status).toBe(201);
    await createReferredUser(other.referral_code, 'yen-browser', key);
    // A sale of ¥12,345 and a partial refund of ¥2,345: ¥10,000 net; the other link has signups, no sale.
    const sale = await api('POST', '/api/v1/conversion', {
      key,
      idempotencyKey: crypto.randomUUID(),
      body: {
        campaign_id: campaign.id,
        referred_user_id: 'yen-buyer',
        amount: 12_345,
        external_id: 'order-7',
      },
    });
    expect(sale.status).toBe(201);
    const refund = await api('POST', `/api/v1/conversion/${sale.body.id}/refund`, {
      key,
      idempotencyKey: crypto.randomUUID(),
      body: { amount: 2_345 },
    });
    expect(refund.status).toBe(200);

    const context = await browser.newContext({ viewport: WIDTHS.desktop, locale: 'en-US' });
    const { page, elsewhere, problems } = await openTab(context);
    await page.goto(`${baseUrl()}/dashboard`);
    await signIn(page, key);
    await page.goto(`${baseUrl()}/dashboard#/campaigns/${campaign.id}`);
    await page.getByRole('heading', { name: campaign.name, level: 1 }).waitFor();

    // The funnel and the chart's legend: net revenue in yen, and the one sale.
    const revenueStep = page.locator('ol.funnel li.revenue');
    await expect.poll(() => revenueStep.locator('.value').textContent(), { timeout: 15_000 }).toBe('¥10,000');
    expect(await revenueStep.locator('.ratio').textContent()).toBe('1 sale');
    const legend = page.locator('.legend li.revenue');
    expect(await legend.locator('strong').textContent()).toBe('¥10,000');
    await expect.poll(() => page.locator('figure.chart title').textContent()).toContain('Revenue: ¥10,000');
    expect(await page.locator('figure.chart polyline.s5').count()).toBe(1);
    // The numbers under the chart: today's row has the sale and its net revenue.
    const today = page.locator('figure.chart tbody tr').last();
    expect(await today.locator('td').last().textContent()).toBe('¥10,000');

    // The leaderboard by revenue: the seller's link first, in yen; by sales, one.
    const rankBy = page.locator('section[aria-labelledby="top-title"] select').nth(1);
    await rankBy.selectOption('revenue');
    const leader = page.locator('table.leaderboard tbody tr').first();
    await expect.poll(() => leader.textContent(), { timeout: 15_000 }).toContain(seller.referral_code);
    await expect.poll(() => leader.locator('td').last().textContent(), { timeout: 15_000 }).toBe('¥10,000');
    expect(await page.locator('table.leaderboard th').last().textContent()).toBe('Revenue');
    await checkAndShoot(page, 'overview-revenue');
    await rankBy.selectOption('conversions');
    await expect.poll(() => leader.locator('td').last().textContent(), { timeout: 15_000 }).toBe('1');
    expect(await page.locator('table.leaderboard th').last().textContent()).toBe('Sales');

    // The buyer's look-up: the click it came from, and the sale with its refund.
    await page
      .getByRole('navigation', { name: 'Campaign' })
      .getByRole('link', { name: 'Referred users' })
      .click();
    await page.getByLabel('Referred user id').fill('yen-buyer');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'yen-buyer', level: 2 }).waitFor();
    const facts = page.locator('dl.facts').last();
    expect(await facts.locator('dt:has-text("Click id") + dd').textContent()).toBe(clickId);
    expect(await facts.locator('dt:has-text("Clicked") + dd .utc').textContent()).toMatch(/ UTC$/);
    const saleRow = page.locator('table.sales tbody tr');
    await expect.poll(() => saleRow.count()).toBe(1);
    const cells = await saleRow.locator('td').allTextContents();
    expect(cells.slice(1)).toEqual(['¥12,345', '¥2,345', 'partly refunded', 'order-7']);
    await checkAndShoot(page, 'referred-user-sales');
    // A user without a sale or a click says so.
    await page.getByLabel('Referred user id').fill('yen-browser');
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { name: 'yen-browser', level: 2 }).waitFor();
    await page.getByText('No sale yet.').waitFor();
    expect(
      await page.locator('dl.facts').last().locator('dt:has-text("Click id") + dd').textContent(),
    ).toMatch(/^none/);

    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('runs a rewards program: the review queue, approve, void, a balance and a payout', async () => {
    const key = account.key;
    // $5.00 to the referrer per signup, on hold 30 days; over 1 signup an hour goes to review.
    const campaign = (
      await api('POST', '/api/v1/campaign', {
        key,
        body: {
          url: 'https://example.com/invite',
          name: `Rewards ${Date.now()}`,
          review_signups_per_hour: 1,
          reward_rules: [
            { id: 'signup-bonus', on: 'referred_user', recipient: 'referrer', type: 'flat', amount: 500 },
          ],
        },
      })
    ).body;
    const link = (
      await api('POST', '/api/v1/referral_link', {
        key,
        body: { campaign_id: campaign.id, referrer_id: 'rita' },
      })
    ).body;
    for (const user of ['friend-1', 'friend-2', 'friend-3'])
      await createReferredUser(link.referral_code, user, key);
    // The first is pending; the two after it crossed the hourly threshold and wait in review.
    await expect
      .poll(async () => (await api('GET', `/api/v1/rewards/${campaign.id}`, { key })).body.length, {
        timeout: 20_000,
      })
      .toBe(3);

    const context = await browser.newContext({ viewport: WIDTHS.desktop, locale: 'en-US' });
    const { page, elsewhere, problems } = await openTab(context);
    await page.goto(`${baseUrl()}/dashboard`);
    await signIn(page, key);
    await page.goto(`${baseUrl()}/dashboard#/campaigns/${campaign.id}/rewards`);
    await page.getByRole('heading', { name: 'Review queue', level: 2 }).waitFor();
    const queue = page.locator('section[aria-labelledby="review-title"] table.rewards tbody tr');
    await expect.poll(() => queue.count(), { timeout: 15_000 }).toBe(2);
    expect(await queue.first().textContent()).toContain('referrer over the signups-per-hour limit');
    await checkAndShoot(page, 'rewards');

    // Approve one from review, void the other with a reason.
    await queue
      .first()
      .getByRole('button', { name: /^Approve/ })
      .click();
    await expect.poll(() => queue.count(), { timeout: 15_000 }).toBe(1);
    await queue.first().getByRole('button', { name: /^Void/ }).click();
    await queue.first().getByLabel('Why void it?').fill('same household');
    await queue.first().getByRole('button', { name: 'Void', exact: true }).click();
    await page.getByText('Nothing to review.').waitFor({ timeout: 15_000 });

    // End the holds of the pending rewards now, from the list filtered by state.
    const list = page.locator('section[aria-labelledby="rewards-title"] table.rewards tbody tr');
    await page.getByLabel('State').selectOption('pending');
    await expect.poll(() => list.count(), { timeout: 15_000 }).toBe(2);
    while ((await list.count()) > 0) {
      const before = await list.count();
      await list
        .first()
        .getByRole('button', { name: /^End hold/ })
        .click();
      await expect.poll(() => list.count(), { timeout: 15_000 }).toBe(before - 1);
    }

    // rita's balance: $10.00 approved, $5.00 voided; the payout, confirmed, pays the $10.00.
    await page.getByLabel('Recipient id').first().fill('rita');
    await page.getByRole('button', { name: 'Show balance' }).click();
    const balance = page.locator('dl.balance');
    await expect.poll(() => balance.locator('dt:has-text("Approved") + dd').textContent()).toBe('$10.00');
    await page.getByRole('button', { name: 'Record a payout…' }).click();
    await page.getByLabel('Reference (optional)').fill('tr_dashboard_1');
    await page.getByRole('button', { name: 'Yes, record the payout' }).click();
    await page.getByRole('status').filter({ hasText: 'recorded' }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole('status').filter({ hasText: 'recorded' }).textContent()).toContain(
      '$10.00 for 2 rewards',
    );
    await expect.poll(() => balance.locator('dt:has-text("Paid") + dd').textContent()).toBe('$10.00');
    const payouts = page.locator('table.payouts tbody tr');
    await expect.poll(() => payouts.count(), { timeout: 15_000 }).toBe(1);
    expect(await payouts.first().textContent()).toContain('tr_dashboard_1');
    await checkAndShoot(page, 'rewards-paid');

    await page.waitForLoadState('networkidle');
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('opens a campaign by id and shows the API message for an unknown one', async () => {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const { page, problems } = await openTab(context);
    await page.goto(`${baseUrl()}/dashboard`);
    await signIn(page, account.key);
    const unknown = crypto.randomUUID();
    await page.getByLabel('Campaign id').fill(unknown);
    await page.getByRole('button', { name: 'Open' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(unknown);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('signs out and says why when the API refuses the key (401) mid-session', async () => {
    const context = await browser.newContext({ viewport: WIDTHS.desktop });
    const { page, problems } = await openTab(context);
    await page.goto(`${baseUrl()}/dashboard`);
    await signIn(page, account.key);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    // The key stops working (revoked, say): the stored one is no longer a key the API knows.
    await page.evaluate(`sessionStorage.setItem('dashboard.api-key', 'rk_refused_${crypto.randomUUID()}')`);
    await page.evaluate(`window.location.hash = '#/campaigns/${crypto.randomUUID()}'`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toBe(
      'Your API key was refused (401); sign in again.',
    );
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
    expect(await page.evaluate(`sessionStorage.getItem('dashboard.api-key')`)).toBeNull();
    // Signing in again works and the reason goes away.
    await signIn(page, account.key);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(await page.getByText('Your API key was refused').count()).toBe(0);
    expect(problems).toEqual([]);
    await context.close();
  });
});
