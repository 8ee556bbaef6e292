/**
 * A customer's typed client: types generated from the document by openapi-typescript
 * (lib/openapi/api-types.ts, `npm run openapi:types`) and openapi-fetch, through the whole flow.
 * Each response is also checked against the document, like every response of the integration
 * tests. And docs/typed-client.md's snippet, as a customer copies it, type-checked and run.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient, { type Middleware } from 'openapi-fetch';
import { afterAll, describe, expect, it } from 'vitest';
import type { components, paths } from '../../lib/openapi/api-types.ts';
import { waitUntil } from '../../tools/wait.ts';
import { baseUrl, TENANT_A } from '../support/api.ts';
import { ResponseValidator } from '../support/response-validator.ts';
import { ROOT } from '../support/stack-process.ts';

type ReferralLink = components['schemas']['ReferralLink'];

const validator = new ResponseValidator();
const checkAgainstDocument: Middleware = {
  async onResponse({ request, response }) {
    const url = new URL(request.url);
    validator.check({
      method: request.method,
      path: `${url.pathname}${url.search}`,
      status: response.status,
      headers: response.headers,
      text: await response.clone().text(),
    });
    return response;
  },
};

describe('openapi-fetch with the generated types', () => {
  it('creates a campaign, a link, a signup and an action, then lists the links', async () => {
    const client = createClient<paths>({ baseUrl: baseUrl(), headers: { 'api-key': TENANT_A.key } });
    client.use(checkAgainstDocument);

    const { data: campaign, error } = await client.POST('/api/v1/campaign', {
      body: { url: 'example.com/spring', name: 'Spring' },
    });
    if (!campaign) throw new Error(`campaign: ${JSON.stringify(error)}`);
    expect(campaign.url).toBe('https://example.com/spring');

    const { data: link } = await client.POST('/api/v1/referral_link', {
      body: { campaign_id: campaign.id, referrer_id: 'alice' },
    });
    if (!link) throw new Error('no link');
    expect(link.referral_link).toBe(`https://example.com/spring?rfa=${link.referral_code}`);
    // What a referrer shares: the visit that counts, on the API's own address here.
    expect(link.share_url).toBe(`${baseUrl()}/r/${link.referral_code}`);

    // A retry-safe signup: the typed client knows the Idempotency-Key header.
    const signupKey = crypto.randomUUID();
    const signupRequest = {
      params: { header: { 'Idempotency-Key': signupKey } },
      body: { referral_code: link.referral_code, referred_user_id: 'bob' },
    };
    const { data: signup } = await client.POST('/api/v1/referred_user', signupRequest);
    expect(signup?.referral_link.total_referrals).toBe(1);
    const retried = await client.POST('/api/v1/referred_user', signupRequest);
    expect(retried.response.status).toBe(201);
    expect(retried.response.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.data).toEqual(signup);

    const { data: action } = await client.POST('/api/v1/action/referred_user', {
      body: {
        campaign_id: campaign.id,
        referred_user_id: 'bob',
        action_type: 'purchase',
        metadata: { amount: 42 },
      },
    });
    expect(action?.referred_user?.referred_user_id).toBe('bob');
    expect(action?.referral_link.total_clicks).toBe(1);

    const { data: links, response } = await client.GET('/api/v1/campaign_referral_links/{campaign_id}', {
      params: { path: { campaign_id: campaign.id }, query: { limit: '10' } },
    });
    const listed: ReferralLink[] = links ?? [];
    expect(listed.map((l) => [l.id, l.total_clicks, l.total_referrals])).toEqual([[link.id, 1, 1]]);
    expect(response.headers.get('x-next-cursor')).toBeNull();

    // The campaign's referred users (endpoint 33), one referrer's, typed down to the link.
    const { data: referred } = await client.GET('/api/v1/referred_users/{campaign_id}', {
      params: { path: { campaign_id: campaign.id }, query: { referrer_id: 'alice', limit: '10' } },
    });
    expect((referred ?? []).map((u) => [u.referred_user_id, u.referral_link.id])).toEqual([['bob', link.id]]);

    // Analytics: the signup and the purchase, counted by the stream a moment later.
    type Series =
      paths['/api/v1/analytics/{campaign_id}']['get']['responses'][200]['content']['application/json'];
    let totals: Series['totals'] | undefined;
    await waitUntil(async () => {
      const { data: series } = await client.GET('/api/v1/analytics/{campaign_id}', {
        params: { path: { campaign_id: campaign.id }, query: { granularity: 'hour' } },
      });
      totals = series?.totals;
      // The actions by type are an item of their own, written beside the series item by the same
      // batch: a read can land between the two writes.
      return totals?.actions === 1 && totals.actions_by_type.purchase === 1 && totals.referred_users === 1;
    }, 30_000);
    expect(totals).toMatchObject({ referred_users: 1, actions: 1, actions_by_type: { purchase: 1 } });
    // The rankings may be counted after the series (within the contract's 60 s).
    const leaders = [{ rank: 1, referrer_id: 'alice', value: 1 }];
    let top: unknown;
    await waitUntil(async () => {
      ({ data: top } = await client.GET('/api/v1/analytics/{campaign_id}/top', {
        params: { path: { campaign_id: campaign.id }, query: { metric: 'referred_users' } },
      }));
      return JSON.stringify(top) === JSON.stringify(leaders);
    }, 60_000);
    expect(top).toEqual(leaders);

    // Errors are typed too: the body of a documented error status.
    const missing = await client.GET('/api/v1/campaign', { params: { query: { id: crypto.randomUUID() } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('campaign_not_found');
  }, 120_000);
});

/** Run a command in the repository; its exit code and output. */
function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
    execFile(command, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) =>
      resolveRun({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const snippetDirs: string[] = [];
afterAll(() => {
  for (const dir of snippetDirs) rmSync(dir, { recursive: true, force: true });
});

describe("docs/typed-client.md's snippet", () => {
  it('compiles, runs against the stack, runs again (a fresh Idempotency-Key each run), and fails loudly', async () => {
    const doc = readFileSync(join(ROOT, 'docs/typed-client.md'), 'utf8');
    const snippet = /<!-- typed-client:snippet -->\n```ts\n([\s\S]*?)```/.exec(doc)?.[1];
    if (!snippet) throw new Error('docs/typed-client.md has no typed-client:snippet block');
    expect(snippet).toContain("'https://<your-api>'");
    // Inside the repository, so that it finds openapi-fetch in node_modules as a customer's would.
    mkdirSync(join(ROOT, 'test-output'), { recursive: true });
    const dir = mkdtempSync(join(ROOT, 'test-output', 'typed-client-'));
    snippetDirs.push(dir);
    // The types a customer generates with openapi-typescript: the committed ones are exactly that.
    copyFileSync(join(ROOT, 'lib/openapi/api-types.ts'), join(dir, 'api-types.ts'));
    const file = join(dir, 'snippet.ts');
    writeFileSync(file, snippet.replace("'https://<your-api>'", JSON.stringify(baseUrl())));

    const tsc = await run(process.execPath, [
      join(ROOT, 'node_modules/typescript/bin/tsc'),
      '--noEmit',
      '--strict',
      '--skipLibCheck',
      '--target',
      'es2022',
      '--module',
      'esnext',
      '--moduleResolution',
      'bundler',
      '--lib',
      'es2022,dom',
      '--types',
      'node',
      file,
    ]);
    expect(tsc.stdout + tsc.stderr, 'the snippet type-checks').toBe('');

    const runSnippet = (key: string) =>
      run(process.execPath, ['--import', 'tsx', file], { ...process.env, API_KEY: key });
    for (const attempt of ['first', 'second']) {
      const out = await runSnippet(TENANT_A.key);
      expect(out.code, `${attempt} run: ${out.stderr}`).toBe(0);
      expect(out.stdout, attempt).toMatch(new RegExp(`^alice shares ${baseUrl()}/r/[A-Z2-9]{8}$`, 'm'));
      expect(out.stdout, attempt).toContain(': 1 clicks, 1 signups');
    }
    // A failed call is an exception with its status, not a silent `undefined`.
    const refused = await runSnippet('rk_not-a-key-000000000000000');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/Error: 401 /);
  }, 120_000);
});
