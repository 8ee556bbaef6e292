/**
 * The README's walkthrough runs as written: its script block, pasted into bash beside a real
 * `npm start` (a fresh DATA_DIR, so its generated dev key is the one the script reads), prints what
 * the README shows under it. The only edits are the ones a second stack on this machine needs: its
 * port, its DATA_DIR and a free port for the webhook receiver. `npm start` meanwhile prints a line
 * per request and every failed webhook attempt with its next retry.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/ports.ts';
import { eventually } from '../../tools/wait.ts';
import { apiAt } from '../support/api.ts';
import { createCampaign } from '../support/records.ts';
import { cleanUpStacks, ROOT, ready, START_TIMEOUT, start, tempDataDir } from '../support/stack-process.ts';

afterAll(cleanUpStacks);

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block right after `<!-- walkthrough:<name> -->` in the README. */
function block(name: string): string {
  const m = new RegExp(`<!-- walkthrough:${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\`\`\``).exec(README);
  if (!m) throw new Error(`README has no walkthrough:${name} block`);
  return m[1]!;
}

/** A README output line as a pattern: `…` stands for any text. */
const pattern = (line: string) =>
  new RegExp(
    `^${line
      .split('…')
      .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*?')}$`,
  );

/** `replace`, failing when the README no longer has the text (the substitution would be silent). */
function substitute(text: string, from: string, to: string): string {
  expect(text, `the walkthrough contains ${from}`).toContain(from);
  return text.replaceAll(from, to);
}

function bash(script: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolveRun) => {
    execFile(
      'bash',
      ['-c', script],
      { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
      (error, stdout, stderr) => resolveRun({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("the README's walkthrough", () => {
  it(
    'runs top to bottom against npm start and prints what the README says; npm start logs each request and each failed webhook attempt',
    async () => {
      const dataDir = tempDataDir();
      const stack = await start({
        PORT: String(await freePort()),
        DATA_DIR: dataDir,
        WEBHOOK_RETRY_DELAYS: '30',
      });
      const { baseUrl, keys } = await ready(stack);
      expect(stack.stdout()).toMatch(/\[\d+\.\d s\] starting DynamoDB Local/);

      const receiverPort = String(await freePort());
      let script = substitute(block('script'), 'B=http://127.0.0.1:3000', `B=${baseUrl}`);
      script = substitute(script, '.data/dev-api-key.json', join(dataDir, 'dev-api-key.json'));
      script = substitute(script, '127.0.0.1:4000', `127.0.0.1:${receiverPort}`);
      script = substitute(script, 'webhook-receiver -- 4000', `webhook-receiver -- ${receiverPort}`);
      const run = await bash(`set -o pipefail\n${script}`);
      // Nothing on stderr but npm's notices about this machine's own npm configuration.
      expect(run.stderr.split('\n').filter((l) => l && !l.startsWith('npm warn'))).toEqual([]);
      expect(run.code).toBe(0);

      // The receiver's lines come as deliveries arrive: in any order among the others.
      const isReceiver = (line: string) => line.startsWith('webhook ');
      const expected = substitute(
        substitute(block('output'), ':4000/', `:${receiverPort}/`),
        'http://127.0.0.1:3000/r/',
        `${baseUrl}/r/`,
      )
        .trimEnd()
        .split('\n');
      const actual = run.stdout.trimEnd().split('\n');
      const inOrder = (lines: string[]) => lines.filter((l) => !isReceiver(l));
      expect(inOrder(actual).length, run.stdout).toBe(inOrder(expected).length);
      for (const [i, line] of inOrder(expected).entries()) {
        expect(inOrder(actual)[i], run.stdout).toMatch(pattern(line));
      }
      const received = actual.filter(isReceiver);
      const wanted = expected.filter(isReceiver);
      expect(received.length, run.stdout).toBe(wanted.length);
      for (const line of wanted) {
        const at = received.findIndex((r) => pattern(line).test(r));
        expect(at, `${line}\nin\n${received.join('\n')}`).toBeGreaterThanOrEqual(0);
        received.splice(at, 1);
      }

      // One line per request on npm start: method, path (no query), status, ms, request id.
      expect(stack.stdout()).toMatch(/^POST \/api\/v1\/campaign 201 \d+\.\d ms \S+$/m);
      expect(stack.stdout()).toMatch(/^GET \/r\/ALICE-SPRING 302 \d+\.\d ms \S+$/m);
      expect(stack.stdout()).not.toMatch(/referred_user_id=bob/);

      // A failed webhook attempt is printed with its status and when it is tried next.
      const api = apiAt(baseUrl, keys[0]!.key);
      const campaign = await createCampaign({ name: 'Refused' }, undefined, api);
      const refusing = await freePort(); // nothing listens there
      const patched = await api('PATCH', `/api/v1/campaign?id=${campaign.id}`, {
        body: { webhook_url: `http://127.0.0.1:${refusing}/hook` },
      });
      expect(patched.status).toBe(200);
      const link = await api('POST', '/api/v1/referral_link', { body: { campaign_id: campaign.id } });
      const action = await api('POST', '/api/v1/action/referral_link', {
        body: { referral_code: link.body.referral_code, action_type: 'share' },
      });
      expect(action.status).toBe(201);
      const failure = await eventually('the failed attempt printed', async () =>
        stack
          .stderr()
          .split('\n')
          .map((l) => (l.startsWith('{') ? JSON.parse(l) : undefined))
          .find((l) => l?.message === 'webhook attempt failed; retrying' && l.campaign_id === campaign.id),
      );
      expect(failure).toMatchObject({ level: 'WARN', attempt: 1 });
      // The 30 s of WEBHOOK_RETRY_DELAYS, with the schedule's ±20 % jitter.
      expect(failure.retry_in_seconds).toBeGreaterThanOrEqual(24);
      expect(failure.retry_in_seconds).toBeLessThanOrEqual(36);
      const due = Date.parse(failure.next_attempt_at) - Date.parse(failure.timestamp);
      expect(Math.abs(due - failure.retry_in_seconds * 1000)).toBeLessThan(1000);
    },
    START_TIMEOUT * 2,
  );
});
